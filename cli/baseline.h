// Baselines: the findings a project has accepted for now, by fingerprints
// that survive line shifts and unrelated edits (report.h). With one, only new
// findings are reported, so a team can adopt dtype-lint on an old tree and
// still fail CI on every new bug.
#pragma once

#include <map>
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

struct Baseline {
  std::map<std::string, size_t> fingerprints;  // each with how many findings it holds
  size_t entries = 0;
};

// Read before any work, so that a bad file fails fast.
llvm::Expected<Baseline> readBaseline(const std::string& path);

struct BaselineMatch {
  std::vector<Finding> newFindings;  // not in the baseline, in their order
  size_t entries = 0;  // in the baseline
  size_t gone = 0;  // baseline entries no finding matches any more
};

BaselineMatch matchBaseline(const Baseline& baseline, std::vector<Finding> findings, SourceText& source,
                            const std::string& baseDir);

}  // namespace dtype_lint::cli
