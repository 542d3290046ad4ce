#include "caches.h"

#include <algorithm>
#include <chrono>

#include <cstdlib>

#include <fmt/format.h>

#include "dtype_lint/report.h"
#include "input_files.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace {

std::string hex(uint64_t value) {
  std::string out;
  llvm::raw_string_ostream(out) << llvm::format_hex_no_prefix(value, 16);
  return out;
}

// What invalidates every cached artifact: this tool (its version, and the
// binary itself, for builds between versions) and the Clang it parses with.
const std::string& toolVersion() {
  static const std::string version = [] {
    std::string v = std::string(DTYPE_LINT_VERSION) + " " + getClangFullVersion();
    llvm::sys::fs::file_status self;
    if (!llvm::sys::fs::status("/proc/self/exe", self))
      v += fmt::format(" {} {}", self.getSize(), self.getLastModificationTime().time_since_epoch().count());
    return v;
  }();
  return version;
}

std::string hashOf(const std::vector<std::string>& parts) {
  std::string joined;
  for (const std::string& part : parts) joined.append(part).push_back('\0');
  return hex(llvm::xxHash64(joined));
}

std::optional<std::string> readFile(const std::string& path) {
  auto buffer = readInputFile(path);
  if (!buffer) {
    llvm::consumeError(buffer.takeError());
    return std::nullopt;
  }
  return (*buffer)->getBuffer().str();
}

// Written under a unique name, then renamed: readers never see half a file.
bool writeAtomically(const std::string& path, llvm::StringRef content) {
  if (llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path))) return false;
  llvm::SmallString<256> temporary;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(path + ".%%%%%%.tmp", fd, temporary)) return false;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << content;
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  return !llvm::sys::fs::rename(temporary, path);
}

bool isLibTorchHeader(llvm::StringRef header) {
  return header.startswith("torch/") || header.startswith("ATen/") || header.startswith("c10/");
}

// GeneratePCHAction with the output path and template instantiation set here
// rather than on a command line the driver would rewrite.
class PchBuilder : public GeneratePCHAction {
 public:
  explicit PchBuilder(std::string output) : output_(std::move(output)) {}

 protected:
  bool BeginInvocation(CompilerInstance& ci) override {
    ci.getFrontendOpts().OutputFile = output_;
    ci.getLangOpts().PCHInstantiateTemplates = true;
    return GeneratePCHAction::BeginInvocation(ci);
  }

 private:
  std::string output_;
};

class PchBuilderFactory : public tooling::FrontendActionFactory {
 public:
  explicit PchBuilderFactory(std::string output) : output_(std::move(output)) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<PchBuilder>(output_); }

 private:
  std::string output_;
};

bool buildPch(const std::string& header, const std::string& pch, const std::vector<std::string>& arguments,
              const std::string& workingDirectory) {
  std::vector<std::string> flags(arguments.begin() + (arguments.empty() ? 0 : 1), arguments.end());
  flags.push_back("-xc++-header");
  tooling::FixedCompilationDatabase database(workingDirectory, flags);
  tooling::ClangTool tool(database, {header}, std::make_shared<PCHContainerOperations>(),
                          llvm::vfs::createPhysicalFileSystem());
  tool.clearArgumentsAdjusters();  // `arguments` are adjusted already
  IgnoringDiagConsumer quiet;
  tool.setDiagnosticConsumer(&quiet);
  tool.setPrintErrorMessage(false);
  PchBuilderFactory factory(pch);
  return tool.run(&factory) == 0 && llvm::sys::fs::exists(pch);
}

// Findings as the cache stores them, a JSON line each.
llvm::json::Array findingsToJson(const std::vector<Finding>& findings) {
  llvm::json::Array out;
  for (const Finding& f : findings) out.push_back(findingToJsonLine(f));
  return out;
}

// Appends what `lines` holds to `out`; false where a line is not a finding.
bool findingsFromJson(const llvm::json::Array& lines, std::vector<Finding>& out) {
  for (const llvm::json::Value& value : lines) {
    const auto line = value.getAsString();
    Finding finding;
    if (!line || !findingFromJsonLine(line->str(), finding)) return false;
    out.push_back(std::move(finding));
  }
  return true;
}

}  // namespace

std::vector<std::string> libTorchIncludePrefix(llvm::StringRef text, const UserHeaderReader& readUserHeader) {
  std::vector<std::string> includes;
  bool first = true;
  bool inBlockComment = false;
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (inBlockComment) {
      const size_t end = line.find("*/");
      if (end == llvm::StringRef::npos) continue;
      inBlockComment = false;
      line = line.substr(end + 2).trim();
    }
    if (line.startswith("/*")) {
      const size_t end = line.find("*/", 2);
      if (end == llvm::StringRef::npos) {
        inBlockComment = true;
        continue;
      }
      line = line.substr(end + 2).trim();
    }
    if (line.empty() || line.startswith("//")) continue;
    if (!line.consume_front("#")) break;  // code: the prefix ends
    line = line.ltrim();
    if (line.startswith("pragma once")) continue;
    if (!line.consume_front("include")) break;  // a macro or a condition could change what follows
    line = line.ltrim();
    if (line.consume_front("\"")) {
      // A user header could define macros LibTorch reads: only the file's own
      // first include is looked into, for the LibTorch headers it starts with.
      const auto userHeader =
          first && readUserHeader ? readUserHeader(line.take_until([](char c) { return c == '"'; })) : std::nullopt;
      if (userHeader)
        for (std::string& header : libTorchIncludePrefix(*userHeader)) includes.push_back(std::move(header));
      break;
    }
    if (!line.consume_front("<")) break;
    first = false;
    const llvm::StringRef header = line.take_until([](char c) { return c == '>'; });
    if (isLibTorchHeader(header)) includes.push_back(header.str());
  }
  return includes;
}

std::optional<std::string> PreambleCache::pchFor(const std::vector<std::string>& includes,
                                                 const std::vector<std::string>& arguments,
                                                 const std::string& workingDirectory) {
  // `arguments` name files by absolute paths: the working directory is not part of the key.
  std::vector<std::string> keyParts = arguments;
  keyParts.insert(keyParts.end(), includes.begin(), includes.end());
  keyParts.push_back(toolVersion());
  const std::string key = hashOf(keyParts);

  std::promise<std::optional<std::string>> promise;
  std::shared_future<std::optional<std::string>> pending;
  bool building = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = pchs_.find(key); it != pchs_.end()) {
      pending = it->second;
    } else {
      pending = promise.get_future().share();
      pchs_.emplace(key, pending);
      building = true;
    }
  }
  if (!building) return pending.get();  // another thread builds it

  llvm::SmallString<256> base(directory_);
  llvm::sys::path::append(base, "preambles", key);
  const std::string header = std::string(base) + ".h", pch = std::string(base) + ".pch";
  std::optional<std::string> result;
  if (llvm::sys::fs::exists(header) && llvm::sys::fs::exists(pch)) {
    result = pch;  // clang validates it against its headers when it loads it
    // Its own time marks its last use (clang checks the header's, not the PCH's).
    if (auto file =
            llvm::sys::fs::openNativeFileForReadWrite(pch, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_None)) {
      const auto now = std::chrono::system_clock::now();
      llvm::sys::fs::setLastAccessAndModificationTime(*file, now, now);
      llvm::sys::fs::closeFile(*file);
    }
  } else {
    std::string text = "// dtype-lint preamble: the LibTorch headers these TUs start with\n";
    for (const std::string& include : includes) text += "#include <" + include + ">\n";
    // The header is never rewritten once it exists: the PCH records its mtime.
    if ((llvm::sys::fs::exists(header) || writeAtomically(header, text)) &&
        buildPch(header, pch, arguments, workingDirectory)) {
      result = pch;
      evictLeastRecentlyUsedPchs(directory_, sizeLimit_, pch);
    }
  }
  promise.set_value(result);
  return result;
}

void evictLeastRecentlyUsedPchs(const std::string& cacheDirectory, uint64_t limit, const std::string& keep) {
  struct Entry {
    std::string pch;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  llvm::SmallString<256> dir(cacheDirectory);
  llvm::sys::path::append(dir, "preambles");
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(dir, error), end; it != end && !error; it.increment(error)) {
    llvm::sys::fs::file_status status;
    if (llvm::sys::path::extension(it->path()) != ".pch" || llvm::sys::fs::status(it->path(), status)) continue;
    entries.push_back({it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= limit) break;
    if (e.pch == keep) continue;
    llvm::sys::fs::remove(e.pch);
    llvm::SmallString<256> header(e.pch);
    llvm::sys::path::replace_extension(header, ".h");
    llvm::sys::fs::remove(header);
    total -= e.size;
  }
}

void PreambleCache::discard(const std::string& pch) {
  std::lock_guard<std::mutex> lock(mutex_);
  llvm::sys::fs::remove(pch);
  for (auto it = pchs_.begin(); it != pchs_.end(); ++it)
    if (it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready && it->second.get() == pch) {
      pchs_.erase(it);
      break;
    }
}

std::string ResultCache::keyOf(const std::string& mainFileText, const std::vector<std::string>& commandLine,
                               const std::string& configFingerprint) {
  std::vector<std::string> parts = commandLine;
  parts.push_back(mainFileText);
  parts.push_back(configFingerprint);
  parts.push_back(toolVersion());
  return hashOf(parts);
}

std::optional<CachedUnit> ResultCache::lookup(const std::string& key) const {
  llvm::SmallString<256> path(directory_);
  llvm::sys::path::append(path, "results", key + ".json");
  const auto text = readFile(std::string(path));
  if (!text || tooDeeplyNested(*text)) return std::nullopt;  // a damaged entry is a miss
  auto parsed = llvm::json::parse(*text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object* root = parsed->getAsObject();
  if (!root) return std::nullopt;
  CachedUnit unit;
  const auto* headers = root->getArray("headers");
  const auto* findings = root->getArray("findings");
  if (!headers || !findings) return std::nullopt;
  for (const llvm::json::Value& h : *headers) {
    const auto* entry = h.getAsObject();
    const auto headerPath = entry ? entry->getString("path") : std::nullopt;
    const auto headerHash = entry ? entry->getString("hash") : std::nullopt;
    if (!headerPath || !headerHash) return std::nullopt;
    const auto content = readFile(headerPath->str());
    if (!content || hashOf({*content}) != *headerHash) return std::nullopt;
    unit.userHeaders.push_back(headerPath->str());
  }
  if (!findingsFromJson(*findings, unit.findings)) return std::nullopt;
  if (const auto* roots = root->getArray("callableRoots"))
    for (const llvm::json::Value& r : *roots) {
      const auto* entry = r.getAsObject();
      const auto usr = entry ? entry->getString("usr") : std::nullopt;
      const auto* rootFindings = entry ? entry->getArray("findings") : nullptr;
      if (!usr || !rootFindings) return std::nullopt;
      CallableRootFindings callable{usr->str(), {}};
      if (!findingsFromJson(*rootFindings, callable.findings)) return std::nullopt;
      unit.callableRoots.push_back(std::move(callable));
    }
  if (const auto* notes = root->getArray("toolNotes"))
    for (const llvm::json::Value& n : *notes) {
      const auto* note = n.getAsObject();
      if (!note) return std::nullopt;
      unit.toolNotes.push_back(Note{SourceLocation{.file = note->getString("file").value_or("").str(),
                                                   .line = unsigned(note->getInteger("line").value_or(0)),
                                                   .column = unsigned(note->getInteger("column").value_or(0))},
                                    note->getString("message").value_or("").str()});
    }
  for (auto [name, usrs] : {std::pair{"defines", &unit.linkage.defines}, std::pair{"calls", &unit.linkage.calls},
                            std::pair{"reached", &unit.linkage.reached}})
    if (const auto* array = root->getArray(name))
      for (const llvm::json::Value& usr : *array)
        if (auto text = usr.getAsString()) usrs->push_back(text->str());
  unit.compileErrors = static_cast<unsigned>(root->getInteger("compileErrors").value_or(0));
  unit.firstError = root->getString("firstError").value_or("").str();
  unit.stoppedByFatalError = root->getBoolean("fatal").value_or(false);
  return unit;
}

void ResultCache::store(const std::string& key, const CachedUnit& unit) const {
  llvm::json::Array headers;
  for (const std::string& header : unit.userHeaders) {
    const auto content = readFile(header);
    if (!content) return;  // gone already: nothing to validate a hit against
    headers.push_back(llvm::json::Object{{"path", header}, {"hash", hashOf({*content})}});
  }
  llvm::json::Array callableRoots;
  for (const CallableRootFindings& callable : unit.callableRoots)
    callableRoots.push_back(llvm::json::Object{{"usr", callable.usr}, {"findings", findingsToJson(callable.findings)}});
  llvm::json::Array notes;
  for (const Note& n : unit.toolNotes)
    notes.push_back(llvm::json::Object{{"file", n.location.file},
                                       {"line", int64_t(n.location.line)},
                                       {"column", int64_t(n.location.column)},
                                       {"message", n.message}});
  llvm::json::Object root{{"headers", std::move(headers)},
                          {"findings", findingsToJson(unit.findings)},
                          {"callableRoots", std::move(callableRoots)},
                          {"toolNotes", std::move(notes)},
                          {"defines", unit.linkage.defines},
                          {"calls", unit.linkage.calls},
                          {"reached", unit.linkage.reached},
                          {"compileErrors", static_cast<int64_t>(unit.compileErrors)},
                          {"firstError", unit.firstError},
                          {"fatal", unit.stoppedByFatalError}};
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(root));
  llvm::SmallString<256> path(directory_);
  llvm::sys::path::append(path, "results", key + ".json");
  writeAtomically(std::string(path), text);
}

}  // namespace dtype_lint::analyzer
