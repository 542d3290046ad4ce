#include "run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dtype_lint::testing {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CommandResult runCommand(const std::string& command) {
  static int counter = 0;
  const std::filesystem::path errFile =
      std::filesystem::temp_directory_path() /
      ("dtype_lint_cmd_" + std::to_string(::getpid()) + "_" + std::to_string(++counter));
  CommandResult result;
  FILE* pipe = popen((command + " 2>" + errFile.string()).c_str(), "r");
  std::array<char, 4096> buffer;
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = readFile(errFile.string());
  std::filesystem::remove(errFile);
  return result;
}

}  // namespace dtype_lint::testing
