// Runs the dtype-flow analysis over translation units and turns its events
// into findings with the rule engines of rules/.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "caches.h"
#include "config.h"
#include "dtype_lint/finding.h"
#include "dtype_lint/findings_pipeline.h"
#include "unit_budget.h"
#include "clang/Tooling/CompilationDatabase.h"

namespace dtype_lint::analyzer {

struct TranslationUnitReport {
  std::string file;
  unsigned compileErrors = 0;
  std::string firstError;  // the first fatal error if there is one, else the first error
  bool fatal = false;  // the parse stopped there: only the code before it was analyzed
  bool parsed = false;
  std::string failure;  // why the TU could not be analyzed ("the analysis crashed"); empty when it was
};

struct AnalysisResult {
  std::vector<Finding> findings;  // through the findings pipeline (selected, unsuppressed, once, in order)
  std::vector<TranslationUnitReport> units;
  std::vector<Note> toolNotes;  // what the analysis says of itself: functions it cut short
};

struct AnalysisOptions {
  unsigned jobs = 1;
  FindingPolicy commandLine;  // --checks, --warnings-as-errors, --header-filter
  std::map<std::string, Config> configs;  // per file; the defaults where absent
  std::string cacheDirectory;  // empty: no caches
  bool usePreamble = true;  // LibTorch's headers from a shared PCH
  uint64_t preambleSizeLimit = PreambleCache::kDefaultSizeLimit;  // bytes of PCHs kept
  bool useResultCache = true;  // unchanged TUs are not parsed again
  size_t maxLinkedFiles = 8;  // files defining a TU's callees analyzed with it (linked_units.h)
  UnitBudget unitBudget;  // each TU's time and memory (--tu-time-limit, --tu-memory-limit)
  // Called as each translation unit's analysis ends, from the worker threads
  // (one call at a time): how many are done, of how many, and which.
  std::function<void(size_t done, size_t total, const std::string& file)> onUnitDone;
};

AnalysisResult analyze(const clang::tooling::CompilationDatabase& database, const std::vector<std::string>& files,
                       const AnalysisOptions& options);

}  // namespace dtype_lint::analyzer
