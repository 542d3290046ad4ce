#include "dtype_lint/findings_pipeline.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "dtype_lint/suppression.h"

namespace dtype_lint {
namespace {

bool matches(std::string_view pattern, const RuleInfo& rule) {
  return globMatch(pattern, rule.id) || globMatch(pattern, qualifiedName(rule));
}

std::string_view patternOf(const std::string& glob) {
  return !glob.empty() && glob.front() == '-' ? std::string_view(glob).substr(1) : std::string_view(glob);
}

}  // namespace

bool RuleSelection::selects(const RuleInfo& rule) const {
  if (globs.empty()) return true;
  bool selected = false;
  for (const std::string& g : globs)
    if (matches(patternOf(g), rule)) selected = g.front() != '-';
  return selected;
}

std::optional<std::string> RuleSelection::unmatchedGlob() const {
  for (const std::string& g : globs) {
    const auto catalog = ruleCatalog();
    if (std::none_of(catalog.begin(), catalog.end(), [&](const RuleInfo& r) { return matches(patternOf(g), r); }))
      return g;
  }
  return std::nullopt;
}

std::vector<Finding> finalizeFindings(std::vector<FindingBatch> batches, const RuleSelection& selection,
                                      SourceText& source) {
  std::vector<Finding> out;
  std::set<std::tuple<std::string, unsigned, unsigned, std::string, std::string_view>> seen;
  for (FindingBatch& batch : batches)
    for (Finding& f : batch.findings) {
      if (!selection.selects(*f.rule) || !batch.selection.selects(*f.rule) || isSuppressed(f, source)) continue;
      if (!seen.emplace(f.location.file, f.location.line, f.location.column, f.location.symbol, f.rule->id).second)
        continue;
      out.push_back(std::move(f));
    }
  std::stable_sort(out.begin(), out.end(), locationOrder);
  return out;
}

}  // namespace dtype_lint
