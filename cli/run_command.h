// `dtype-lint run [options] -- program args...`: runs a program under the
// runtime hooks, passing its stdio, signals and exit code through, and
// reports what the hooks found.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dtype_lint/findings_pipeline.h"
#include "report_output.h"

namespace dtype_lint::cli {

struct RunOptions {
  std::optional<int> errorExitCode;  // the exit code when there are findings
  // The config's rule options, for the hooks; a variable the user set wins.
  std::vector<std::pair<std::string, std::string>> environment;
  FindingPolicy policy;  // the config's
};

// program: argv of the program, null-terminated.
int runUnderHooks(char** program, const RunOptions& run, const FindingPolicy& commandLine, const OutputOptions& output);

}  // namespace dtype_lint::cli
