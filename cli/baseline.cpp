#include "baseline.h"

#include <map>

#include "dtype_lint/report.h"
#include "input_files.h"
#include "report_output.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace dtype_lint::cli {
namespace {

constexpr int kFormatVersion = 1;

}  // namespace

llvm::Error writeBaseline(const std::string& path, const std::vector<Finding>& findings, SourceText& source,
                          const std::string& baseDir) {
  const std::vector<std::string> prints = fingerprints(findings, source, baseDir);
  llvm::json::Array entries;
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    entries.push_back(llvm::json::Object{{"fingerprint", prints[i]},
                                         {"rule", std::string(f.rule->id)},
                                         {"file", relativePath(f.location.file, baseDir)},
                                         {"line", int64_t(f.location.line)},
                                         {"message", f.message}});
  }
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (error)
    return llvm::createStringError(error, "cannot write the baseline '%s': %s", path.c_str(), error.message().c_str());
  out << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{{"tool", "dtype-lint"},
                                                                     {"baselineVersion", kFormatVersion},
                                                                     {"findings", std::move(entries)}}))
      << '\n';
  return closeWritten(out, "the baseline '" + path + "'");
}

llvm::Expected<Baseline> readBaseline(const std::string& path) {
  auto buffer = analyzer::readInputFile(path);
  if (!buffer)
    return llvm::createStringError(std::make_error_code(std::errc::io_error), "cannot read the baseline '%s': %s",
                                   path.c_str(), llvm::toString(buffer.takeError()).c_str());
  if (auto where = analyzer::tooDeeplyNested((*buffer)->getBuffer()))
    return llvm::createStringError(std::errc::invalid_argument,
                                   "'%s' is not a baseline: nested more than %zu deep at %s", path.c_str(),
                                   analyzer::kMaxNesting, where->c_str());
  auto parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return llvm::createStringError(std::errc::invalid_argument, "'%s' is not a baseline: %s", path.c_str(),
                                   llvm::toString(parsed.takeError()).c_str());
  const llvm::json::Object* root = parsed->getAsObject();
  const llvm::json::Array* entries = root ? root->getArray("findings") : nullptr;
  if (!entries || root->getInteger("baselineVersion") != kFormatVersion)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "'%s' is not a baseline of this dtype-lint (write one with --write-baseline)",
                                   path.c_str());
  Baseline baseline;
  for (const llvm::json::Value& entry : *entries) {
    const llvm::json::Object* object = entry.getAsObject();
    auto fingerprint = object ? object->getString("fingerprint") : std::nullopt;
    if (!fingerprint)
      return llvm::createStringError(std::errc::invalid_argument,
                                     "'%s' is not a baseline: an entry without a "
                                     "fingerprint",
                                     path.c_str());
    ++baseline.fingerprints[fingerprint->str()];
  }
  baseline.entries = entries->size();
  return baseline;
}

BaselineMatch matchBaseline(const Baseline& baseline, std::vector<Finding> findings, SourceText& source,
                            const std::string& baseDir) {
  std::map<std::string, size_t> left = baseline.fingerprints;
  BaselineMatch match;
  match.entries = baseline.entries;
  const std::vector<std::string> prints = fingerprints(findings, source, baseDir);
  for (size_t i = 0; i < findings.size(); ++i) {
    auto known = left.find(prints[i]);
    if (known != left.end() && known->second > 0) --known->second;
    else match.newFindings.push_back(std::move(findings[i]));
  }
  for (const auto& [fingerprint, count] : left) match.gone += count;
  return match;
}

}  // namespace dtype_lint::cli
