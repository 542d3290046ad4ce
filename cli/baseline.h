// Baselines: the findings a project has accepted for now, by fingerprints
// that survive line shifts and unrelated edits (report.h). With one, only new
// findings are reported, so a team can adopt dtype-lint on an old tree and
// still fail CI on every new bug.
#pragma once

#include <string>
#include <vector>

#include "dtype_lint/finding.h"
#include "dtype_lint/source_text.h"
#include "llvm/Support/Error.h"

namespace dtype_lint::cli {

// Writes the findings' fingerprints (with their rule, place and message, for
// the reader) as JSON. Paths are relative to baseDir.
llvm::Error writeBaseline(const std::string& path, const std::vector<Finding>& findings, SourceText& source,
                          const std::string& baseDir);

struct BaselineMatch {
  std::vector<Finding> newFindings;  // not in the baseline, in their order
  size_t entries = 0;                // in the baseline
  size_t gone = 0;                   // baseline entries no finding matches any more
};

llvm::Expected<BaselineMatch> matchBaseline(const std::string& path, std::vector<Finding> findings,
                                            SourceText& source, const std::string& baseDir);

}  // namespace dtype_lint::cli
