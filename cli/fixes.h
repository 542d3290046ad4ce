// --fix and --export-fixes: the findings' fix-its applied to the files, or
// written as clang-apply-replacements reads them (clang-tidy's format).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "dtype_lint/finding.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Error.h"

namespace dtype_lint::cli {

// Writes the fixes of the findings that have one as a YAML diagnostics file.
llvm::Error exportFixes(const std::string& path, const std::vector<Finding>& findings);

// Applies each finding's fix whole, in the findings' order; a fix whose edits
// overlap one already taken is left for the next run, one in a file modified
// after `analyzedAt` is not applied (the file goes into `changedSince`). The
// number applied.
llvm::Expected<size_t> applyFixes(const std::vector<Finding>& findings, llvm::sys::TimePoint<> analyzedAt,
                                  std::set<std::string>& changedSince);

}  // namespace dtype_lint::cli
