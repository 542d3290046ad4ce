#include "dtype_lint/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace dtype_lint {

const char* const kToolVersion = DTYPE_LINT_VERSION;

namespace {

using nlohmann::json;

std::string displayPath(const std::string& file, const ReportOptions& options) {
  return relativePath(file, options.baseDir);
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
  auto header = [&](const SourceLocation& at, std::string_view kind, const char* kindColor, const std::string& message,
                    std::string_view suffix) {
    out << (color ? "\033[1m" : "") << displayPath(at.file, options);
    if (at.line) out << ':' << at.line << ':' << at.column;
    else out << " (" << at.symbol << ')';
    out << ": " << (color ? kindColor : "") << kind << ": " << (color ? "\033[0m\033[1m" : "") << message;
    if (!suffix.empty()) out << " [" << suffix << ']';
    out << (color ? "\033[0m" : "") << '\n';
  };
  for (const Finding& f : findings) {
    const char* kindColor = f.severity == Severity::Error ? "\033[1;31m" : "\033[1;35m";
    header(f.location, name(f.severity), kindColor, displayMessage(f), qualifiedName(*f.rule));
    writeSnippet(out, f.location, source, color);
    if (f.fix) out << "fix: " << f.fix->description << " (--fix applies it)\n";
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
  json out = {{"file", displayPath(at.file, options)},
              {"line", at.line},
              {"column", at.column},
              {"endLine", at.endLine},
              {"endColumn", at.endColumn}};
  if (!at.symbol.empty()) out["symbol"] = at.symbol;
  return out;
}

// A fix as the JSON report and the hooks' lines write it.
json fixJson(const FixIt& fix, const ReportOptions& options) {
  json edits = json::array();
  for (const Edit& e : fix.edits)
    edits.push_back({{"range", locationJson(e.range, options)}, {"replacement", e.replacement}});
  return {{"description", fix.description}, {"edits", std::move(edits)}};
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
    json item = {{"rule", f.rule->id},
                 {"name", f.rule->name},
                 {"severity", name(f.severity)},
                 {"message", displayMessage(f)},
                 {"location", locationJson(f.location, options)},
                 {"notes", std::move(notes)},
                 {"fingerprint", prints[i]}};
    if (f.fix) item["fix"] = fixJson(*f.fix, options);
    if (!f.ranks.empty()) item["ranks"] = f.ranks;
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

std::string sarifLevel(Severity s) {
  return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note";
}

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

// SARIF's replacements: a deleted region (empty for an insertion; its end
// column is exclusive) and the inserted text, grouped by file.
json sarifFix(const FixIt& fix, const ReportOptions& options) {
  json changes = json::array();
  std::map<std::string, size_t> changeOfFile;
  for (const Edit& e : fix.edits) {
    auto [it, added] = changeOfFile.emplace(e.range.file, changes.size());
    if (added) {
      json artifact = sarifPhysicalLocation(SourceLocation{e.range.file, 0, 0, 0, 0, ""}, options)["artifactLocation"];
      changes.push_back({{"artifactLocation", std::move(artifact)}, {"replacements", json::array()}});
    }
    json region = {{"startLine", e.range.line},
                   {"startColumn", e.range.column},
                   {"endLine", e.range.endLine},
                   {"endColumn", e.range.endColumn + 1}};
    changes[it->second]["replacements"].push_back(
        {{"deletedRegion", std::move(region)}, {"insertedContent", {{"text", e.replacement}}}});
  }
  return {{"description", {{"text", fix.description}}}, {"artifactChanges", std::move(changes)}};
}

// GitLab's code quality report: an array of issues with a severity of its own scale.
json codeClimate(const std::vector<Finding>& findings, const ReportOptions& options, SourceText& source) {
  const auto prints = fingerprints(findings, source, options.baseDir);
  json issues = json::array();
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    const char* severity = f.severity == Severity::Error     ? "critical"
                           : f.severity == Severity::Warning ? "major"
                                                             : "info";
    issues.push_back(
        {{"type", "issue"},
         {"check_name", qualifiedName(*f.rule)},
         {"description", displayMessage(f)},
         {"categories", {"Bug Risk"}},
         {"severity", severity},
         {"fingerprint", prints[i]},
         {"location",
          {{"path", displayPath(f.location.file, options)}, {"lines", {{"begin", std::max(f.location.line, 1u)}}}}}});
  }
  return issues;
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
                   {"message", {{"text", displayMessage(f)}}},
                   {"locations", {{{"physicalLocation", sarifPhysicalLocation(f.location, options)}}}},
                   {"partialFingerprints", {{"dtypeLintLineHash/v1", prints[i]}}}};
    if (!f.location.symbol.empty())
      result["locations"][0]["logicalLocations"] = {{{"fullyQualifiedName", f.location.symbol}, {"kind", "function"}}};
    if (!related.empty()) result["relatedLocations"] = std::move(related);
    // json::array: a braced {x} is [x] with GCC but x with clang.
    if (f.fix) result["fixes"] = json::array({sarifFix(*f.fix, options)});
    if (!f.ranks.empty()) result["properties"] = {{"ranks", f.ranks}};
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
  return {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", {std::move(run)}}};
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

namespace {

// A location as the JSON report and the hooks' lines write it; relative paths resolved against baseDir.
// A line or column number of a report: a whole number that fits, else the
// report is refused (a float or negative number would wrap).
unsigned positionField(const json& object, const char* key, unsigned fallback) {
  if (!object.contains(key)) return fallback;
  const json& value = object[key];
  if (!value.is_number_unsigned() || value.get<uint64_t>() > std::numeric_limits<unsigned>::max())
    throw std::invalid_argument(std::string("'") + key + "' is not a line or column number: " + value.dump());
  return value.get<unsigned>();
}

SourceLocation locationFrom(const json& at, const std::string& baseDir) {
  std::string file = at.value("file", "");
  if (!file.empty() && file.front() != '/' && !baseDir.empty()) file = baseDir + "/" + file;
  return SourceLocation{file,
                        positionField(at, "line", 0),
                        positionField(at, "column", 0),
                        positionField(at, "endLine", 0),
                        positionField(at, "endColumn", 0),
                        at.value("symbol", "")};
}

// A finding's severity, or a SARIF result's level; absent means a warning.
Severity severityFrom(const json& object, const char* key) {
  const std::string text = object.value(key, "warning");
  if (text == "error") return Severity::Error;
  if (text == "warning") return Severity::Warning;
  if (text == "note" || text == "none") return Severity::Note;
  throw std::invalid_argument(std::string("'") + key + "' is not error, warning or note: " + json(text).dump());
}

// A finding says what and where, or a report that has it is broken.
void requireMessageAndFile(const Finding& f) {
  if (f.message.empty()) throw std::invalid_argument("a finding without a message");
  if (f.location.file.empty()) throw std::invalid_argument("a finding without a file");
}

// A field that must be an array where present.
const json& arrayField(const json& object, const char* key) {
  static const json empty = json::array();
  const auto it = object.find(key);
  if (it == object.end()) return empty;
  if (!it->is_array()) throw std::invalid_argument(std::string("'") + key + "' is not an array");
  return *it;
}

// The message as reported, without the " (ranks ...)" the report added.
std::string messageWithoutRanks(std::string message, const std::vector<unsigned>& ranks) {
  const std::string suffix = ranksSuffix(ranks);
  if (!suffix.empty() && message.size() >= suffix.size() &&
      message.compare(message.size() - suffix.size(), suffix.size(), suffix) == 0)
    message.resize(message.size() - suffix.size());
  return message;
}

std::optional<FixIt> fixFrom(const json& fix, const std::string& baseDir) {
  if (!fix.is_object()) return std::nullopt;
  FixIt out{fix.value("description", ""), {}};
  for (const json& e : fix.value("edits", json::array()))
    out.edits.push_back(Edit{locationFrom(e.value("range", json::object()), baseDir), e.value("replacement", "")});
  return out;
}

std::vector<unsigned> ranksFrom(const json& ranks) {
  std::vector<unsigned> out;
  if (ranks.is_array())
    for (const json& rank : ranks)
      if (rank.is_number_unsigned()) out.push_back(rank.get<unsigned>());
  return out;
}

bool readJsonReport(const json& report, const std::string& baseDir, std::vector<Finding>& findings,
                    std::vector<Note>& toolNotes) {
  for (const json& item : arrayField(report, "findings")) {
    Finding f;
    f.rule = findRule(item.value("rule", ""));
    if (!f.rule) return false;
    f.severity = severityFrom(item, "severity");
    f.ranks = ranksFrom(item.value("ranks", json()));
    f.message = messageWithoutRanks(item.value("message", ""), f.ranks);
    f.location = locationFrom(item.value("location", json::object()), baseDir);
    for (const json& n : item.value("notes", json::array()))
      f.notes.push_back(Note{locationFrom(n, baseDir), n.value("message", "")});
    f.fix = fixFrom(item.value("fix", json()), baseDir);
    requireMessageAndFile(f);
    findings.push_back(std::move(f));
  }
  for (const json& n : report.value("notifications", json::array()))
    toolNotes.push_back(Note{locationFrom(n, baseDir), n.value("message", "")});
  return true;
}

json firstOf(const json& array) { return array.is_array() && !array.empty() ? array[0] : json::object(); }

SourceLocation sarifLocationFrom(const json& physical, const std::string& sourceRoot, const std::string& baseDir) {
  SourceLocation at;
  const json artifact = physical.value("artifactLocation", json::object());
  std::string uri = artifact.value("uri", "");
  if (uri.rfind("file://", 0) == 0) uri = uri.substr(7);
  else if (!uri.empty() && uri.front() != '/') uri = (sourceRoot.empty() ? baseDir + "/" : sourceRoot) + uri;
  at.file = uri;
  const json region = physical.value("region", json::object());
  at.line = positionField(region, "startLine", 0);
  at.column = positionField(region, "startColumn", 0);
  at.endLine = positionField(region, "endLine", at.line);
  at.endColumn = region.contains("endColumn") ? std::max(positionField(region, "endColumn", 1), 1u) - 1 : at.column;
  return at;
}

bool readSarifReport(const json& report, const std::string& baseDir, std::vector<Finding>& findings,
                     std::vector<Note>& toolNotes) {
  for (const json& run : arrayField(report, "runs")) {
    std::string sourceRoot =
        run.value("originalUriBaseIds", json::object()).value("%SRCROOT%", json::object()).value("uri", "");
    if (sourceRoot.rfind("file://", 0) == 0) sourceRoot = sourceRoot.substr(7);
    for (const json& result : arrayField(run, "results")) {
      Finding f;
      f.rule = findRule(result.value("ruleId", ""));
      if (!f.rule) return false;
      f.severity = severityFrom(result, "level");
      f.ranks = ranksFrom(result.value("properties", json::object()).value("ranks", json()));
      f.message = messageWithoutRanks(result.value("message", json::object()).value("text", ""), f.ranks);
      const json location = firstOf(result.value("locations", json::array()));
      f.location = sarifLocationFrom(location.value("physicalLocation", json::object()), sourceRoot, baseDir);
      if (const json logical = location.value("logicalLocations", json::array()); !logical.empty())
        f.location.symbol = logical[0].value("fullyQualifiedName", "");
      for (const json& related : result.value("relatedLocations", json::array()))
        f.notes.push_back(
            Note{sarifLocationFrom(related.value("physicalLocation", json::object()), sourceRoot, baseDir),
                 related.value("message", json::object()).value("text", "")});
      if (const json fixes = result.value("fixes", json::array()); !fixes.empty()) {
        f.fix = FixIt{fixes[0].value("description", json::object()).value("text", ""), {}};
        for (const json& change : fixes[0].value("artifactChanges", json::array()))
          for (const json& replacement : change.value("replacements", json::array())) {
            json physical = {{"artifactLocation", change.value("artifactLocation", json::object())},
                             {"region", replacement.value("deletedRegion", json::object())}};
            f.fix->edits.push_back(Edit{sarifLocationFrom(physical, sourceRoot, baseDir),
                                        replacement.value("insertedContent", json::object()).value("text", "")});
          }
      }
      requireMessageAndFile(f);
      findings.push_back(std::move(f));
    }
    for (const json& invocation : run.value("invocations", json::array()))
      for (const json& n : invocation.value("toolExecutionNotifications", json::array())) {
        const json location = firstOf(n.value("locations", json::array()));
        toolNotes.push_back(
            Note{sarifLocationFrom(location.value("physicalLocation", json::object()), sourceRoot, baseDir),
                 n.value("message", json::object()).value("text", "")});
      }
  }
  return true;
}

}  // namespace

bool readReport(const std::string& text, const std::string& baseDir, std::vector<Finding>& findings,
                std::vector<Note>& toolNotes, std::string& error) {
  const json report = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || !report.is_object()) {
    error = "not JSON";
    return false;
  }
  try {
    if (report.contains("runs") && report.value("version", "") == "2.1.0") {
      if (readSarifReport(report, baseDir, findings, toolNotes)) return true;
    } else if (report.value("tool", "") == "dtype-lint" && report.contains("findings")) {
      if (readJsonReport(report, baseDir, findings, toolNotes)) return true;
    } else {
      error = "neither a dtype-lint JSON report nor SARIF 2.1.0";
      return false;
    }
  } catch (const json::exception& e) {
    error = std::string("a field has the wrong type (") + e.what() + ")";
    return false;
  } catch (const std::invalid_argument& e) {
    error = e.what();
    return false;
  }
  error = "it names a rule this dtype-lint does not know";
  return false;
}

std::string findingToJsonLine(const Finding& f) {
  const ReportOptions absolute;  // paths as they are
  json notes = json::array();
  for (const Note& n : f.notes)
    notes.push_back({{"location", locationJson(n.location, absolute)}, {"message", n.message}});
  json line{{"rule", f.rule->id},
            {"severity", name(f.severity)},
            {"message", f.message},
            {"location", locationJson(f.location, absolute)},
            {"notes", std::move(notes)}};
  if (f.fix) line["fix"] = fixJson(*f.fix, absolute);
  if (!f.ranks.empty()) line["ranks"] = f.ranks;
  return line.dump();
}

bool findingFromJsonLine(const std::string& line, Finding& f) try {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rule") || !j["rule"].is_string()) return false;
  f.rule = findRule(j["rule"].get<std::string>());
  if (!f.rule) return false;
  const auto location = [](const json& at) { return locationFrom(at, ""); };
  f.severity = severityFrom(j, "severity");
  f.message = j.value("message", "");
  f.location = location(j.value("location", json::object()));
  f.notes.clear();
  for (const json& n : j.value("notes", json::array()))
    f.notes.push_back(Note{location(n.value("location", json::object())), n.value("message", "")});
  f.ranks = ranksFrom(j.value("ranks", json()));
  f.fix = fixFrom(j.value("fix", json()), "");
  return true;
} catch (const std::exception&) {  // a field of the wrong type: not a finding
  return false;
}

std::string attachedJsonLine(int torchMajor, int torchMinor) {
  return json{{"attached", fmt::format("LibTorch {}.{}", torchMajor, torchMinor)}}.dump();
}

bool isAttachedJsonLine(const std::string& line) { return line.rfind("{\"attached\":", 0) == 0; }

void writeReport(std::ostream& out, ReportFormat format, const std::vector<Finding>& findings,
                 const ReportOptions& options, SourceText& source, const std::vector<Note>& toolNotes) {
  switch (format) {
  case ReportFormat::Text: return writeText(out, findings, options, source, toolNotes);
  case ReportFormat::Json: out << findingsJson(findings, options, source, toolNotes).dump(2) << '\n'; return;
  case ReportFormat::Sarif: out << sarif(findings, options, source, toolNotes).dump(2) << '\n'; return;
  case ReportFormat::CodeClimate: out << codeClimate(findings, options, source).dump(2) << '\n'; return;
  }
}

}  // namespace dtype_lint
