// .dtype-lint.yaml, in clang-tidy's style: which rules run and which findings
// are reported, the shape of the project's gradient scaler API, and the rules'
// options. The nearest file up the tree from each analyzed file wins;
// --config FILE or --config='{inline YAML}' applies one to every file.
//
//   Checks: "-*,DL1*,DL201"       # clang-tidy's syntax; `Rules: [DL1*, DL201]` is the older spelling
//   WarningsAsErrors: "DL2*"
//   HeaderFilterRegex: "src/.*"   # findings in headers: only those whose path matches (default: all)
//   ExcludePaths: ["third_party/*", "*_generated.cpp"]   # relative to the config's directory
//   GradScaler:
//     Classes: [GradScaler, LossScaler]
//     Scale:   [scale]
//     Unscale: [unscale_, Unscale_]
//     Step:    [step]
//     Update:  [update]
//   CheckOptions:                 # `dtype-lint run`'s cadence and thresholds (RuntimeOptions: the older spelling)
//     DL301.NonFiniteSkippedSteps: 8
//     DL303.UnderflowShare: 0.05
//
// Errors (malformed YAML, unknown keys, wrong types, globs naming no rule,
// invalid values) are one line: "file:line:col: error: ...".
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dtype_lint/findings_pipeline.h"
#include "dtype_lint/numeric_health.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace dtype_lint::analyzer {

struct ScalerApi {
  std::vector<std::string> classes{"GradScaler"};
  std::vector<std::string> scale{"scale"};
  std::vector<std::string> unscale{"unscale_"};
  std::vector<std::string> step{"step"};
  std::vector<std::string> update{"update"};
};

// The options a config sets, as the text the runtime hooks parse; absent: the hooks' default.
using RuleOptions = std::map<NumericHealthOption, std::string>;

struct Config {
  FindingPolicy policy;  // Checks, WarningsAsErrors, HeaderFilterRegex, ExcludePaths
  ScalerApi scaler;
  RuleOptions options;
  std::string path;  // where it was read from; empty for the defaults
};

// Reads one config file.
llvm::Expected<Config> readConfig(const std::string& path);
// A config's text; `name` is the file errors point at, `baseDir` where ExcludePaths are relative to.
llvm::Expected<Config> parseConfig(llvm::StringRef text, const std::string& name, const std::string& baseDir);
// --config's value: inline YAML when it starts with '{', else a file.
llvm::Expected<Config> givenConfig(const std::string& value);
// The nearest .dtype-lint.yaml in the file's directory or its parents; the
// defaults when there is none.
llvm::Expected<Config> configFor(const std::string& sourceFile);
// The config of each file: the one given (--config) for all, else each file's nearest.
llvm::Expected<std::map<std::string, Config>> configsFor(const std::vector<std::string>& files,
                                                         const std::string& givenConfig);
// The options as the environment variables the runtime hooks read.
std::vector<std::pair<std::string, std::string>> runtimeEnvironment(const Config& config);
// The config as YAML, every option with its effective value (--dump-config).
std::string dumpConfig(const Config& config);

}  // namespace dtype_lint::analyzer
