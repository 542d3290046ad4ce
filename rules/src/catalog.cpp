#include "dtype_lint/catalog.h"

namespace dtype_lint {
namespace {

constexpr RuleInfo kRules[] = {
#define DTYPE_LINT_RULE(ID, NAME, SEVERITY, FRONT_ENDS, SCOPE, SHORT, FULL)                                            \
  {RuleId::ID, #ID, NAME, Severity::SEVERITY, FRONT_ENDS, CxxRuntimeScope::SCOPE, SHORT, FULL},
#include "dtype_lint/rules.def"
};
constexpr size_t kRuleCount = sizeof(kRules) / sizeof(kRules[0]);

// RuleId indexes kRules.
constexpr bool handlesIndexTheCatalog() {
  for (size_t i = 0; i < kRuleCount; ++i)
    if (static_cast<size_t>(kRules[i].handle) != i) return false;
  return true;
}
static_assert(handlesIndexTheCatalog());

}  // namespace

std::string_view name(Severity s) {
  switch (s) {
  case Severity::Note: return "note";
  case Severity::Warning: return "warning";
  case Severity::Error: return "error";
  }
  return "warning";
}

std::string_view describe(CxxRuntimeScope scope) {
  switch (scope) {
  case CxxRuntimeScope::kAllPrograms: return "";
  case CxxRuntimeScope::kScalersAnnounced: return "scalers announced with `dtype_lint/annotate.h`";
  case CxxRuntimeScope::kScalersAnnouncedOrRawAten:
    return "scalers announced with `dtype_lint/annotate.h` or built on the raw ATen AMP ops";
  }
  return "";
}

RuleRange ruleCatalog() { return RuleRange{kRules, kRuleCount}; }

const RuleInfo& ruleInfo(RuleId rule) { return kRules[static_cast<size_t>(rule)]; }

const RuleInfo* findRule(std::string_view id) {
  for (const RuleInfo& r : ruleCatalog())
    if (r.id == id) return &r;
  return nullptr;
}

std::string_view footnoteMark(CxxRuntimeScope scope) {
  constexpr std::string_view kMarks[] = {"", "\u00b9", "\u00b2"};
  return kMarks[static_cast<size_t>(scope)];
}

std::string frontEndsText(const RuleInfo& rule, bool scopeMarks) {
  std::string text;
  const auto add = [&text](std::string_view part) { text += (text.empty() ? "" : ", ") + std::string(part); };
  if (rule.checkedBy(kStatic)) add("static");
  if (rule.checkedBy(kCxxRuntime)) {
    add("C++ runtime");
    if (rule.cxxRuntimeScope != CxxRuntimeScope::kAllPrograms)
      text += scopeMarks ? std::string(footnoteMark(rule.cxxRuntimeScope))
                         : " (" + std::string(describe(rule.cxxRuntimeScope)) + ")";
  }
  if (rule.checkedBy(kPythonRuntime)) add("Python runtime");
  return text.empty() ? "planned" : text;
}

std::string qualifiedName(const RuleInfo& rule) { return std::string(rule.id) + "-" + std::string(rule.name); }

std::string docsPath(const RuleInfo& rule) { return "docs/rules/" + std::string(rule.id) + ".md"; }

}  // namespace dtype_lint
