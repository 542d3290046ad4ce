#pragma once

#include <optional>

#include "dtype_lint/finding.h"

namespace dtype_lint::runtime {

// The innermost Python frame of this thread outside torch, the standard
// library, site-packages and dtype-lint's own hooks: the user's line.
std::optional<SourceLocation> userPythonFrame();

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
