#include "report_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "dtype_lint/report.h"

namespace dtype_lint::runtime {

void ReportStream::open() {
  const char* path = std::getenv("DTYPE_LINT_REPORT");
  if (!path || !*path) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) fd_ = fd;
}

void ReportStream::write(const Finding& finding) {
  if (!finding.location.valid()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const SourceLocation& at = finding.location;
  if (!written_.emplace(at.file, at.line, at.symbol, std::string(finding.rule->id)).second) return;
  const std::string line = findingToJsonLine(finding) + "\n";
  // One write per line: O_APPEND keeps lines of forked children whole.
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

}  // namespace dtype_lint::runtime
