// Paths chosen by runtime flags. A root whose paths test flags the analysis
// cannot evaluate (a config's bool set from the command line, a bool
// parameter) is analyzed once per assignment of those flags: a bug on the path
// `use_half` selects is found on that one concrete path, and branches on the
// same flag agree instead of joining into "Half or Float". A finding that
// holds only under some assignments says which, as the Clang Static Analyzer
// names the conditions on a path.
#pragma once

#include <string>
#include <vector>

#include "dtype_lint/configurations.h"
#include "dtype_lint/finding.h"
#include "flow/translation_unit.h"
#include "clang/AST/Decl.h"

namespace dtype_lint::analyzer::flow {

// A bool flag, or a setting (settings.h) with the values the program names for it.
struct RuntimeFlag {
  const clang::ValueDecl* decl;  // canonical
  std::string spelling;  // as the first test spells it, quoted: 'cfg_.use_amp', 'cfg.precision'
  SourceLocation firstTest;
  std::vector<std::string> values;  // a setting's, in the order the program names them; empty for a flag
  bool closed = false;  // a setting that holds no other value (a dtype the program sets)
  bool choosesDtype = false;  // looked up in a map of dtypes: it decides precision

  // A flag: false, true. A setting: each named value, then any other value unless closed.
  size_t choices() const { return values.empty() ? 2 : values.size() + (closed ? 0 : 1); }
  FlagAssumption assume(size_t choice) const;
  // "true", "\"fp16\"", "none of \"fp16\", \"bf16\"".
  std::string describe(size_t choice) const;
  // Its choices as the rule core's configurations (dtype_lint/configurations.h) name them.
  SettingChoices settingChoices() const;
};

// The flags and settings that decide some work on the paths of `root` and of
// the user functions it calls, nearest first: bools no code sets to a
// constant and whose value is not known, strings and enums compared with
// values the program names or looked up in its maps. Most important first, at
// most the limits' maxRuntimeFlags, and as many as keep the configurations
// (dtype_lint/configurations.h) within maxConfigurations; `capped` says
// whether some were left out.
std::vector<RuntimeFlag> runtimeFlags(const clang::FunctionDecl* root, TranslationUnitAnalysis& tu, bool& capped);

}  // namespace dtype_lint::analyzer::flow
