#include "dtype_lint/finding.h"

#include <tuple>

namespace dtype_lint {

Finding makeFinding(std::string_view ruleId, std::string message, const SourceLocation& at, std::vector<Note> notes) {
  Finding f;
  f.rule = findRule(ruleId);
  f.severity = f.rule->severity;
  f.message = std::move(message);
  f.location = at;
  f.notes = std::move(notes);
  return f;
}

bool locationOrder(const Finding& a, const Finding& b) {
  const auto& l = a.location;
  const auto& r = b.location;
  return std::tie(l.file, l.line, l.column, a.rule->id) < std::tie(r.file, r.line, r.column, b.rule->id);
}

}  // namespace dtype_lint
