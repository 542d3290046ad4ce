// .dtype-lint.yaml: which rules run, and the shape of the project's gradient
// scaler API. Found by walking up from each analyzed file, or given with --config.
//
//   Rules: ["DL*", "-DL209"]
//   GradScaler:
//     Classes: [GradScaler, LossScaler]
//     Scale:   [scale]
//     Unscale: [unscale_, Unscale_]
//     Step:    [step]
//     Update:  [update]
#pragma once

#include <map>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace dtype_lint::analyzer {

struct ScalerApi {
  std::vector<std::string> classes{"GradScaler"};
  std::vector<std::string> scale{"scale"};
  std::vector<std::string> unscale{"unscale_"};
  std::vector<std::string> step{"step"};
  std::vector<std::string> update{"update"};
};

struct Config {
  std::vector<std::string> rules;  // globs; '-' excludes; empty: every rule
  ScalerApi scaler;
  std::string path;  // where it was read from; empty for the defaults
};

// Reads one config file; a malformed file is an error (one line).
llvm::Expected<Config> readConfig(const std::string& path);
// The nearest .dtype-lint.yaml in the file's directory or its parents; the
// defaults when there is none.
llvm::Expected<Config> configFor(const std::string& sourceFile);
// The config of each file: the one given (--config) for all, else each file's nearest.
llvm::Expected<std::map<std::string, Config>> configsFor(const std::vector<std::string>& files,
                                                         const std::string& givenConfig);

}  // namespace dtype_lint::analyzer
