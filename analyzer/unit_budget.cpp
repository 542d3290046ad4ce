#include "unit_budget.h"

#include <fmt/format.h>

#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"

namespace dtype_lint::analyzer {

UnitBudget::Clock UnitBudget::start() const {
  auto deadline = std::chrono::steady_clock::time_point::max();
  constexpr double kYear = 365.0 * 24 * 3600;  // beyond it (inf too): no limit, not an overflow
  if (seconds > 0 && seconds < kYear)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  return Clock{deadline, this};
}

std::optional<std::string> UnitBudget::Clock::spent(const clang::ASTContext& context) const {
  if (std::chrono::steady_clock::now() > deadline) return fmt::format("its time budget of {:g} s", budget->seconds);
  if (budget->memoryBytes) {
    const clang::SourceManager& sm = context.getSourceManager();
    const uint64_t used = context.getASTAllocatedMemory() + context.getSideTableAllocatedMemory() +
                          sm.getContentCacheSize() + sm.getDataStructureSizes() +
                          sm.getMemoryBufferSizes().malloc_bytes;
    if (used > budget->memoryBytes)
      return fmt::format("its memory budget of {} MiB ({} MiB used)", budget->memoryBytes >> 20, used >> 20);
  }
  return std::nullopt;
}

}  // namespace dtype_lint::analyzer
