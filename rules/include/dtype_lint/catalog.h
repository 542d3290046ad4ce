// The rule catalog, made from rules.def: typed rule handles (a misspelt rule
// is a compile error) and what reports, docs and --list-rules say of each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dtype_lint {

enum class Severity { Note, Warning, Error };
std::string_view name(Severity s);

// A rule, as code names it: RuleId::DL101.
enum class RuleId : uint8_t {
#define DTYPE_LINT_RULE(ID, ...) ID,
#include "dtype_lint/rules.def"
};

// Which front ends check a rule (bits).
enum RuleFrontEnd : unsigned { kStatic = 1u, kCxxRuntime = 2u, kPythonRuntime = 4u };
// Which C++ programs the runtime hooks check a rule in.
enum class CxxRuntimeScope { kAllPrograms, kScalersAnnouncedOrRawAten, kScalersAnnounced };
// "scalers announced with `dtype_lint/annotate.h`"; empty for every program.
std::string_view describe(CxxRuntimeScope scope);

struct RuleInfo {
  RuleId handle;
  std::string_view id;  // "DL101"
  std::string_view name;  // "mixed-dtype-matmul"
  Severity severity;
  unsigned frontEnds;  // RuleFrontEnd bits
  CxxRuntimeScope cxxRuntimeScope;
  std::string_view shortDescription;
  std::string_view fullDescription;

  bool checkedBy(RuleFrontEnd frontEnd) const { return (frontEnds & frontEnd) != 0; }
  bool checkedStatically() const { return checkedBy(kStatic); }
};

// The catalog as a range (C++17: the runtime adapter builds with LibTorch's standard).
struct RuleRange {
  const RuleInfo* first;
  size_t count;
  const RuleInfo* begin() const { return first; }
  const RuleInfo* end() const { return first + count; }
  size_t size() const { return count; }
};
RuleRange ruleCatalog();
const RuleInfo& ruleInfo(RuleId rule);
// Looks a rule up by the ID text of a config, report or command line
// ("DL101"); nullptr when there is no such rule.
const RuleInfo* findRule(std::string_view id);
// "¹" for the scope of value 1, ...; empty for every program.
std::string_view footnoteMark(CxxRuntimeScope scope);
// "static, C++ runtime¹, Python runtime" with scopeMarks; "planned" where none checks it.
// scopeMarks: a footnote mark per C++ runtime scope (empty: the scope in parentheses).
std::string frontEndsText(const RuleInfo& rule, bool scopeMarks = false);
// "DL101-mixed-dtype-matmul", as shown in brackets after each message.
std::string qualifiedName(const RuleInfo& rule);
// The docs page shipped with the project, relative to its root.
std::string docsPath(const RuleInfo& rule);

}  // namespace dtype_lint
