#include "dtype_lint/source_text.h"

#include <fstream>

namespace dtype_lint {

const std::vector<std::string>& SourceText::lines(const std::string& file) {
  auto [it, inserted] = files_.try_emplace(file);
  if (inserted) {
    std::ifstream in(file);
    for (std::string l; std::getline(in, l);) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      it->second.push_back(std::move(l));
    }
  }
  return it->second;
}

std::string_view SourceText::line(const std::string& file, unsigned lineNumber) {
  if (lineNumber == 0) return {};  // a binary's location (SourceLocation::symbol): nothing to read
  const auto& all = lines(file);
  if (lineNumber > all.size()) return {};
  return all[lineNumber - 1];
}

std::string_view trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string relativePath(const std::string& path, const std::string& baseDir) {
  if (!baseDir.empty() && path.size() > baseDir.size() && path.compare(0, baseDir.size(), baseDir) == 0 &&
      (path[baseDir.size()] == '/' || baseDir.back() == '/'))
    return path.substr(baseDir.size() + (baseDir.back() == '/' ? 0 : 1));
  return path;
}

bool isPythonFile(std::string_view path) { return path.size() > 3 && path.substr(path.size() - 3) == ".py"; }

bool globMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace dtype_lint
