// Source text for reports and suppressions, read once per file.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dtype_lint {

class SourceText {
 public:
  // The 1-based line of a file, without its newline; empty when unreadable.
  std::string_view line(const std::string& file, unsigned lineNumber);

 private:
  const std::vector<std::string>& lines(const std::string& file);
  std::map<std::string, std::vector<std::string>> files_;
};

// Shell-style glob with '*' and '?', as used by --rules and NOLINT(...).
bool globMatch(std::string_view pattern, std::string_view text);

// The text without the blanks (spaces, tabs, line ends) around it.
std::string_view trimmed(std::string_view text);

// The path relative to baseDir when it lies under it, else the path as it is.
std::string relativePath(const std::string& path, const std::string& baseDir);
// A Python script: its comments start with '#'.
bool isPythonFile(std::string_view path);

}  // namespace dtype_lint
