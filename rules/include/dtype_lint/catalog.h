// The rule catalog: IDs and names are a public contract (configs,
// suppressions and baselines name them). Never renumber.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dtype_lint {

enum class Severity { Note, Warning, Error };
std::string_view name(Severity s);

struct RuleInfo {
  std::string_view id;    // "DL101"
  std::string_view name;  // "mixed-dtype-matmul"
  Severity severity;
  std::string_view shortDescription;
  std::string_view fullDescription;
  bool checkedStatically;  // implemented by the analyzer today
  bool checkedAtRuntime;   // implemented by the runtime hooks today
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
// Looks a rule up by ID ("DL101"); nullptr when there is no such rule.
const RuleInfo* findRule(std::string_view id);
// "DL101-mixed-dtype-matmul", as shown in brackets after each message.
std::string qualifiedName(const RuleInfo& rule);
// The docs page shipped with the project, relative to its root.
std::string docsPath(const RuleInfo& rule);

}  // namespace dtype_lint
