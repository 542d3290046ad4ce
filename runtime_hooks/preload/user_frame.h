// The first frame of the call stack that is the user's code (not LibTorch,
// not the C++ runtime, not dtype-lint), symbolized to file:line with libdw.
#pragma once

#include <optional>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint::runtime {

// skipUserFrames: user frames to pass over first (the annotating method itself).
std::optional<SourceLocation> firstUserFrame(int skipUserFrames = 0);

// The user's place now, kept to be resolved later: Python's line at once,
// native return addresses as they are (symbolized only when used).
struct CapturedSite {
  std::optional<SourceLocation> python;
  bool inLibraryCode = false;  // Python's line called the library code that was running
  std::vector<void*> frames;
};
CapturedSite captureSite();
std::optional<SourceLocation> firstUserFrameOf(const CapturedSite& site);
// Whether LibTorch's C++ frontend (torch::nn modules and functionals) issued
// the running op, not the user's code calling an op itself: `fc->forward(x)`
// adds its bias in place under LibTorch's own name.
bool issuedByLibTorchFrontend();

}  // namespace dtype_lint::runtime
