#pragma once

namespace dtype_lint::runtime {

// Once the process has LibTorch (linked, or loaded later by `import torch`),
// loads the adapter built against that very LibTorch, building one first if
// there is none: a process must never load a second LibTorch. True when the
// adapter is (already) in.
bool attachAdapterIfLibTorchLoaded();

// Whether the process has a LibTorch (libtorch_cpu) loaded.
bool libTorchLoaded();

}  // namespace dtype_lint::runtime
