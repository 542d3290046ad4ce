#include "dtype_lint/findings_pipeline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "dtype_lint/suppression.h"

namespace dtype_lint {
namespace {

bool matches(std::string_view pattern, const RuleInfo& rule) {
  return globMatch(pattern, rule.id) || globMatch(pattern, qualifiedName(rule));
}

std::string_view patternOf(const std::string& glob) {
  return !glob.empty() && glob.front() == '-' ? std::string_view(glob).substr(1) : std::string_view(glob);
}

// POSIX extended syntax, as clang-tidy's HeaderFilterRegex (llvm::Regex).
constexpr auto kRegexSyntax = std::regex::extended | std::regex::nosubs;

}  // namespace

bool RuleSelection::selects(const RuleInfo& rule) const {
  if (globs.empty()) return true;
  bool selected = globs.front().front() == '-';
  for (const std::string& g : globs)
    if (matches(patternOf(g), rule)) selected = g.front() != '-';
  return selected;
}

std::optional<std::string> RuleSelection::unmatchedGlob() const {
  for (const std::string& g : globs) {
    const auto catalog = ruleCatalog();
    if (std::none_of(catalog.begin(), catalog.end(), [&](const RuleInfo& r) { return matches(patternOf(g), r); }))
      return g;
  }
  return std::nullopt;
}

std::string RuleSelection::text() const {
  std::string text;
  for (const std::string& g : globs) text += (text.empty() ? "" : ",") + g;
  return text;
}

RuleSelection RuleSelection::parse(std::string_view text) {
  RuleSelection selection;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    if (std::string_view glob = trimmed(text.substr(0, comma)); !glob.empty()) selection.globs.emplace_back(glob);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return selection;
}

bool FindingPolicy::excludes(const std::string& path) const {
  const std::string relative = relativePath(path, baseDir);
  return std::any_of(excludePaths.begin(), excludePaths.end(),
                     [&](const std::string& glob) { return globMatch(glob, relative) || globMatch(glob, path); });
}

FindingPolicy FindingPolicy::with(const FindingPolicy& commandLine) const {
  FindingPolicy merged = *this;
  merged.checks.globs.insert(merged.checks.globs.end(), commandLine.checks.globs.begin(),
                             commandLine.checks.globs.end());
  merged.warningsAsErrors.globs.insert(merged.warningsAsErrors.globs.end(), commandLine.warningsAsErrors.globs.begin(),
                                       commandLine.warningsAsErrors.globs.end());
  if (commandLine.headerFilterRegex) merged.headerFilterRegex = commandLine.headerFilterRegex;
  return merged;
}

void addToolNote(std::vector<Note>& notes, Note note) {
  if (std::none_of(notes.begin(), notes.end(), [&](const Note& seen) {
        return seen.message == note.message && seen.location.file == note.location.file &&
               seen.location.line == note.location.line;
      }))
    notes.push_back(std::move(note));
}

std::string regexError(const std::string& regex) {
  // libstdc++ overflows on counts past a long (undefined behaviour) and
  // builds a state per repetition: counts stay small.
  constexpr unsigned long kMaxRepetition = 1000;
  for (size_t open = regex.find('{'); open != std::string::npos; open = regex.find('{', open + 1))
    for (size_t at = open + 1;
         at < regex.size() && (std::isdigit(static_cast<unsigned char>(regex[at])) || regex[at] == ',');) {
      const size_t digits = regex.find_first_not_of("0123456789", at);
      const std::string count = regex.substr(at, digits == std::string::npos ? std::string::npos : digits - at);
      if (count.size() > 4 || (!count.empty() && std::stoul(count) > kMaxRepetition))
        return "a repetition count above " + std::to_string(kMaxRepetition);
      at = count.empty() ? at + 1 : at + count.size();
    }
  try {
    std::regex(regex, kRegexSyntax);
    return "";
  } catch (const std::regex_error& error) {
    return error.what();
  }
}

std::vector<Finding> finalizeFindings(std::vector<FindingBatch> batches, const FindingPolicy& commandLine,
                                      SourceText& source) {
  std::vector<Finding> out;
  std::map<std::tuple<std::string, unsigned, unsigned, std::string, std::string_view>, size_t> seen;
  for (FindingBatch& batch : batches) {
    const FindingPolicy policy = batch.policy.with(commandLine);
    std::optional<std::regex> headerFilter;
    if (policy.headerFilterRegex) headerFilter.emplace(*policy.headerFilterRegex, kRegexSyntax);
    for (Finding& f : batch.findings) {
      if (!policy.checks.selects(*f.rule) || policy.excludes(f.location.file)) continue;
      if (headerFilter && !batch.mainFile.empty() && f.location.file != batch.mainFile &&
          !std::regex_search(f.location.file, *headerFilter))
        continue;
      if (isSuppressed(f, source)) continue;
      auto [first, added] = seen.try_emplace(
          {f.location.file, f.location.line, f.location.column, f.location.symbol, f.rule->id}, out.size());
      if (!added) {  // the same finding of another process: one finding, with every rank that made it
        std::vector<unsigned>& ranks = out[first->second].ranks;
        ranks.insert(ranks.end(), f.ranks.begin(), f.ranks.end());
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        continue;
      }
      if (policy.warningsAsErrors.names(*f.rule)) f.severity = Severity::Error;
      out.push_back(std::move(f));
    }
  }
  // A mismatch in a custom backward is DL103 where a caller ran the forward
  // under autocast; the same op analyzed without that caller (DL101) is the
  // same mismatch explained less.
  std::set<std::tuple<std::string, unsigned, unsigned>> backwardMismatches;
  for (const Finding& f : out)
    if (f.rule->handle == RuleId::DL103)
      backwardMismatches.insert({f.location.file, f.location.line, f.location.column});
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const Finding& f) {
                             return f.rule->handle == RuleId::DL101 &&
                                    backwardMismatches.count({f.location.file, f.location.line, f.location.column});
                           }),
            out.end());
  std::stable_sort(out.begin(), out.end(), locationOrder);
  return out;
}

}  // namespace dtype_lint
