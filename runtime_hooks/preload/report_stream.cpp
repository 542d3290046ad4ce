#include "report_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "dtype_lint/report.h"

namespace dtype_lint::runtime {

void ReportStream::open() {
  if (const char* rank = std::getenv("RANK"); rank && *rank) {
    char* end = nullptr;
    const unsigned long parsed = std::strtoul(rank, &end, 10);
    if (*end == '\0' && *rank != '-') rank_ = unsigned(parsed);
  }
  if (const char* dir = std::getenv("DTYPE_LINT_RUN_DIR"); dir && *dir) {
    runDirectory_ = dir;
    return;
  }
  const char* path = std::getenv("DTYPE_LINT_REPORT");
  if (!path || !*path) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) fd_ = fd;
}

int ReportStream::descriptor() {
  if (runDirectory_.empty() || openedBy_ == getpid()) return fd_;
  // First finding of this process (a forked child inherits its parent's file: it gets its own).
  if (openedBy_) ::close(fd_);
  openedBy_ = getpid();
  const std::string path = runDirectory_ + "/" + std::to_string(openedBy_) + ".jsonl";
  // No file (a daemon outliving `dtype-lint run`, which removed the directory):
  // the finding is dropped, never written into the program's own stderr.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  return fd_;
}

void ReportStream::write(const Finding& finding) {
  if (!finding.location.valid()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const SourceLocation& at = finding.location;
  if (!written_.emplace(at.file, at.line, at.symbol, std::string(finding.rule->id)).second) return;
  Finding ranked = finding;
  if (rank_) ranked.ranks = {*rank_};
  writeLine(findingToJsonLine(ranked) + "\n");
}

void ReportStream::attached(int torchMajor, int torchMinor) {
  if (runDirectory_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  writeLine(attachedJsonLine(torchMajor, torchMinor) + "\n");
}

void ReportStream::writeLine(const std::string& line) {
  const int fd = descriptor();
  if (fd < 0) return;
  // One write per line: O_APPEND keeps lines whole.
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

}  // namespace dtype_lint::runtime
