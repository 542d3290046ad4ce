// The one report writer of both subcommands: the baseline applied or written,
// a format, a file or the console, color only for text on a terminal (or when
// asked for).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baseline.h"
#include "dtype_lint/finding.h"
#include "dtype_lint/report.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace dtype_lint::cli {

struct OutputOptions {
  ReportFormat format = ReportFormat::Text;
  std::string file;  // empty: the console stream
  std::optional<bool> color;  // unset: when the console stream is a terminal
  std::optional<Baseline> baseline;  // report only the findings it does not hold
  std::string writeBaseline;  // record the findings here
};

// Writes the report; the findings it holds (the new ones, with a baseline),
// or nothing after a one-line error on stderr (a file that cannot be read or
// written). Paths under the working directory are written relative to it.
std::optional<std::vector<Finding>> emitReport(std::vector<Finding> findings, const std::vector<Note>& toolNotes,
                                               const OutputOptions& options, bool toStderr);

// "dtype-lint: error: <message>" on stderr; the tool-error exit code, 2.
int toolError(const std::string& message);

// Closes a file the run wrote; a failed write (a full disk) as "cannot write
// <what>: <why>", not as raw_fd_ostream's fatal error at destruction.
llvm::Error closeWritten(llvm::raw_fd_ostream& out, const std::string& what);

}  // namespace dtype_lint::cli
