#include "dtype_lint/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace dtype_lint {

const char* const kToolVersion = DTYPE_LINT_VERSION;

namespace {

using nlohmann::json;

std::string displayPath(const std::string& file, const ReportOptions& options) {
  const std::string& base = options.baseDir;
  if (!base.empty() && file.size() > base.size() && file.compare(0, base.size(), base) == 0 &&
      (file[base.size()] == '/' || base.back() == '/'))
    return file.substr(base.size() + (base.back() == '/' ? 0 : 1));
  return file;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void writeSnippet(std::ostream& out, const SourceLocation& at, SourceText& source, bool color) {
  std::string_view text = source.line(at.file, at.line);
  if (text.empty()) return;
  out << text << '\n';
  std::string caret(at.column > 0 ? at.column - 1 : 0, ' ');
  for (size_t i = 0; i < caret.size() && i < text.size(); ++i)
    if (text[i] == '\t') caret[i] = '\t';
  caret += '^';
  if (at.endLine == at.line && at.endColumn > at.column) caret.append(at.endColumn - at.column, '~');
  out << (color ? "\033[1;32m" : "") << caret << (color ? "\033[0m" : "") << '\n';
}

void writeText(std::ostream& out, const std::vector<Finding>& findings, const ReportOptions& options,
               SourceText& source, const std::vector<Note>& toolNotes) {
  const bool color = options.color;
  auto header = [&](const SourceLocation& at, std::string_view kind, const char* kindColor,
                    const std::string& message, std::string_view suffix) {
    out << (color ? "\033[1m" : "") << displayPath(at.file, options);
    if (at.line) out << ':' << at.line << ':' << at.column;
    else out << " (" << at.symbol << ')';
    out << ": " << (color ? kindColor : "") << kind << ": " << (color ? "\033[0m\033[1m" : "") << message;
    if (!suffix.empty()) out << " [" << suffix << ']';
    out << (color ? "\033[0m" : "") << '\n';
  };
  for (const Finding& f : findings) {
    const char* kindColor = f.severity == Severity::Error ? "\033[1;31m" : "\033[1;35m";
    header(f.location, name(f.severity), kindColor, f.message, qualifiedName(*f.rule));
    writeSnippet(out, f.location, source, color);
    for (const Note& n : f.notes) {
      if (!n.location.valid()) continue;
      header(n.location, "note", "\033[1;36m", n.message, "");
      writeSnippet(out, n.location, source, color);
    }
  }
  for (const Note& n : toolNotes) {
    if (n.location.valid()) header(n.location, "note", "\033[1;36m", n.message, "dtype-lint");
    else out << "dtype-lint: note: " << n.message << '\n';
  }
}

json locationJson(const SourceLocation& at, const ReportOptions& options) {
  json out = {{"file", displayPath(at.file, options)}, {"line", at.line},       {"column", at.column},
              {"endLine", at.endLine},                 {"endColumn", at.endColumn}};
  if (!at.symbol.empty()) out["symbol"] = at.symbol;
  return out;
}

json findingsJson(const std::vector<Finding>& findings, const ReportOptions& options, SourceText& source,
                  const std::vector<Note>& toolNotes) {
  json list = json::array();
  const auto prints = fingerprints(findings, source, options.baseDir);
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    json notes = json::array();
    for (const Note& n : f.notes) {
      json note = locationJson(n.location, options);
      note["message"] = n.message;
      notes.push_back(std::move(note));
    }
    json item = {{"rule", f.rule->id},       {"name", f.rule->name}, {"severity", name(f.severity)},
                 {"message", f.message},     {"location", locationJson(f.location, options)},
                 {"notes", std::move(notes)}, {"fingerprint", prints[i]}};
    if (f.fixIt) item["fixIt"] = {{"range", locationJson(f.fixIt->range, options)}, {"replacement", f.fixIt->replacement}};
    list.push_back(std::move(item));
  }
  json report = {{"tool", "dtype-lint"}, {"version", kToolVersion}, {"findings", std::move(list)}};
  if (!toolNotes.empty()) {
    json notifications = json::array();
    for (const Note& n : toolNotes) {
      json item = locationJson(n.location, options);
      item["message"] = n.message;
      notifications.push_back(std::move(item));
    }
    report["notifications"] = std::move(notifications);
  }
  return report;
}

std::string sarifLevel(Severity s) { return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note"; }

json sarifPhysicalLocation(const SourceLocation& at, const ReportOptions& options) {
  const std::string path = displayPath(at.file, options);
  json artifact = {{"uri", path}};
  if (!path.empty() && path.front() != '/') artifact["uriBaseId"] = "%SRCROOT%";
  else artifact["uri"] = "file://" + path;
  if (!at.line) return {{"artifactLocation", std::move(artifact)}};  // a binary: where in it is a logical location
  json region = {{"startLine", at.line}, {"startColumn", std::max(at.column, 1u)}};
  if (at.endLine) region["endLine"] = at.endLine;
  if (at.endColumn) region["endColumn"] = at.endColumn + 1;  // SARIF's end column is exclusive
  return {{"artifactLocation", std::move(artifact)}, {"region", std::move(region)}};
}

json sarif(const std::vector<Finding>& findings, const ReportOptions& options, SourceText& source,
           const std::vector<Note>& toolNotes) {
  json rules = json::array();
  std::map<std::string_view, size_t> ruleIndex;
  for (const RuleInfo& r : ruleCatalog()) {
    ruleIndex[r.id] = rules.size();
    rules.push_back({{"id", r.id},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.shortDescription}}},
                     {"fullDescription", {{"text", r.fullDescription}}},
                     {"help", {{"text", fmt::format("{} See {}.", r.fullDescription, docsPath(r))}}},
                     {"defaultConfiguration", {{"level", sarifLevel(r.severity)}}},
                     {"properties", {{"tags", {"mixed-precision"}}}}});
  }
  const auto prints = fingerprints(findings, source, options.baseDir);
  json results = json::array();
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    json related = json::array();
    for (const Note& n : f.notes) {
      if (!n.location.valid()) continue;
      related.push_back({{"id", related.size()},
                         {"physicalLocation", sarifPhysicalLocation(n.location, options)},
                         {"message", {{"text", n.message}}}});
    }
    json result = {{"ruleId", f.rule->id},
                   {"ruleIndex", ruleIndex[f.rule->id]},
                   {"level", sarifLevel(f.severity)},
                   {"message", {{"text", f.message}}},
                   {"locations", {{{"physicalLocation", sarifPhysicalLocation(f.location, options)}}}},
                   {"partialFingerprints", {{"dtypeLintLineHash/v1", prints[i]}}}};
    if (!f.location.symbol.empty())
      result["locations"][0]["logicalLocations"] = {{{"fullyQualifiedName", f.location.symbol}, {"kind", "function"}}};
    if (!related.empty()) result["relatedLocations"] = std::move(related);
    results.push_back(std::move(result));
  }
  json run = {{"tool",
               {{"driver",
                 {{"name", "dtype-lint"},
                  {"version", options.toolVersion.empty() ? kToolVersion : options.toolVersion},
                  {"informationUri", "https://example.invalid/dtype-lint"},
                  {"rules", std::move(rules)}}}}},
              {"results", std::move(results)}};
  if (!toolNotes.empty()) {
    json notifications = json::array();
    for (const Note& n : toolNotes) {
      json item = {{"level", "note"}, {"message", {{"text", n.message}}}};
      if (n.location.valid()) item["locations"] = {{{"physicalLocation", sarifPhysicalLocation(n.location, options)}}};
      notifications.push_back(std::move(item));
    }
    run["invocations"] = {{{"executionSuccessful", true}, {"toolExecutionNotifications", std::move(notifications)}}};
  }
  if (!options.baseDir.empty())
    run["originalUriBaseIds"] = {{"%SRCROOT%", {{"uri", "file://" + options.baseDir + "/"}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", {std::move(run)}}};
}

}  // namespace

std::vector<std::string> fingerprints(const std::vector<Finding>& findings, SourceText& source,
                                      const std::string& baseDir) {
  std::map<uint64_t, int> seen;
  std::vector<std::string> out;
  for (const Finding& f : findings) {
    const std::string key =
        fmt::format("{}|{}|{}", f.rule->id, displayPath(f.location.file, ReportOptions{false, baseDir, ""}),
                    f.location.line ? trimmed(source.line(f.location.file, f.location.line)) : f.location.symbol);
    const uint64_t h = fnv1a(key);
    out.push_back(fmt::format("{:016x}:{}", h, ++seen[h]));
  }
  return out;
}

std::string findingToJsonLine(const Finding& f) {
  auto location = [](const SourceLocation& at) {
    json out{{"file", at.file}, {"line", at.line}, {"column", at.column}, {"endLine", at.endLine},
             {"endColumn", at.endColumn}};
    if (!at.symbol.empty()) out["symbol"] = at.symbol;
    return out;
  };
  json notes = json::array();
  for (const Note& n : f.notes) notes.push_back({{"location", location(n.location)}, {"message", n.message}});
  return json{{"rule", f.rule->id}, {"severity", name(f.severity)}, {"message", f.message},
              {"location", location(f.location)}, {"notes", std::move(notes)}}
      .dump();
}

bool findingFromJsonLine(const std::string& line, Finding& f) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rule") || !j["rule"].is_string()) return false;
  f.rule = findRule(j["rule"].get<std::string>());
  if (!f.rule) return false;
  auto location = [](const json& at) {
    return SourceLocation{at.value("file", ""),    at.value("line", 0u),      at.value("column", 0u),
                          at.value("endLine", 0u), at.value("endColumn", 0u), at.value("symbol", "")};
  };
  const std::string severity = j.value("severity", "warning");
  f.severity = severity == "error" ? Severity::Error : severity == "note" ? Severity::Note : Severity::Warning;
  f.message = j.value("message", "");
  f.location = location(j.value("location", json::object()));
  f.notes.clear();
  for (const json& n : j.value("notes", json::array()))
    f.notes.push_back(Note{location(n.value("location", json::object())), n.value("message", "")});
  return true;
}

void writeReport(std::ostream& out, ReportFormat format, const std::vector<Finding>& findings,
                 const ReportOptions& options, SourceText& source, const std::vector<Note>& toolNotes) {
  switch (format) {
    case ReportFormat::Text: return writeText(out, findings, options, source, toolNotes);
    case ReportFormat::Json: out << findingsJson(findings, options, source, toolNotes).dump(2) << '\n'; return;
    case ReportFormat::Sarif: out << sarif(findings, options, source, toolNotes).dump(2) << '\n'; return;
  }
}

}  // namespace dtype_lint
