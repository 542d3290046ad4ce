// Which translation units to analyze, and with which flags: the compilation
// database given with -p or found next to the inputs, plus fallback flags for
// files outside it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/Error.h"

namespace dtype_lint::analyzer {

struct WorkList {
  std::unique_ptr<clang::tooling::CompilationDatabase> database;  // answers for every file below
  std::string databasePath;  // empty when none was found
  std::vector<std::string> files;  // absolute, sorted, unique
  std::vector<std::string> outsideDatabase;  // analyzed with fallbackFlags()
  std::vector<std::string> pythonFiles;  // absolute, sorted, unique: the Python front end's
  std::vector<std::string> named;  // the files named as inputs (not found under a directory)
  size_t missingFiles = 0;  // database entries under the inputs whose files do not exist
  std::string firstMissingFile;
};

// Errors are one line each, for the user.
llvm::Expected<WorkList> selectWork(const std::vector<std::string>& paths, const std::string& buildDir);

}  // namespace dtype_lint::analyzer
