// `// dtype-lint-expect: DL101, DL105` markers, and comparing them with findings.
// A marker's rule may also pin the finding's column and a part of its message,
// as clang-tidy's CHECK-MESSAGES do: `// dtype-lint-expect: DL101:3 {{('h': Half, 'w': Float)}}`.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint::testing {

// (line, rule ID) pairs.
using LineRules = std::set<std::pair<unsigned, std::string>>;

LineRules readMarkers(const std::string& file);
// The markers that pin a column or a message.
struct Pin {
  unsigned line = 0;
  std::string rule;
  unsigned column = 0;  // 0: not pinned
  std::string message;  // a part of the message; empty: not pinned
};
std::vector<Pin> readPins(const std::string& file);
// Empty when each pin's finding has its column and message; otherwise one line per pin that does not.
std::string comparePins(const std::vector<Pin>& pins, const std::vector<Finding>& findings, const std::string& file);
// The first line of `file` that contains `needle` (1-based; 0 if none).
unsigned lineOf(const std::string& file, const std::string& needle);
// The markers of the rules one front end checks (the catalog says which).
enum class FrontEnd { Static, CxxRuntime, PythonRuntime };
LineRules checkedBy(FrontEnd frontEnd, const LineRules& markers);
LineRules findingsIn(const std::vector<Finding>& findings, const std::string& file);
// Empty when equal; otherwise one line per missing or unexpected finding.
std::string compare(const LineRules& expected, const LineRules& actual, const std::string& file);
// The files of a directory tree with the extension, sorted.
std::vector<std::string> sourceFiles(const std::string& dir, const std::string& extension = ".cpp");

}  // namespace dtype_lint::testing
