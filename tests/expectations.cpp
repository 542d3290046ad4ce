#include "expectations.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

namespace dtype_lint::testing {

unsigned lineOf(const std::string& file, const std::string& needle) {
  std::ifstream in(file);
  unsigned n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

LineRules readMarkers(const std::string& file) {
  LineRules out;
  std::ifstream in(file);
  static const std::regex marker(R"(dtype-lint-expect:\s*([A-Z0-9, ]+))");
  static const std::regex id(R"(DL[0-9]{3})");
  unsigned lineNumber = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNumber;
    std::smatch m;
    if (!std::regex_search(line, m, marker)) continue;
    const std::string ids = m[1];
    for (auto it = std::sregex_iterator(ids.begin(), ids.end(), id); it != std::sregex_iterator(); ++it)
      out.emplace(lineNumber, it->str());
  }
  return out;
}

LineRules checkedBy(FrontEnd frontEnd, const LineRules& markers) {
  LineRules out;
  for (const auto& [line, rule] : markers)
    if (const RuleInfo* info = findRule(rule);
        info && info->checkedBy(frontEnd == FrontEnd::Static ? kStatic : kCxxRuntime))
      out.emplace(line, rule);
  return out;
}

LineRules findingsIn(const std::vector<Finding>& findings, const std::string& file) {
  LineRules out;
  for (const Finding& f : findings)
    if (f.location.file == file) out.emplace(f.location.line, std::string(f.rule->id));
  return out;
}

std::string compare(const LineRules& expected, const LineRules& actual, const std::string& file) {
  std::string report;
  for (const auto& [line, rule] : expected)
    if (!actual.count({line, rule})) report += file + ":" + std::to_string(line) + ": missing " + rule + "\n";
  for (const auto& [line, rule] : actual)
    if (!expected.count({line, rule})) report += file + ":" + std::to_string(line) + ": unexpected " + rule + "\n";
  return report;
}

std::vector<std::string> sourceFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".cpp") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace dtype_lint::testing
