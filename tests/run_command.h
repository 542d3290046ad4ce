// Running a command line the way a user's shell would, for the CLI and
// runtime tests: its exit code (128+signal when killed), stdout and stderr.
#pragma once

#include <string>

namespace dtype_lint::testing {

struct CommandResult {
  int exitCode = -1;
  std::string out, err;
};

CommandResult runCommand(const std::string& command);
std::string readFile(const std::string& path);

}  // namespace dtype_lint::testing
