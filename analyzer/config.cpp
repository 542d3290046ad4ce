#include "config.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "input_files.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"

namespace dtype_lint::analyzer {
namespace {

// The YAML spellings of a config's parts, each checked where it is read so
// that an error points at its own line and column.
struct ChecksText {
  RuleSelection selection;
};
struct RuleGlob {
  std::string text;
};
struct HeaderFilter {
  std::string regex;
};
// CheckOptions (keys "DL303.UnderflowShare") or the older RuntimeOptions ("UnderflowShare").
struct OptionsSection {
  RuleOptions* options;
  bool ruleQualifiedKeys;

  std::string keyOf(NumericHealthOption option) const {
    return ruleQualifiedKeys ? checkOptionKey(option) : configKey(option);
  }
};

// An error message for YAMLIO's scalar hooks, which return a StringRef.
llvm::StringRef scalarError(std::string message) {
  static thread_local std::string error;
  error = std::move(message);
  return error;
}

llvm::StringRef checkGlobs(const RuleSelection& selection) {
  if (auto glob = selection.unmatchedGlob()) return scalarError("'" + *glob + "' matches no rule (see --list-rules)");
  return {};
}

}  // namespace
}  // namespace dtype_lint::analyzer

LLVM_YAML_IS_SEQUENCE_VECTOR(dtype_lint::analyzer::RuleGlob)

namespace llvm::yaml {

using dtype_lint::analyzer::ChecksText;
using dtype_lint::analyzer::HeaderFilter;
using dtype_lint::analyzer::OptionsSection;
using dtype_lint::analyzer::RuleGlob;

template <>
struct ScalarTraits<ChecksText> {
  static void output(const ChecksText& checks, void*, raw_ostream& out) { out << checks.selection.text(); }
  static StringRef input(StringRef scalar, void*, ChecksText& checks) {
    checks.selection = dtype_lint::RuleSelection::parse(scalar);
    return dtype_lint::analyzer::checkGlobs(checks.selection);
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::Double; }
};

template <>
struct ScalarTraits<RuleGlob> {
  static void output(const RuleGlob& glob, void*, raw_ostream& out) { out << glob.text; }
  static StringRef input(StringRef scalar, void*, RuleGlob& glob) {
    glob.text = scalar.str();
    return dtype_lint::analyzer::checkGlobs(dtype_lint::RuleSelection{{glob.text}});
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::Double; }
};

template <>
struct ScalarTraits<HeaderFilter> {
  static void output(const HeaderFilter& filter, void*, raw_ostream& out) { out << filter.regex; }
  static StringRef input(StringRef scalar, void*, HeaderFilter& filter) {
    filter.regex = scalar.str();
    const std::string error = dtype_lint::regexError(filter.regex);
    return error.empty() ? StringRef() : dtype_lint::analyzer::scalarError("not a regular expression: " + error);
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::Double; }
};

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
struct MappingTraits<OptionsSection> {
  static void mapping(IO& io, OptionsSection& section) {
    for (dtype_lint::NumericHealthOption option : dtype_lint::kNumericHealthOptions) {
      std::optional<std::string> value;
      if (auto set = section.options->find(option); set != section.options->end()) value = set->second;
      io.mapOptional(section.keyOf(option).c_str(), value);
      if (!io.outputting() && value) (*section.options)[option] = *value;
    }
  }
  // Checked as the runtime hooks will parse them.
  static std::string validate(IO&, OptionsSection& section) {
    for (const auto& [option, text] : *section.options) {
      dtype_lint::NumericHealthOptions checked;
      if (!setOption(checked, option, text.c_str()))
        return fmt::format("{}: {} is not {}", section.keyOf(option), text, expectedValue(option));
    }
    return "";
  }
};

template <>
struct MappingTraits<dtype_lint::analyzer::Config> {
  static void mapping(IO& io, dtype_lint::analyzer::Config& config) {
    dtype_lint::FindingPolicy& policy = config.policy;
    std::optional<ChecksText> checks, warningsAsErrors;
    std::optional<HeaderFilter> headerFilter;
    if (io.outputting()) {
      checks = ChecksText{policy.checks};
      warningsAsErrors = ChecksText{policy.warningsAsErrors};
      if (policy.headerFilterRegex) headerFilter = HeaderFilter{*policy.headerFilterRegex};
    }
    io.mapOptional("Checks", checks);
    std::vector<RuleGlob> rules;
    if (!io.outputting()) io.mapOptional("Rules", rules);
    io.mapOptional("WarningsAsErrors", warningsAsErrors);
    io.mapOptional("HeaderFilterRegex", headerFilter);
    io.mapOptional("ExcludePaths", policy.excludePaths);
    io.mapOptional("GradScaler", config.scaler);
    OptionsSection olderOptions{&config.options, false}, checkOptions{&config.options, true};
    if (!io.outputting()) io.mapOptional("RuntimeOptions", olderOptions);
    io.mapOptional("CheckOptions", checkOptions);
    if (io.outputting()) return;
    if (checks && !rules.empty())
      io.setError("'Checks' and 'Rules' both given: 'Rules' is the older spelling of 'Checks'");
    if (checks) policy.checks = checks->selection;
    for (const RuleGlob& glob : rules) policy.checks.globs.push_back(glob.text);
    if (warningsAsErrors) policy.warningsAsErrors = warningsAsErrors->selection;
    if (headerFilter && !headerFilter->regex.empty()) policy.headerFilterRegex = headerFilter->regex;
  }
};

}  // namespace llvm::yaml

namespace dtype_lint::analyzer {

// LLVM's YAML reader names its own expectations ("unexpected scalar" is a
// list or a mapping where one value was expected): said in the user's terms.
std::string clearerYamlMessage(llvm::StringRef message) {
  if (message == "unexpected scalar") return "expected one value here, not a list or a mapping";
  if (message == "not a sequence") return "expected a list here ([a, b]), not one value";
  if (message == "not a mapping") return "expected keys and values here (Key: value)";
  if (message == "unknown node kind") return "YAML anchors and aliases (&name, *name) are not supported";
  return message.str();
}

llvm::Expected<Config> parseConfig(llvm::StringRef text, const std::string& name, const std::string& baseDir) {
  if (auto where = tooDeeplyNested(text))
    return llvm::createStringError(std::errc::invalid_argument, "%s:%s: error: nested more than %zu deep", name.c_str(),
                                   where->c_str(), kMaxNesting);
  // YAML is UTF-8 text: other bytes would read back as something else.
  size_t bad = text.find('\0'), invalid = 0;
  if (!llvm::json::isUTF8(text, &invalid)) bad = std::min(bad, invalid);
  if (bad != llvm::StringRef::npos) {
    const llvm::StringRef before = text.take_front(bad);
    const size_t line = before.count('\n') + 1, column = bad - (before.rfind('\n') + 1) + 1;
    return llvm::createStringError(std::errc::illegal_byte_sequence, "%s:%zu:%zu: error: not UTF-8 text", name.c_str(),
                                   line, column);
  }
  Config config;
  std::string firstError;
  llvm::yaml::Input input(
      llvm::MemoryBufferRef(text, name), nullptr,
      [](const llvm::SMDiagnostic& d, void* context) {
        auto* error = static_cast<std::string*>(context);
        if (error->empty())
          *error = fmt::format("{}:{}:{}: error: {}", d.getFilename().str(), d.getLineNo(), d.getColumnNo() + 1,
                               clearerYamlMessage(d.getMessage()));
      },
      &firstError);
  input >> config;
  if (input.error())
    return llvm::createStringError(input.error(), firstError.empty() ? name + ": error: not a config" : firstError);
  // The documents after the first would be ignored without a word. (Empty
  // ones are no documents; nextDocument() must not be called past the last,
  // where a text of none leaves it.)
  if (input.getCurrentNode() && input.nextDocument() && input.setCurrentDocument())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "%s: error: more than one YAML document ('---'); a config is one", name.c_str());
  config.path = name;
  config.policy.baseDir = baseDir;
  return config;
}

llvm::Expected<Config> readConfig(const std::string& path) {
  auto buffer = readInputFile(path);
  if (!buffer)
    return llvm::createStringError(std::make_error_code(std::errc::io_error), "%s: error: cannot read the config: %s",
                                   path.c_str(), llvm::toString(buffer.takeError()).c_str());
  llvm::SmallString<256> dir(path);
  llvm::sys::fs::make_absolute(dir);
  llvm::sys::path::remove_filename(dir);
  return parseConfig((*buffer)->getBuffer(), path, std::string(dir));
}

llvm::Expected<Config> givenConfig(const std::string& value) {
  // Inline YAML is a flow mapping; a file name that does not exist but reads
  // like YAML was meant as one.
  if (!llvm::sys::fs::exists(value) && llvm::StringRef(value).contains(':') &&
      !llvm::StringRef(value).ltrim().startswith("{"))
    return llvm::createStringError(std::errc::invalid_argument,
                                   "<command line>: error: --config: no file '%s'; inline YAML goes in braces: "
                                   "--config='{Checks: \"DL1*\"}'",
                                   llvm::StringRef(value).take_until([](char c) { return c == '\n'; }).str().c_str());
  if (llvm::StringRef(value).ltrim().startswith("{")) {
    llvm::SmallString<256> cwd;
    llvm::sys::fs::current_path(cwd);
    return parseConfig(value, "<command line>", std::string(cwd));
  }
  return readConfig(value);
}

llvm::Expected<Config> configFor(const std::string& sourceFile) {
  llvm::SmallString<256> dir(sourceFile);
  llvm::sys::path::remove_filename(dir);
  for (; !dir.empty(); dir.resize(llvm::sys::path::parent_path(dir).size())) {  // a prefix: no self-assignment
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, ".dtype-lint.yaml");
    if (llvm::sys::fs::exists(candidate)) return readConfig(std::string(candidate));
    if (dir == llvm::sys::path::root_path(dir)) break;
  }
  return Config{};
}

llvm::Expected<std::map<std::string, Config>> configsFor(const std::vector<std::string>& files,
                                                         const std::string& given) {
  std::map<std::string, Config> configs;
  std::optional<Config> shared;
  if (!given.empty()) {
    auto config = givenConfig(given);
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

std::vector<std::pair<std::string, std::string>> runtimeEnvironment(const Config& config) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [option, text] : config.options) env.emplace_back(environmentVariable(option), text);
  return env;
}

std::string dumpConfig(const Config& config) {
  Config effective = config;
  // No glob, or a first one that excludes, starts from every rule: say so.
  auto& checks = effective.policy.checks.globs;
  if (checks.empty() || (checks.front().front() == '-' && checks.front() != "-*")) checks.insert(checks.begin(), "DL*");
  for (NumericHealthOption option : kNumericHealthOptions)
    effective.options.emplace(option, optionText(NumericHealthOptions{}, option));
  std::string text;
  llvm::raw_string_ostream out(text);
  llvm::yaml::Output yaml(out);
  yaml << effective;
  return out.str();
}

}  // namespace dtype_lint::analyzer
