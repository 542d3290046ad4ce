// Findings written as they are made, one JSON line each, with a single
// write(2) per line: a process that dies right after still leaves them.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "dtype_lint/finding.h"

namespace dtype_lint::runtime {

class ReportStream {
 public:
  // DTYPE_LINT_RUN_DIR: each process (a forked or exec'd child too) writes
  // <dir>/<pid>.jsonl, for `dtype-lint run` to merge. Else DTYPE_LINT_REPORT
  // (appending); else stderr. Each finding carries the process's RANK when a
  // distributed launcher (torchrun) set one.
  void open();
  // Writes a finding unless one with the same rule and location was written,
  // or it has no location in user code.
  void write(const Finding& finding);
  // With a run directory: says that this process checks its ops (LibTorch
  // `major.minor` is traced), so that `run` can tell a run that checked
  // nothing from a clean one.
  void attached(int torchMajor, int torchMinor);

 private:
  int descriptor();  // under mutex_
  void writeLine(const std::string& line);  // under mutex_

  std::mutex mutex_;
  int fd_ = 2;
  std::string runDirectory_;
  pid_t openedBy_ = 0;  // the process fd_ was opened for, with a run directory
  std::optional<unsigned> rank_;
  std::set<std::tuple<std::string, unsigned, std::string, std::string>> written_;
};

}  // namespace dtype_lint::runtime
