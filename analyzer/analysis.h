// Runs the dtype-flow analysis over translation units and turns its events
// into findings with the rule engines of rules/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "clang/Tooling/CompilationDatabase.h"
#include "config.h"
#include "dtype_lint/finding.h"

namespace dtype_lint::analyzer {

struct TranslationUnitReport {
  std::string file;
  unsigned compileErrors = 0;
  std::string firstError;
  bool parsed = false;
};

struct AnalysisResult {
  std::vector<Finding> findings;  // deduplicated, suppressions applied, in location order
  std::vector<TranslationUnitReport> units;
};

struct AnalysisOptions {
  unsigned jobs = 1;
  std::vector<std::string> ruleGlobs;       // from the command line; empty: every rule
  std::map<std::string, Config> configs;    // per file; the defaults where absent
  std::string cacheDirectory;               // empty: no caches
  bool usePreamble = true;                  // LibTorch's headers from a shared PCH
  bool useResultCache = true;               // unchanged TUs are not parsed again
};

AnalysisResult analyze(const clang::tooling::CompilationDatabase& database, const std::vector<std::string>& files,
                       const AnalysisOptions& options);

}  // namespace dtype_lint::analyzer
