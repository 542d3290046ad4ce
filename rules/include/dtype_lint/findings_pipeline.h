// The one path every finding takes to a report, whichever front end made it:
// rule selection (a config's Checks:, then --checks), the files reported
// (HeaderFilterRegex, ExcludePaths), WarningsAsErrors, NOLINT suppressions,
// de-duplication and ordering.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/finding.h"
#include "dtype_lint/source_text.h"

namespace dtype_lint {

// Globs as clang-tidy's Checks: "DL1*,-DL107"; later globs win; a '-'
// excludes. No glob, or a first glob that excludes, starts from every rule.
struct RuleSelection {
  std::vector<std::string> globs;

  bool selects(const RuleInfo& rule) const;
  // Whether any glob names the rule, so that "no glob" selects nothing.
  bool names(const RuleInfo& rule) const { return !globs.empty() && selects(rule); }
  // The first glob that names no rule of the catalog (a usage error).
  std::optional<std::string> unmatchedGlob() const;
  // "DL1*,-DL107" (clang-tidy's one-string form), and back; spaces and
  // newlines around the globs are dropped.
  std::string text() const;
  static RuleSelection parse(std::string_view text);
};

// What a configuration says of the findings that reach the report.
struct FindingPolicy {
  RuleSelection checks;
  RuleSelection warningsAsErrors;  // these rules' findings are errors; no glob: none
  // Findings outside the batch's main file (its headers) are kept only where
  // the path matches; unset: all are kept.
  std::optional<std::string> headerFilterRegex;
  std::vector<std::string> excludePaths;  // globs ('*' spans '/'), relative to baseDir or absolute
  std::string baseDir;

  bool excludes(const std::string& path) const;
  // The command line's options on top of a configuration's: checks and
  // warnings-as-errors are appended (later globs win), a header filter replaces.
  FindingPolicy with(const FindingPolicy& commandLine) const;
};

// The findings of one source (a translation unit, a traced run) and its own
// configuration's policy.
struct FindingBatch {
  std::vector<Finding> findings;
  FindingPolicy policy;
  std::string mainFile;  // empty: every file is the batch's own (a traced run)
};

// Keeps the findings each batch's policy with the command line's on top
// selects and no NOLINT comment suppresses, reports each place and rule once
// (a header seen by several translation units, a helper analyzed in several
// contexts, an op repeated every step, every rank of a distributed run: their
// ranks are joined), in location order. Header filters
// must be valid (regexError, checked where they are read).
std::vector<Finding> finalizeFindings(std::vector<FindingBatch> batches, const FindingPolicy& commandLine,
                                      SourceText& source);

// Adds a tool note unless one with the same message at the same file and line is there.
void addToolNote(std::vector<Note>& notes, Note note);

// The message when `regex` is not an extended regular expression; empty when it is.
std::string regexError(const std::string& regex);

}  // namespace dtype_lint
