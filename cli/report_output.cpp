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

bool emitReport(const std::vector<Finding>& findings, const std::vector<Note>& toolNotes,
                const OutputOptions& options, bool toStderr) {
  ReportOptions report;
  llvm::SmallString<256> cwd;
  if (!llvm::sys::fs::current_path(cwd)) report.baseDir = std::string(cwd);
  SourceText source;
  if (!options.file.empty()) {
    std::ofstream out(options.file);
    if (!out) {
      toolError("cannot write '" + options.file + "'");
      return false;
    }
    writeReport(out, options.format, findings, report, source, toolNotes);
    return true;
  }
  report.color = options.format == ReportFormat::Text &&
                 options.color.value_or(isatty(toStderr ? STDERR_FILENO : STDOUT_FILENO) != 0);
  writeReport(toStderr ? std::cerr : std::cout, options.format, findings, report, source, toolNotes);
  return true;
}

}  // namespace dtype_lint::cli
