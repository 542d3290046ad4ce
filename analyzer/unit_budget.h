// A translation unit's share of time and memory (--tu-time-limit,
// --tu-memory-limit). It is checked as each top-level declaration is parsed
// and before each function is analyzed, so a TU past it ends early with a
// note instead of holding up the run.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace clang {
class ASTContext;
}

namespace dtype_lint::analyzer {

struct UnitBudget {
  double seconds = 0;  // 0: no time limit
  uint64_t memoryBytes = 0;  // of the TU's AST, its side tables and its source buffers; 0: no limit

  // The budget of a TU whose parse starts now.
  struct Clock {
    std::chrono::steady_clock::time_point deadline;
    const UnitBudget* budget;
    // Why the TU is past its budget ("its time budget of 5 s"), or nothing.
    std::optional<std::string> spent(const clang::ASTContext& context) const;
  };
  Clock start() const;
};

}  // namespace dtype_lint::analyzer
