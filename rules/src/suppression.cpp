#include "dtype_lint/suppression.h"

#include <algorithm>
#include <optional>
#include <string>

namespace dtype_lint {
namespace {

// Does a rule list such as "(DL101, DL2*)" name the rule? No list names every rule.
bool namesRule(std::optional<std::string_view> list, const RuleInfo& rule) {
  if (!list) return true;
  const std::string qualified = qualifiedName(rule);
  std::string_view rest = *list;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trimmed(rest.substr(0, comma));
    if (globMatch(item, rule.id) || globMatch(item, qualified)) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

// Finds `marker` in a comment of this line (`#` in Python, `//` or `/*` else)
// and returns its rule list, if any. Returns false when the marker is absent.
bool findMarker(std::string_view line, std::string_view marker, std::optional<std::string_view>& list, bool python) {
  const size_t start = python ? line.find('#') : std::min(line.find("//"), line.find("/*"));
  if (start == std::string_view::npos) return false;
  size_t at = line.find(marker, start);
  while (at != std::string_view::npos) {
    const size_t after = at + marker.size();
    // NOLINT must not match the prefix of NOLINTNEXTLINE or NOLINTBEGIN.
    if (after < line.size() && line[after] >= 'A' && line[after] <= 'Z') {
      at = line.find(marker, after);
      continue;
    }
    list.reset();
    if (after < line.size() && line[after] == '(') {
      const size_t close = line.find(')', after);
      if (close != std::string_view::npos) list = line.substr(after + 1, close - after - 1);
    }
    return true;
  }
  return false;
}

}  // namespace

bool isSuppressed(const Finding& finding, SourceText& source) {
  const SourceLocation& at = finding.location;
  if (!at.valid() || !finding.rule) return false;
  const bool python = isPythonFile(at.file);
  std::optional<std::string_view> list;
  if (findMarker(source.line(at.file, at.line), "NOLINT", list, python) && namesRule(list, *finding.rule)) return true;
  if (at.line > 1 && findMarker(source.line(at.file, at.line - 1), "NOLINTNEXTLINE", list, python) &&
      namesRule(list, *finding.rule))
    return true;
  // Inside a NOLINTBEGIN region that names the rule and has not ended.
  int open = 0;
  for (unsigned l = 1; l < at.line; ++l) {
    std::string_view text = source.line(at.file, l);
    if (findMarker(text, "NOLINTBEGIN", list, python) && namesRule(list, *finding.rule)) ++open;
    if (findMarker(text, "NOLINTEND", list, python) && namesRule(list, *finding.rule) && open > 0) --open;
  }
  return open > 0;
}

}  // namespace dtype_lint
