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
//   RuntimeOptions:            # `dtype-lint run`: cadence and thresholds of DL301-DL303
//     NonFiniteSkippedSteps: 8
//     UnderflowShare: 0.05
//     GradientCheckEvery: 1
//     CastCheckEvery: 16
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
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

// What the runtime hooks read from their environment (rules/numeric_health.h);
// unset: the hooks' defaults.
struct RuntimeOptions {
  std::optional<unsigned> nonFiniteSkippedSteps;
  std::optional<double> underflowShare;
  std::optional<unsigned> gradientCheckEvery;
  std::optional<unsigned> castCheckEvery;
};

struct Config {
  std::vector<std::string> rules;  // globs; '-' excludes; empty: every rule
  ScalerApi scaler;
  RuntimeOptions runtime;
  std::string path;  // where it was read from; empty for the defaults
};

// Reads one config file; a malformed file is an error (one line).
llvm::Expected<Config> readConfig(const std::string& path);
// The runtime options as the environment variables the hooks read; an
// option the hooks would refuse is an error naming it.
llvm::Expected<std::vector<std::pair<std::string, std::string>>> runtimeEnvironment(const Config& config);
// The nearest .dtype-lint.yaml in the file's directory or its parents; the
// defaults when there is none.
llvm::Expected<Config> configFor(const std::string& sourceFile);
// The config of each file: the one given (--config) for all, else each file's nearest.
llvm::Expected<std::map<std::string, Config>> configsFor(const std::vector<std::string>& files,
                                                         const std::string& givenConfig);

}  // namespace dtype_lint::analyzer
