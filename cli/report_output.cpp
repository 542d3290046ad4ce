#include "report_output.h"

#include <unistd.h>

#include <fstream>
#include <iostream>

#include "dtype_lint/source_text.h"
#include "llvm/Support/FileSystem.h"

namespace dtype_lint::cli {

int toolError(const std::string& message) {
  std::cerr << "dtype-lint: error: " << message << '\n';
  return 2;
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
  } else {
    report.color = options.format == ReportFormat::Text &&
                   options.color.value_or(isatty(toStderr ? STDERR_FILENO : STDOUT_FILENO) != 0);
    writeReport(toStderr ? std::cerr : std::cout, options.format, findings, report, source, toolNotes);
  }
  // Findings just recorded in a baseline are accepted: nothing new to fail on.
  if (!options.writeBaseline.empty()) findings.clear();
  return findings;
}

}  // namespace dtype_lint::cli
