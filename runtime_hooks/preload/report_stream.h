// Findings written as they are made, one JSON line each, with a single
// write(2) per line: a process that dies right after still leaves them.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "dtype_lint/finding.h"

namespace dtype_lint::runtime {

class ReportStream {
 public:
  // Opens the stream named by DTYPE_LINT_REPORT (appending); stderr when unset.
  void open();
  // Writes a finding unless one with the same rule and location was written,
  // or it has no location in user code.
  void write(const Finding& finding);

 private:
  std::mutex mutex_;
  int fd_ = 2;
  std::set<std::tuple<std::string, unsigned, std::string, std::string>> written_;
};

}  // namespace dtype_lint::runtime
