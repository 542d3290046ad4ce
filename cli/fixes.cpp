#include "fixes.h"

#include <map>

#include "report_output.h"
#include "clang/Tooling/Core/Replacement.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace dtype_lint::cli {
namespace {

namespace tooling = clang::tooling;

// Byte offsets of line/column positions (1-based, as clang counts columns).
class FileOffsets {
 public:
  std::optional<unsigned> offset(const std::string& file, unsigned line, unsigned column) {
    const std::vector<unsigned>* starts = lineStarts(file);
    if (!starts || line == 0 || line > starts->size() || column == 0) return std::nullopt;
    return (*starts)[line - 1] + column - 1;
  }

 private:
  const std::vector<unsigned>* lineStarts(const std::string& file) {
    auto [it, added] = files_.try_emplace(file);
    if (added) {
      auto buffer = llvm::MemoryBuffer::getFile(file);
      if (!buffer) return nullptr;
      it->second.push_back(0);
      const llvm::StringRef text = (*buffer)->getBuffer();
      for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n') it->second.push_back(unsigned(i + 1));
    }
    return it->second.empty() ? nullptr : &it->second;
  }
  std::map<std::string, std::vector<unsigned>> files_;
};

std::optional<tooling::Replacement> replacementOf(const Edit& edit, FileOffsets& offsets) {
  const auto begin = offsets.offset(edit.range.file, edit.range.line, edit.range.column);
  const auto end = offsets.offset(edit.range.file, edit.range.endLine, edit.range.endColumn + 1);
  if (!begin || !end || *end < *begin) return std::nullopt;
  return tooling::Replacement(edit.range.file, *begin, *end - *begin, edit.replacement);
}

}  // namespace

llvm::Error exportFixes(const std::string& path, const std::vector<Finding>& findings) {
  tooling::TranslationUnitDiagnostics diagnostics;
  FileOffsets offsets;
  for (const Finding& f : findings) {
    if (!f.fix) continue;
    tooling::Diagnostic diagnostic(qualifiedName(*f.rule),
                                   f.severity == Severity::Error ? tooling::Diagnostic::Error
                                                                 : tooling::Diagnostic::Warning,
                                   /*BuildDirectory=*/"");
    diagnostic.Message.Message = f.message;
    diagnostic.Message.FilePath = f.location.file;
    diagnostic.Message.FileOffset = offsets.offset(f.location.file, f.location.line, f.location.column).value_or(0);
    for (const Edit& edit : f.fix->edits)
      if (auto replacement = replacementOf(edit, offsets))
        if (llvm::Error error = diagnostic.Message.Fix[edit.range.file].add(*replacement)) return error;
    diagnostics.Diagnostics.push_back(std::move(diagnostic));
  }
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (error) return llvm::createStringError(error, "cannot write '%s': %s", path.c_str(), error.message().c_str());
  {
    llvm::yaml::Output yaml(out);
    yaml << diagnostics;
  }
  return closeWritten(out, "'" + path + "'");
}

llvm::Expected<size_t> applyFixes(const std::vector<Finding>& findings, llvm::sys::TimePoint<> analyzedAt,
                                  std::set<std::string>& changedSince) {
  FileOffsets offsets;
  std::map<std::string, tooling::Replacements> perFile;
  size_t applied = 0;
  // A file edited since the analysis read it would get its edits at the wrong places.
  auto changed = [&](const std::string& file) {
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(file, status) || status.getLastModificationTime() > analyzedAt) {
      changedSince.insert(file);
      return true;
    }
    return false;
  };
  for (const Finding& f : findings) {
    if (!f.fix || llvm::any_of(f.fix->edits, [&](const Edit& e) { return changed(e.range.file); })) continue;
    std::map<std::string, tooling::Replacements> trial = perFile;
    bool whole = true;
    for (const Edit& edit : f.fix->edits) {
      auto replacement = replacementOf(edit, offsets);
      if (!replacement) whole = false;
      else if (llvm::Error conflict = trial[edit.range.file].add(*replacement)) {
        llvm::consumeError(std::move(conflict));
        whole = false;
      }
    }
    if (!whole) continue;
    perFile = std::move(trial);
    ++applied;
  }
  for (const auto& [file, replacements] : perFile) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer) return llvm::createStringError(buffer.getError(), "cannot read '%s'", file.c_str());
    auto fixed = tooling::applyAllReplacements((*buffer)->getBuffer(), replacements);
    if (!fixed) return fixed.takeError();
    std::error_code error;
    llvm::raw_fd_ostream out(file, error);
    if (error) return llvm::createStringError(error, "cannot write '%s': %s", file.c_str(), error.message().c_str());
    out << *fixed;
    if (llvm::Error failed = closeWritten(out, "'" + file + "'")) return failed;
  }
  return applied;
}

}  // namespace dtype_lint::cli
