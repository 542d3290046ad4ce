#include "launcher.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "dtype_lint/report.h"
#include "dtype_lint/source_text.h"

namespace dtype_lint::runtime {
namespace {

int fail(const std::string& message) {
  std::cerr << "dtype-lint: error: " << message << '\n';
  return 2;
}

const char* kUsage = "usage: dtype-lint run [--format text|json|sarif] [-o FILE] [--rules GLOBS] "
                     "[--error-exitcode N] -- program args...";

// DTYPE_LINT_PRELOAD, else lib/libdtype_lint_preload.so beside the executable's directory.
std::string preloadPath() {
  if (const char* path = std::getenv("DTYPE_LINT_PRELOAD"); path && *path) return path;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  std::string dir(exe, size_t(n));
  dir = dir.substr(0, dir.rfind('/'));
  for (const char* candidate : {"/../lib/libdtype_lint_preload.so", "/lib/libdtype_lint_preload.so",
                                "/libdtype_lint_preload.so"})
    if (access((dir + candidate).c_str(), R_OK) == 0) return dir + candidate;
  return "";
}

bool selected(const RuleInfo& rule, const std::vector<std::string>& globs) {
  bool keep = globs.empty();
  for (const std::string& g : globs) {
    const bool negative = !g.empty() && g[0] == '-';
    const std::string pattern = negative ? g.substr(1) : g;
    if (globMatch(pattern, rule.id) || globMatch(pattern, qualifiedName(rule))) keep = !negative;
  }
  return keep;
}

}  // namespace

int runUnderHooks(int argc, char** argv) {
  ReportFormat format = ReportFormat::Text;
  std::string output;
  std::vector<std::string> globs;
  std::optional<int> errorExitCode;
  int i = 2;  // argv[0] dtype-lint, argv[1] run
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const std::string& flag) -> std::optional<std::string> {
      if (arg.rfind(flag + "=", 0) == 0) return arg.substr(flag.size() + 1);
      if (arg == flag && i + 1 < argc) return std::string(argv[++i]);
      return std::nullopt;
    };
    if (auto v = value("--format")) {
      if (*v == "text") format = ReportFormat::Text;
      else if (*v == "json") format = ReportFormat::Json;
      else if (*v == "sarif") format = ReportFormat::Sarif;
      else return fail("--format: unknown format '" + *v + "'");
    } else if (auto v = value("-o")) {
      output = *v;
    } else if (auto v = value("--rules")) {
      for (size_t start = 0; start <= v->size();) {
        const size_t comma = v->find(',', start);
        globs.push_back(v->substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (auto v = value("--error-exitcode")) {
      char* end = nullptr;
      const long code = std::strtol(v->c_str(), &end, 10);
      if (!end || *end || code < 0 || code > 255) return fail("--error-exitcode: not an exit code: '" + *v + "'");
      errorExitCode = int(code);
    } else {
      return fail("unknown option '" + arg + "' (" + kUsage + ")");
    }
  }
  if (i + 1 >= argc) return fail(std::string("no program to run (") + kUsage + ")");
  char** program = argv + i + 1;

  const std::string preload = preloadPath();
  if (preload.empty()) return fail("cannot find libdtype_lint_preload.so (set DTYPE_LINT_PRELOAD)");
  char reportPath[] = "/tmp/dtype-lint-run-XXXXXX";
  const int reportFd = mkstemp(reportPath);
  if (reportFd < 0) return fail("cannot create a report file in /tmp");
  close(reportFd);

  std::string ldPreload = preload;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) ldPreload += ":" + std::string(existing);

  // The program's stdio and signals are its own; the launcher only waits.
  const pid_t child = fork();
  if (child < 0) return fail("fork failed");
  if (child == 0) {
    setenv("LD_PRELOAD", ldPreload.c_str(), 1);
    setenv("DTYPE_LINT_REPORT", reportPath, 1);
    execvp(program[0], program);
    std::cerr << "dtype-lint: error: cannot run '" << program[0] << "': " << std::strerror(errno) << '\n';
    _exit(127);
  }
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const int exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  // Findings were written as they were made, whatever way the program ended.
  std::vector<Finding> findings;
  std::ifstream in(reportPath);
  for (std::string line; std::getline(in, line);) {
    Finding f;
    if (findingFromJsonLine(line, f) && selected(*f.rule, globs)) findings.push_back(std::move(f));
  }
  unlink(reportPath);
  std::stable_sort(findings.begin(), findings.end(), locationOrder);

  SourceText source;
  ReportOptions options;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd))) options.baseDir = cwd;
  if (!output.empty()) {
    std::ofstream out(output);
    if (!out) return fail("cannot write '" + output + "'");
    writeReport(out, format, findings, options, source);
  } else {
    options.color = format == ReportFormat::Text && isatty(STDERR_FILENO);
    writeReport(std::cerr, format, findings, options, source);
  }
  if (errorExitCode && !findings.empty()) return *errorExitCode;
  return exitCode;
}

}  // namespace dtype_lint::runtime
