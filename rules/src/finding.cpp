#include "dtype_lint/finding.h"

#include <string>
#include <tuple>

namespace dtype_lint {

Finding makeFinding(RuleId rule, std::string message, const SourceLocation& at, std::vector<Note> notes) {
  Finding f;
  f.rule = &ruleInfo(rule);
  f.severity = f.rule->severity;
  f.message = std::move(message);
  f.location = at;
  f.notes = std::move(notes);
  return f;
}

Edit insertBefore(const SourceLocation& range, std::string text) {
  SourceLocation at = range;
  at.endLine = at.line;
  at.endColumn = at.column - 1;
  return Edit{at, std::move(text)};
}

Edit insertAfter(const SourceLocation& range, std::string text) {
  SourceLocation at = range;
  at.line = at.endLine;
  at.column = at.endColumn + 1;
  return Edit{at, std::move(text)};
}

Edit replace(const SourceLocation& range, std::string text) { return Edit{range, std::move(text)}; }

std::string ranksSuffix(const std::vector<unsigned>& r) {
  if (r.empty()) return "";
  std::string ranges;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    ranges += (ranges.empty() ? "" : ", ") + std::to_string(r[i]) + (j > i ? "\u2013" + std::to_string(r[j]) : "");
    i = j + 1;
  }
  return (r.size() == 1 ? " (rank " : " (ranks ") + ranges + ")";
}

std::string displayMessage(const Finding& finding) { return finding.message + ranksSuffix(finding.ranks); }

bool locationOrder(const Finding& a, const Finding& b) {
  const auto& l = a.location;
  const auto& r = b.location;
  return std::tie(l.file, l.line, l.column, a.rule->id) < std::tie(r.file, r.line, r.column, b.rule->id);
}

}  // namespace dtype_lint
