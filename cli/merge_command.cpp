#include "merge_command.h"

#include "dtype_lint/findings_pipeline.h"
#include "input_files.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

namespace dtype_lint::cli {

int mergeReports(const std::vector<std::string>& reports, const FindingPolicy& config, const FindingPolicy& commandLine,
                 const OutputOptions& output) {
  if (reports.empty()) return toolError("no reports to merge (usage: dtype-lint merge REPORT... [-o FILE])");
  llvm::SmallString<256> cwd;
  llvm::sys::fs::current_path(cwd);
  std::vector<FindingBatch> batches;
  std::vector<Note> toolNotes;
  for (const std::string& path : reports) {
    auto buffer = analyzer::readInputFile(path);
    if (!buffer) return toolError("cannot read '" + path + "': " + llvm::toString(buffer.takeError()));
    if (auto where = analyzer::tooDeeplyNested((*buffer)->getBuffer()))
      return toolError("'" + path + "' is not a dtype-lint report: nested more than " +
                       std::to_string(analyzer::kMaxNesting) + " deep at " + *where);
    FindingBatch batch;
    batch.policy = config;
    std::vector<Note> notes;
    std::string error;
    if (!readReport((*buffer)->getBuffer().str(), std::string(cwd), batch.findings, notes, error))
      return toolError("'" + path + "' is not a dtype-lint report: " + error);
    batches.push_back(std::move(batch));
    for (Note& n : notes) addToolNote(toolNotes, std::move(n));
  }
  SourceText source;
  auto reported = emitReport(finalizeFindings(std::move(batches), commandLine, source), toolNotes, output,
                             /*toStderr=*/false);
  if (!reported) return 2;
  return reported->empty() ? 0 : 1;
}

}  // namespace dtype_lint::cli
