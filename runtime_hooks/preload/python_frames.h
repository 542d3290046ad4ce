#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dtype_lint/finding.h"

namespace dtype_lint::runtime {

// A Python file of the program's own code: under the main script's
// repository (or directory), in no nested repository, and under none of the
// directories the interpreter loads libraries from (its prefixes,
// site-packages, install targets on sys.path, dtype-lint's hooks). Roots come
// from the hooks (dtype_lint_python_source_roots); the verdicts are cached.
bool isUserPythonFile(std::string_view file);

struct PythonFrame {
  SourceLocation at;
  bool callsLibraryCode = false;  // the thread is in library code this frame called
};
// The innermost Python frame of this thread in the program's own code: the user's line.
std::optional<PythonFrame> userPythonFrame();

// A tensor as the Python hooks name it (dtype_lint_python_tensor_namer): a
// module's parameter by its qualified name ("'score.weight'"), with a note
// where its dtype came from (the user's line that made the module, or that
// converted it). Nothing for other tensors, or outside Python.
struct PythonTensorName {
  std::string description;
  std::optional<Note> origin;
};
std::optional<PythonTensorName> namePythonTensor(const void* tensorImpl);

// In a process that is about to start a Python interpreter, puts the hooks'
// sitecustomize first on PYTHONPATH: at start it installs dtype_lint_torch
// (runtime_hooks/python/), which binds the adapter when `import torch` loads
// LibTorch and follows the Python API no ATen op shows (GradScaler's calls,
// clipping, optimizer steps), then runs the sitecustomize it hides, if any.
void pythonStartsWithHooks();

// At the end of a Python process that loaded LibTorch: one note on stderr if
// the hooks never started (the interpreter ignored PYTHONPATH: -E, -I).
void notePythonRanWithoutHooks();

}  // namespace dtype_lint::runtime
