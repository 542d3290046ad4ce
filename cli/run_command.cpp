#include "run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "dtype_lint/report.h"
#include "dtype_lint/source_text.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Program.h"

namespace dtype_lint::cli {
namespace {

// Ends this process as the program ended, by its signal, so that the shell
// and the parent see what they would have seen without the hooks ("Aborted",
// WIFSIGNALED). dtype-lint's own core is not dumped.
void dieBy(int signal) {
  std::cout.flush();
  std::cerr.flush();
  const rlimit noCore{0, 0};
  setrlimit(RLIMIT_CORE, &noCore);
  std::signal(signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  std::raise(signal);
}

// DTYPE_LINT_PRELOAD, else lib/libdtype_lint_preload.so beside the executable's directory.
std::string preloadPath() {
  if (const char* path = std::getenv("DTYPE_LINT_PRELOAD"); path && *path) return path;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  std::string dir(exe, size_t(n));
  dir = dir.substr(0, dir.rfind('/'));
  for (const char* candidate :
       {"/../lib/libdtype_lint_preload.so", "/lib/libdtype_lint_preload.so", "/libdtype_lint_preload.so"})
    if (access((dir + candidate).c_str(), R_OK) == 0) return dir + candidate;
  return "";
}

// Whether `path` is the file `program` names (found on PATH as execvp would).
bool isTheProgram(const std::string& path, const std::string& program) {
  if (program.empty()) return false;
  const llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program);
  std::error_code error;
  return found && std::filesystem::equivalent(path, *found, error);
}

// What the traced processes wrote into the run directory, one JSON line each,
// whatever way they ended: their findings, and whether any checked its ops
// (the hooks attached to its LibTorch). The directory is removed.
struct RunRecords {
  std::vector<Finding> findings;
  bool anyAttached = false;
};

RunRecords readRunDirectory(const std::string& dir) {
  RunRecords records;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      Finding f;
      if (findingFromJsonLine(line, f)) records.findings.push_back(std::move(f));
      else if (isAttachedJsonLine(line)) records.anyAttached = true;
    }
  }
  std::filesystem::remove_all(dir, error);
  return records;
}

// A location the hooks know by its line only (Python's frames): the line's
// code, from its first non-blank character to its last before a comment, for the caret.
void spanTheLine(SourceLocation& at, SourceText& source) {
  if (!at.line || at.column) return;
  std::string_view text = source.line(at.file, at.line);
  if (const size_t comment = text.find(" #"); isPythonFile(at.file) && comment != std::string_view::npos)
    text = text.substr(0, comment);
  const size_t first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
  if (first == std::string_view::npos) return;
  at.column = unsigned(first + 1);
  at.endLine = at.line;
  at.endColumn = unsigned(last + 1);
}

// One note per binary whose findings have no lines (no debug info): how to get them.
std::vector<Note> missingLineNotes(const std::vector<Finding>& findings) {
  std::set<std::string> binaries;
  for (const Finding& f : findings)
    if (!f.location.line && !f.location.symbol.empty()) binaries.insert(f.location.file);
  std::vector<Note> notes;
  for (const std::string& binary : binaries)
    notes.push_back(Note{{},
                         "findings in " + binary +
                             " point at functions or offsets, not lines: it has no debug info; "
                             "build with -g (CMake: RelWithDebInfo) and do not strip it to get file:line"});
  return notes;
}

}  // namespace

int runUnderHooks(char** program, const RunOptions& run, const FindingPolicy& commandLine,
                  const OutputOptions& output) {
  const std::string preload = preloadPath();
  if (preload.empty()) return toolError("cannot find libdtype_lint_preload.so (set DTYPE_LINT_PRELOAD)");
  // DTYPE_LINT_PRELOAD may be a list, as LD_PRELOAD is (a sanitizer's runtime first).
  for (llvm::StringRef rest = preload; !rest.empty();) {
    auto [library, tail] = rest.split(':');
    rest = tail;
    if (!library.empty() && access(library.str().c_str(), R_OK) != 0)
      return toolError("cannot read the preload library '" + library.str() + "': " + std::strerror(errno));
  }
  if (!output.file.empty() && isTheProgram(output.file, program[0]))
    return toolError("-o: '" + output.file + "' is the program to run");
  char runDirectory[] = "/tmp/dtype-lint-run-XXXXXX";
  if (!mkdtemp(runDirectory)) return toolError("cannot create a run directory in /tmp");

  // After what the user preloads already (a sanitizer's runtime must come first).
  std::string ldPreload = preload;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) ldPreload = existing + (":" + preload);

  // Closed by a successful exec: a byte on it says the program never started.
  int execFailed[2];
  if (pipe2(execFailed, O_CLOEXEC) != 0) return toolError("cannot create a pipe");
  // The program's stdio and signals are its own; the launcher only waits.
  const pid_t child = fork();
  if (child < 0) return toolError("fork failed");
  if (child == 0) {
    close(execFailed[0]);
    setenv("LD_PRELOAD", ldPreload.c_str(), 1);
    setenv("DTYPE_LINT_RUN_DIR", runDirectory, 1);
    for (const auto& [name, value] : run.environment) setenv(name.c_str(), value.c_str(), /*overwrite=*/0);
    execvp(program[0], program);
    // As a shell: 127 when there is no such program, 126 when it cannot be run.
    const int error = errno;
    std::cerr << "dtype-lint: error: cannot run '" << program[0] << "': " << std::strerror(error) << '\n';
    (void)!::write(execFailed[1], "x", 1);
    _exit(error == ENOENT ? 127 : 126);
  }
  close(execFailed[1]);
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const int exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  char failure;
  const bool started = ::read(execFailed[0], &failure, 1) == 0;
  close(execFailed[0]);

  RunRecords records = readRunDirectory(runDirectory);
  // An empty report must not pass for a clean run.
  if (started && !records.anyAttached)
    std::cerr << "dtype-lint: note: the hooks attached to no process of this run (none loaded LibTorch, or its "
                 "LibTorch could not be traced): nothing was checked\n";
  std::vector<FindingBatch> batches(1);
  batches.front().findings = std::move(records.findings);
  batches.front().policy = run.policy;
  SourceText source;
  for (Finding& f : batches.front().findings) {
    spanTheLine(f.location, source);
    for (Note& n : f.notes) spanTheLine(n.location, source);
  }
  std::vector<Finding> findings = finalizeFindings(std::move(batches), commandLine, source);
  const std::vector<Note> notes = missingLineNotes(findings);
  // Said on stderr too when the report goes to a file: the user reads it there.
  if (!output.file.empty())
    for (const Note& n : notes) std::cerr << "dtype-lint: note: " << n.message << '\n';
  const auto reported = emitReport(findings, notes, output, /*toStderr=*/true);
  if (!reported) return 2;
  if (run.errorExitCode && !reported->empty()) return *run.errorExitCode;
  if (WIFSIGNALED(status)) dieBy(WTERMSIG(status));
  return exitCode;
}

}  // namespace dtype_lint::cli
