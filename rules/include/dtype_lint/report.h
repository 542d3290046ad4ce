// Report writers: clang-style text, JSON, SARIF 2.1.0, and GitLab's code
// quality JSON (Code Climate's issue format).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "dtype_lint/finding.h"
#include "dtype_lint/source_text.h"

namespace dtype_lint {

enum class ReportFormat { Text, Json, Sarif, CodeClimate };

struct ReportOptions {
  bool color = false;  // ANSI colors in text output
  std::string baseDir;  // paths under it are written relative to it
  std::string toolVersion;  // for SARIF's driver
};

// toolNotes: what the tool itself has to say about the run (a function whose
// analysis was cut short, a translation unit that failed): text notes after
// the findings, JSON "notifications", SARIF toolExecutionNotifications.
void writeReport(std::ostream& out, ReportFormat format, const std::vector<Finding>& findings,
                 const ReportOptions& options, SourceText& source, const std::vector<Note>& toolNotes = {});

// A fingerprint that survives unrelated line shifts: the rule, the file and the
// text of the finding's line (with the ordinal of identical keys in the file).
// Paths under baseDir are hashed relative to it, so clones hash alike.
std::vector<std::string> fingerprints(const std::vector<Finding>& findings, SourceText& source,
                                      const std::string& baseDir);

// One finding as a single JSON line (no newline), and back: how the runtime
// hooks hand findings to the launcher. Parsing returns false on a malformed
// or truncated line.
std::string findingToJsonLine(const Finding& finding);
bool findingFromJsonLine(const std::string& line, Finding& finding);
// The line a traced process writes when the hooks attach to its LibTorch,
// so that `run` can tell a run that checked nothing from a clean one.
std::string attachedJsonLine(int torchMajor, int torchMinor);
bool isAttachedJsonLine(const std::string& line);

// A report this tool wrote as JSON or SARIF, read back (`dtype-lint merge`):
// its findings and tool notes, paths made absolute against baseDir. False,
// with why in `error`, when the text is neither.
bool readReport(const std::string& text, const std::string& baseDir, std::vector<Finding>& findings,
                std::vector<Note>& toolNotes, std::string& error);

extern const char* const kToolVersion;

}  // namespace dtype_lint
