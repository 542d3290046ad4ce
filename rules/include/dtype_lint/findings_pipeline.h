// The one path every finding takes to a report, whichever front end made it:
// rule selection (--rules, a config's Rules:), NOLINT suppressions,
// de-duplication and ordering.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dtype_lint/finding.h"
#include "dtype_lint/source_text.h"

namespace dtype_lint {

// Comma-separated globs as clang-tidy's Checks: "DL1*,-DL107"; later globs
// win; a '-' excludes. No glob selects every rule.
struct RuleSelection {
  std::vector<std::string> globs;

  bool selects(const RuleInfo& rule) const;
  // The first glob that names no rule of the catalog (a usage error).
  std::optional<std::string> unmatchedGlob() const;
};

// The findings of one source (a translation unit, a traced run) and the rules
// its own configuration selects.
struct FindingBatch {
  std::vector<Finding> findings;
  RuleSelection selection;
};

// Keeps the findings both `selection` and their batch's selection choose and
// no NOLINT comment suppresses, reports each place and rule once (a header
// seen by several translation units, a helper analyzed in several contexts,
// an op repeated every step), in location order.
std::vector<Finding> finalizeFindings(std::vector<FindingBatch> batches, const RuleSelection& selection,
                                      SourceText& source);

}  // namespace dtype_lint
