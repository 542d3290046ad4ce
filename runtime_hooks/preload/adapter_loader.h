#pragma once

#include <string>

namespace dtype_lint::runtime {

// Once the process has LibTorch (linked, or loaded later by `import torch`),
// loads the adapter built against that very LibTorch, building one first if
// there is none: a process must never load a second LibTorch. True when the
// adapter is (already) in.
bool attachAdapterIfLibTorchLoaded();

// Whether the process has a LibTorch (libtorch_cpu) loaded.
bool libTorchLoaded();

// Where build_adapter.sh, the sources it compiles and the Python hooks are, laid
// out as in the source tree: share/dtype-lint/ beside the lib/ holding this
// library, or the source tree for the preload of the build tree.
const std::string& dataDirectory();

}  // namespace dtype_lint::runtime
