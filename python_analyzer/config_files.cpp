#include "config_files.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/YAMLParser.h>
#include <nlohmann/json.hpp>
// toml++ compiled into this file alone, reporting parse errors as results.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace dtype_lint::python {
namespace {

namespace fs = std::filesystem;
using Kind = Value::Kind;

std::optional<std::string> readFound(const std::string& path, const std::string& importer) {
  std::vector<fs::path> candidates{path};
  if (fs::path(path).is_relative()) {
    fs::path dir = fs::path(importer).parent_path();
    for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) candidates.push_back(dir / path);
  }
  std::error_code error;
  for (const fs::path& candidate : candidates)
    if (fs::is_regular_file(candidate, error)) {
      std::ifstream in(candidate);
      std::stringstream text;
      text << in.rdbuf();
      return text.str();
    }
  return std::nullopt;
}

std::string nested(const std::string& outer, const std::string& key) { return outer.empty() ? key : outer + "." + key; }

Value fromJson(const nlohmann::json& j, const std::string& path, const std::string& name) {
  if (j.is_boolean()) return Value::boolean(j.get<bool>());
  if (j.is_number()) return Value::numeric(j.get<double>());
  if (j.is_string()) return Value::string(j.get<std::string>());
  if (j.is_null()) return Value::none();
  if (!j.is_object()) return Value::unknown();
  Value dict = configSection(path, name);
  for (const auto& [key, value] : j.items()) {
    dict.keys.push_back(Value::string(key));
    dict.items.push_back(fromJson(value, path, nested(name, key)));
  }
  return dict;
}

Value fromToml(const toml::node& node, const std::string& path, const std::string& name) {
  if (auto b = node.value_exact<bool>()) return Value::boolean(*b);
  if (auto n = node.value<double>()) return Value::numeric(*n);  // integers too
  if (auto s = node.value_exact<std::string>()) return Value::string(*s);
  const toml::table* table = node.as_table();
  if (!table) return Value::unknown();
  Value dict = configSection(path, name);
  for (const auto& [key, value] : *table) {
    const std::string text(key.str());
    dict.keys.push_back(Value::string(text));
    dict.items.push_back(fromToml(value, path, nested(name, text)));
  }
  return dict;
}

// A plain YAML scalar as YAML 1.1 loaders read it: booleans, null, numbers, strings.
Value fromYamlScalar(const std::string& text) {
  if (text == "true" || text == "True" || text == "yes") return Value::boolean(true);
  if (text == "false" || text == "False" || text == "no") return Value::boolean(false);
  if (text == "null" || text == "~" || text.empty()) return Value::none();
  char* end = nullptr;
  const double n = std::strtod(text.c_str(), &end);
  if (end && *end == '\0') return Value::numeric(n);
  return Value::string(text);
}

Value fromYaml(llvm::yaml::Node* node, const std::string& path, const std::string& name) {
  llvm::SmallString<64> storage;
  if (auto* scalar = llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(node)) {
    const std::string value = scalar->getValue(storage).str();
    const llvm::StringRef raw = scalar->getRawValue();
    return raw.startswith("\"") || raw.startswith("'") ? Value::string(value) : fromYamlScalar(value);
  }
  auto* mapping = llvm::dyn_cast_or_null<llvm::yaml::MappingNode>(node);
  if (!mapping) return Value::unknown();
  Value dict = configSection(path, name);
  for (llvm::yaml::KeyValueNode& entry : *mapping) {
    auto* key = llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(entry.getKey());
    if (!key) continue;
    const std::string text = key->getValue(storage).str();
    dict.keys.push_back(Value::string(text));
    dict.items.push_back(fromYaml(entry.getValue(), path, nested(name, text)));
  }
  return dict;
}

std::string trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t\r") - first + 1));
}

}  // namespace

Value configSection(const std::string& path, const std::string& name) {
  Value dict = Value::make(Kind::Dict);
  dict.fromConfigFile = true;
  dict.text = path;
  dict.description = name;  // "train" for conf["train"]["amp"]: the setting "train.amp in PATH"
  return dict;
}

Value loadIniFile(const std::string& path, const std::string& importer) {
  Value sections = Value::make(Kind::Dict);
  const auto text = readFound(path, importer);
  if (!text) return sections;
  std::istringstream lines(*text);
  Value* current = nullptr;
  for (std::string line; std::getline(lines, line);) {
    const std::string entry = trimmed(line);
    if (entry.empty() || entry[0] == '#' || entry[0] == ';') continue;
    if (entry.front() == '[' && entry.back() == ']') {
      const std::string name = trimmed(std::string_view(entry).substr(1, entry.size() - 2));
      sections.keys.push_back(Value::string(name));
      sections.items.push_back(configSection(path, name));
      current = &sections.items.back();
      continue;
    }
    const size_t separator = entry.find_first_of("=:");
    if (!current || separator == std::string::npos) continue;  // a continuation line: not followed
    std::string key = trimmed(std::string_view(entry).substr(0, separator));
    std::transform(key.begin(), key.end(), key.begin(), ::tolower);  // configparser's optionxform
    current->keys.push_back(Value::string(key));
    current->items.push_back(Value::string(trimmed(std::string_view(entry).substr(separator + 1))));
  }
  return sections;
}

Value loadConfigFile(const std::string& path, const std::string& importer) {
  const Value empty = configSection(path, "");
  const auto text = readFound(path, importer);
  if (!text) return empty;
  const std::string extension = fs::path(path).extension().string();
  Value loaded = Value::unknown();
  if (extension == ".json") {
    loaded = fromJson(nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false), path, "");
  } else if (extension == ".yaml" || extension == ".yml") {
    llvm::SourceMgr sources;
    sources.setDiagHandler([](const llvm::SMDiagnostic&, void*) {});  // a file YAML cannot read: no settings
    llvm::yaml::Stream stream(*text, sources);
    auto document = stream.begin();
    if (document != stream.end()) loaded = fromYaml(document->getRoot(), path, "");
    if (sources.getNumBuffers() && stream.failed()) loaded = Value::unknown();
  } else if (extension == ".toml") {
    if (toml::parse_result parsed = toml::parse(*text, path)) loaded = fromToml(parsed.table(), path, "");
  }
  return loaded.is(Kind::Dict) ? loaded : empty;
}

}  // namespace dtype_lint::python
