#include "config_files.h"

#include <nlohmann/json.hpp>

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

Value fromJson(const nlohmann::json& j) {
  if (j.is_boolean()) return Value::boolean(j.get<bool>());
  if (j.is_number()) return Value::numeric(j.get<double>());
  if (j.is_string()) return Value::string(j.get<std::string>());
  if (j.is_null()) return Value::none();
  return Value::unknown();
}

// A YAML scalar as YAML 1.1 loaders read it: booleans, null, numbers, strings.
Value fromYamlScalar(std::string text) {
  if (const size_t comment = text.find(" #"); comment != std::string::npos) text.resize(comment);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front())
    return Value::string(text.substr(1, text.size() - 2));
  if (text == "true" || text == "True" || text == "yes") return Value::boolean(true);
  if (text == "false" || text == "False" || text == "no") return Value::boolean(false);
  if (text == "null" || text == "~") return Value::none();
  char* end = nullptr;
  const double n = std::strtod(text.c_str(), &end);
  if (end && *end == '\0') return Value::numeric(n);
  return Value::string(text);
}

void addEntry(Value& dict, const std::string& key, Value value) {
  dict.keys.push_back(Value::string(key));
  dict.items.push_back(std::move(value));
}

}  // namespace

Value loadConfigFile(const std::string& path, const std::string& importer) {
  Value dict = Value::make(Kind::Dict);
  dict.fromConfigFile = true;
  dict.text = path;
  const auto text = readFound(path, importer);
  if (!text) return dict;
  const std::string extension = fs::path(path).extension().string();
  if (extension == ".json") {
    const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object())
      for (const auto& [key, value] : parsed.items()) addEntry(dict, key, fromJson(value));
  } else if (extension == ".yaml" || extension == ".yml") {
    // Top-level `key: scalar` lines; a key whose value is nested is unknown.
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || std::isspace(static_cast<unsigned char>(line[0])) || line[0] == '#' || line[0] == '-')
        continue;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      addEntry(dict, line.substr(0, colon), value.empty() ? Value::unknown() : fromYamlScalar(value));
    }
  }
  return dict;
}

}  // namespace dtype_lint::python
