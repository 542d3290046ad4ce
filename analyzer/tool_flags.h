// Compiler flags: what the analyzer adds to or strips from compile commands,
// and the fallback command for files outside the compilation database.
#pragma once

#include <string>
#include <vector>

#include "clang/Tooling/ArgumentsAdjusters.h"

namespace dtype_lint::analyzer {

// -fsyntax-only, clang's resource directory, no warnings; strips flags only
// GCC understands (PCH, plugins) that would stop clang, and those that only
// change code generation or warnings (-O2, -g, -fPIC, -Wall).
clang::tooling::ArgumentsAdjuster analyzerArgumentsAdjuster();

// C++17 with the LibTorch include directories found when dtype-lint was built.
std::vector<std::string> fallbackFlags();

}  // namespace dtype_lint::analyzer
