#include "report_output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "dtype_lint/source_text.h"
#include "llvm/Support/FileSystem.h"

namespace dtype_lint::cli {

int toolError(const std::string& message) {
  // One line, whatever the names in it hold (a path with a newline).
  std::string line;
  for (const char c : message) {
    if (c == '\n') line += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) line += fmt::format("\\x{:02x}", c);
    else line += c;
  }
  std::cerr << "dtype-lint: error: " << line << '\n';
  return 2;
}

llvm::Error closeWritten(llvm::raw_fd_ostream& out, const std::string& what) {
  out.close();
  if (!out.has_error()) return llvm::Error::success();
  const std::error_code failed = out.error();
  out.clear_error();
  return llvm::createStringError(failed, "cannot write %s: %s", what.c_str(), failed.message().c_str());
}

std::optional<std::vector<Finding>> emitReport(std::vector<Finding> findings, const std::vector<Note>& toolNotes,
                                               const OutputOptions& options, bool toStderr) {
  ReportOptions report;
  llvm::SmallString<256> cwd;
  if (!llvm::sys::fs::current_path(cwd)) report.baseDir = std::string(cwd);
  SourceText source;
  if (!options.writeBaseline.empty()) {
    if (llvm::Error error = writeBaseline(options.writeBaseline, findings, source, report.baseDir)) {
      toolError(llvm::toString(std::move(error)));
      return std::nullopt;
    }
    std::cerr << "dtype-lint: note: wrote " << findings.size() << " finding(s) to the baseline '"
              << options.writeBaseline << "'\n";
  }
  if (options.baseline) {
    BaselineMatch match = matchBaseline(*options.baseline, std::move(findings), source, report.baseDir);
    findings = std::move(match.newFindings);
    if (match.gone)
      std::cerr << "dtype-lint: note: " << match.gone << " of the baseline's " << match.entries
                << " entries no longer occur (fixed, or their line changed); --write-baseline records the "
                   "findings as they are now\n";
  }
  if (!options.file.empty()) {
    std::ofstream out(options.file);
    if (!out) {
      toolError("cannot write '" + options.file + "'");
      return std::nullopt;
    }
    writeReport(out, options.format, findings, report, source, toolNotes);
    out.close();
    if (!out) {  // a full disk: a truncated report must not pass for a clean one
      toolError("cannot write '" + options.file + "': " + std::strerror(errno));
      return std::nullopt;
    }
    // As clang-tidy does: the terminal says what went to the file.
    std::cerr << "dtype-lint: " << findings.size() << (findings.size() == 1 ? " finding" : " findings")
              << " written to '" << options.file << "'\n";
  } else {
    report.color = options.format == ReportFormat::Text &&
                   options.color.value_or(isatty(toStderr ? STDERR_FILENO : STDOUT_FILENO) != 0);
    std::ostream& out = toStderr ? std::cerr : std::cout;
    writeReport(out, options.format, findings, report, source, toolNotes);
    if (!out.flush()) {
      toolError(std::string("cannot write the report to ") + (toStderr ? "stderr" : "stdout") + ": " +
                std::strerror(errno));
      return std::nullopt;
    }
  }
  // Findings just recorded in a baseline are accepted: nothing new to fail on.
  if (!options.writeBaseline.empty()) findings.clear();
  return findings;
}

}  // namespace dtype_lint::cli
