// Settings a program chooses by name at run time: a string (from argv, getenv,
// a config file) or an enum, compared with values the program itself names or
// looked up in a map from those names. The analysis runs once per named value
// (flag_paths.h), as a build matrix would run the program.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

namespace dtype_lint::analyzer::flow {

// `cfg.precision == "fp16"`, `"bf16" != name`, `mode == Mode::kHalf`,
// `strcmp(s, "fp16") == 0`, `!strcmp(s, "fp16")`: the setting read, the value
// named, and whether the test holds when the setting has that value.
// A value a program names for a setting, as a note spells it: a string
// literal ("fp16", quoted), or an enumerator (Precision::kHalf).
std::optional<std::string> namedValue(const clang::Expr* e);

// A value read from a config object by a key the program names
// (`cfg["precision"]`, `cfg.get<std::string>("amp", "off")`,
// `j["amp"].get<std::string>()`, `env_or("AMP", "fp32")`, `cfg.flag("amp")`)
// has no declaration of its own. While a KeyedSettings lives on this thread
// (one per translation unit's analysis), each (config class or reader
// function, key) is one setting: a variable made for it in the ASTContext,
// the same for every read, wherever the config object was passed.
class KeyedSettings {
 public:
  explicit KeyedSettings(clang::ASTContext& context);
  ~KeyedSettings();
  KeyedSettings(const KeyedSettings&) = delete;
  KeyedSettings& operator=(const KeyedSettings&) = delete;

  // The setting `read` stands for; nullptr when it is no keyed read, or no KeyedSettings lives.
  static const clang::ValueDecl* of(const clang::Expr* read);
  static bool isKeyed(const clang::ValueDecl* setting);
  // After a crash the analysis of a TU was recovered from: its KeyedSettings
  // were never destroyed, and none lives on this thread.
  static void forgetAfterCrash();

 private:
  clang::ASTContext& context_;
  // By what is read from, the key, and the type read (`cfg.has("amp")` is no `cfg["amp"]`).
  std::map<std::tuple<const clang::Decl*, std::string, const clang::Type*>, const clang::VarDecl*> settings_;
  KeyedSettings* enclosing_;
};

struct SettingTest {
  const clang::ValueDecl* setting;  // canonical
  const clang::Expr* read;  // where the test reads it
  std::string value;  // as a note spells it: "fp16" (quoted), Precision::kHalf
  bool holdsOnValue;
};
std::optional<SettingTest> settingTest(const clang::Expr* condition);

// `dtypes.at(name)`, `dtypes[name]`, `it->second` of `auto it = dtypes.find(name)`,
// on a map whose initializer names its keys
// (`const std::map<std::string, torch::Dtype> dtypes = {{"fp16", torch::kHalf}, …}`):
// the setting read as the key, and each key with its mapped expression.
struct SettingLookup {
  const clang::ValueDecl* setting;  // canonical
  const clang::Expr* read;
  std::vector<std::pair<std::string, const clang::Expr*>> entries;
};
std::optional<SettingLookup> settingLookup(const clang::Expr* e);
// The entries of such a map looked up with any key (`dtypes.at(argv[i + 1])`).
std::vector<std::pair<std::string, const clang::Expr*>> lookedUpEntries(const clang::Expr* e);

// `it == dtypes.end()` / `it != dtypes.end()` for such a find, `dtypes.count(name)`,
// `dtypes.contains(name)`: whether the setting's value is one of the map's keys.
struct SettingMembership {
  SettingLookup lookup;
  bool holdsWhenFound;
};
std::optional<SettingMembership> settingMembership(const clang::Expr* condition);

// `switch (cfg.precision) { case Precision::kFP16: ... }`: the setting the
// switch reads, and the value each case names (no value for `default:`).
struct SettingSwitch {
  const clang::ValueDecl* setting;  // canonical
  const clang::Expr* read;
  std::vector<std::pair<const clang::SwitchCase*, std::optional<std::string>>> cases;
};
std::optional<SettingSwitch> settingSwitch(const clang::SwitchStmt* s);

}  // namespace dtype_lint::analyzer::flow
