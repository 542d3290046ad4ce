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

namespace {

// Each marker of `file`, pinned or not: `dtype-lint-expect:` then rule IDs,
// each optionally followed by `:COLUMN` and `{{part of the message}}`,
// separated by commas or spaces. Text after the last ID is a comment.
std::vector<Pin> readAllMarkers(const std::string& file) {
  std::vector<Pin> out;
  std::ifstream in(file);
  static const std::string kMarker = "dtype-lint-expect:";
  static const std::regex entry(R"([ ,]*(DL[0-9]{3})(?::([0-9]+))?(?:\s*\{\{(.*?)\}\})?)");
  unsigned lineNumber = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNumber;
    const size_t at = line.find(kMarker);
    if (at == std::string::npos) continue;
    auto it = line.cbegin() + static_cast<std::ptrdiff_t>(at + kMarker.size());
    for (std::smatch m; std::regex_search(it, line.cend(), m, entry, std::regex_constants::match_continuous);
         it = m[0].second) {
      const unsigned column = m[2].matched ? static_cast<unsigned>(std::stoul(m[2].str())) : 0u;
      out.push_back(Pin{lineNumber, m[1].str(), column, m[3].str()});
    }
  }
  return out;
}

}  // namespace

LineRules readMarkers(const std::string& file) {
  LineRules out;
  for (const Pin& marker : readAllMarkers(file)) out.emplace(marker.line, marker.rule);
  return out;
}

std::vector<Pin> readPins(const std::string& file) {
  std::vector<Pin> out;
  for (Pin& marker : readAllMarkers(file))
    if (marker.column || !marker.message.empty()) out.push_back(std::move(marker));
  return out;
}

std::string comparePins(const std::vector<Pin>& pins, const std::vector<Finding>& findings, const std::string& file) {
  std::string report;
  for (const Pin& pin : pins) {
    std::string seen;
    bool matched = false;
    for (const Finding& f : findings) {
      if (f.location.file != file || f.location.line != pin.line || f.rule->id != pin.rule) continue;
      matched = (!pin.column || f.location.column == pin.column) && f.message.find(pin.message) != std::string::npos;
      if (matched) break;
      seen += "\n  found at column " + std::to_string(f.location.column) + ": " + f.message;
    }
    if (!matched)
      report += file + ":" + std::to_string(pin.line) + ": " + pin.rule + " expected at column " +
                std::to_string(pin.column) + " with {{" + pin.message + "}}" + (seen.empty() ? " (no finding)" : seen) +
                "\n";
  }
  return report;
}

LineRules checkedBy(FrontEnd frontEnd, const LineRules& markers) {
  LineRules out;
  for (const auto& [line, rule] : markers)
    if (const RuleInfo* info = findRule(rule);
        info && info->checkedBy(frontEnd == FrontEnd::Static       ? kStatic
                                : frontEnd == FrontEnd::CxxRuntime ? kCxxRuntime
                                                                   : kPythonRuntime))
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

std::vector<std::string> sourceFiles(const std::string& dir, const std::string& extension) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == extension) out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace dtype_lint::testing
