#include "config.h"

#include <optional>

#include <fmt/format.h>

#include "dtype_lint/numeric_health.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"

namespace llvm::yaml {

template <>
struct MappingTraits<dtype_lint::analyzer::ScalerApi> {
  static void mapping(IO& io, dtype_lint::analyzer::ScalerApi& api) {
    io.mapOptional("Classes", api.classes);
    io.mapOptional("Scale", api.scale);
    io.mapOptional("Unscale", api.unscale);
    io.mapOptional("Step", api.step);
    io.mapOptional("Update", api.update);
  }
};

template <>
struct MappingTraits<dtype_lint::analyzer::RuntimeOptions> {
  static void mapping(IO& io, dtype_lint::analyzer::RuntimeOptions& options) {
    using dtype_lint::NumericHealthOption;
    io.mapOptional(configKey(NumericHealthOption::NonFiniteSkippedSteps), options.nonFiniteSkippedSteps);
    io.mapOptional(configKey(NumericHealthOption::UnderflowShare), options.underflowShare);
    io.mapOptional(configKey(NumericHealthOption::GradientCheckEvery), options.gradientCheckEvery);
    io.mapOptional(configKey(NumericHealthOption::CastCheckEvery), options.castCheckEvery);
  }
};

template <>
struct MappingTraits<dtype_lint::analyzer::Config> {
  static void mapping(IO& io, dtype_lint::analyzer::Config& config) {
    io.mapOptional("Rules", config.rules);
    io.mapOptional("GradScaler", config.scaler);
    io.mapOptional("RuntimeOptions", config.runtime);
  }
};

}  // namespace llvm::yaml

namespace dtype_lint::analyzer {

llvm::Expected<Config> readConfig(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read config '%s': %s", path.c_str(),
                                   buffer.getError().message().c_str());
  Config config;
  std::string firstError;
  llvm::yaml::Input input((*buffer)->getBuffer(), nullptr, [](const llvm::SMDiagnostic& d, void* context) {
    auto* error = static_cast<std::string*>(context);
    if (error->empty()) *error = std::to_string(d.getLineNo()) + ": " + d.getMessage().str();
  }, &firstError);
  input >> config;
  if (input.error())
    return llvm::createStringError(input.error(), "malformed config '%s':%s", path.c_str(), firstError.c_str());
  config.path = path;
  return config;
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>> runtimeEnvironment(const Config& config) {
  std::vector<std::pair<std::string, std::string>> env;
  std::string error;
  // Checked as the hooks will read them.
  auto add = [&](NumericHealthOption option, const auto& value) {
    if (!value || !error.empty()) return;
    const std::string text = fmt::format("{}", *value);
    NumericHealthOptions checked;
    if (!setOption(checked, option, text.c_str()))
      error = fmt::format("RuntimeOptions.{}: {} is not {}", configKey(option), text, expectedValue(option));
    env.emplace_back(environmentVariable(option), text);
  };
  add(NumericHealthOption::NonFiniteSkippedSteps, config.runtime.nonFiniteSkippedSteps);
  add(NumericHealthOption::UnderflowShare, config.runtime.underflowShare);
  add(NumericHealthOption::GradientCheckEvery, config.runtime.gradientCheckEvery);
  add(NumericHealthOption::CastCheckEvery, config.runtime.castCheckEvery);
  if (!error.empty())
    return llvm::createStringError(std::errc::invalid_argument, "config '%s': %s", config.path.c_str(), error.c_str());
  return env;
}

llvm::Expected<Config> configFor(const std::string& sourceFile) {
  llvm::SmallString<256> dir(sourceFile);
  llvm::sys::path::remove_filename(dir);
  for (; !dir.empty(); dir = llvm::sys::path::parent_path(dir)) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, ".dtype-lint.yaml");
    if (llvm::sys::fs::exists(candidate)) return readConfig(std::string(candidate));
    if (dir == llvm::sys::path::root_path(dir)) break;
  }
  return Config{};
}

llvm::Expected<std::map<std::string, Config>> configsFor(const std::vector<std::string>& files,
                                                         const std::string& givenConfig) {
  std::map<std::string, Config> configs;
  std::optional<Config> shared;
  if (!givenConfig.empty()) {
    auto config = readConfig(givenConfig);
    if (!config) return config.takeError();
    shared = std::move(*config);
  }
  for (const std::string& file : files) {
    auto config = shared ? llvm::Expected<Config>(*shared) : configFor(file);
    if (!config) return config.takeError();
    configs[file] = std::move(*config);
  }
  return configs;
}

}  // namespace dtype_lint::analyzer
