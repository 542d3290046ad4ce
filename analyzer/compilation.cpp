#include "compilation.h"

#include <algorithm>
#include <set>

#include "input_files.h"
#include "tool_flags.h"
#include "clang/Driver/Types.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

namespace dtype_lint::analyzer {

using clang::tooling::CompilationDatabase;
using clang::tooling::CompileCommand;

namespace {

// The project's database, and fallback flags for files it does not list.
class DatabaseWithFallback : public CompilationDatabase {
 public:
  explicit DatabaseWithFallback(std::unique_ptr<CompilationDatabase> inner) : inner_(std::move(inner)) {}

  std::vector<CompileCommand> getCompileCommands(llvm::StringRef file) const override {
    if (inner_) {
      auto commands = inner_->getCompileCommands(file);
      if (!commands.empty()) return commands;
    }
    std::vector<std::string> line{"clang++"};
    for (const std::string& flag : fallbackFlags()) line.push_back(flag);
    // A file whose name says no language (none, or ".txt") would be a linker input.
    llvm::StringRef extension = llvm::sys::path::extension(file);
    if (extension.empty() ||
        clang::driver::types::lookupTypeForExtension(extension.drop_front()) == clang::driver::types::TY_INVALID)
      line.insert(line.end(), {"-x", "c++"});
    line.push_back(file.str());
    return {CompileCommand(llvm::sys::path::parent_path(file), file, line, "")};
  }
  std::vector<std::string> getAllFiles() const override {
    return inner_ ? inner_->getAllFiles() : std::vector<std::string>{};
  }

 private:
  std::unique_ptr<CompilationDatabase> inner_;
};

std::string absolute(llvm::StringRef path) {
  llvm::SmallString<256> out(path);
  llvm::sys::fs::make_absolute(out);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  return std::string(out);
}

std::string realPath(llvm::StringRef path) {
  llvm::SmallString<256> out;
  if (llvm::sys::fs::real_path(path, out)) return absolute(path);
  return std::string(out);
}

bool isPythonFile(llvm::StringRef path) { return llvm::sys::path::extension(path) == ".py"; }

// The .py files under a directory, as a linter for Python finds them: hidden
// directories, caches, virtual environments and installed packages left out.
template <typename Add>
size_t addPythonFilesUnder(const std::string& directory, Add& add) {
  size_t found = 0;
  std::error_code ec;
  std::set<std::string> visited{realPath(directory)};
  for (llvm::sys::fs::recursive_directory_iterator it(directory, ec), end; it != end && !ec; it.increment(ec)) {
    const llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (llvm::sys::fs::is_directory(it->path())) {
      llvm::SmallString<256> marker(it->path());
      llvm::sys::path::append(marker, "pyvenv.cfg");
      if (name.startswith(".") || name == "__pycache__" || name == "site-packages" || name == "node_modules" ||
          llvm::sys::fs::exists(marker) || !visited.insert(realPath(it->path())).second)
        it.no_push();
    } else if (isPythonFile(it->path()) && llvm::sys::fs::is_regular_file(it->path())) {
      found += add(absolute(it->path()), false);
    }
  }
  return found;
}

bool isSourceFile(llvm::StringRef path) {
  const llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++" || ext == ".cu";
}

llvm::Expected<std::unique_ptr<CompilationDatabase>> loadDatabase(const std::string& jsonPath) {
  // Clang's loader parses with the YAML parser, which prints its own errors:
  // what is not JSON is said here, in one line.
  auto buffer = readInputFile(jsonPath);
  if (!buffer)
    return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                   "cannot read compilation database '%s': %s", jsonPath.c_str(),
                                   llvm::toString(buffer.takeError()).c_str());
  if (auto where = tooDeeplyNested((*buffer)->getBuffer()))
    return llvm::createStringError(std::errc::invalid_argument,
                                   "cannot load compilation database '%s': nested more than %zu deep at %s",
                                   jsonPath.c_str(), kMaxNesting, where->c_str());
  if (auto json = llvm::json::parse((*buffer)->getBuffer()); !json)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot load compilation database '%s': %s",
                                   jsonPath.c_str(), llvm::toString(json.takeError()).c_str());
  std::string error;
  auto db = clang::tooling::JSONCompilationDatabase::loadFromBuffer((*buffer)->getBuffer(), error,
                                                                    clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!db) {
    // The loader's message spans lines; the user gets the first.
    std::string firstLine = error.substr(0, error.find('\n'));
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot load compilation database '%s': %s",
                                   jsonPath.c_str(), firstLine.c_str());
  }
  return std::unique_ptr<CompilationDatabase>(std::move(db));
}

// compile_commands.json in the path's directory or a parent, or in their build/.
std::string findDatabaseNear(const std::string& path) {
  llvm::SmallString<256> dir(path);
  if (!llvm::sys::fs::is_directory(dir)) llvm::sys::path::remove_filename(dir);
  for (; !dir.empty(); dir.resize(llvm::sys::path::parent_path(dir).size())) {  // a prefix: no self-assignment
    for (const char* candidate : {"compile_commands.json", "build/compile_commands.json"}) {
      llvm::SmallString<256> file(dir);
      llvm::sys::path::append(file, candidate);
      if (llvm::sys::fs::exists(file)) return std::string(file);
    }
    if (dir == llvm::sys::path::root_path(dir)) break;
  }
  return "";
}

}  // namespace

llvm::Expected<WorkList> selectWork(const std::vector<std::string>& paths, const std::string& buildDir) {
  WorkList work;
  std::vector<std::string> inputs;
  for (const std::string& p : paths) {
    llvm::sys::fs::file_status status;
    if (const std::error_code error = llvm::sys::fs::status(p, status))
      return llvm::createStringError(error, "%s: '%s'",
                                     error == std::errc::no_such_file_or_directory ? "no such file or directory"
                                                                                   : error.message().c_str(),
                                     p.c_str());
    // A FIFO or a device would block the parse or make no sense to it.
    if (!llvm::sys::fs::is_regular_file(status) && !llvm::sys::fs::is_directory(status))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "not a regular file or a directory: '%s'",
                                     p.c_str());
    // The kernel's files say they are empty and are not: Clang would read nothing.
    const std::string real = realPath(p);
    if (llvm::StringRef(real).startswith("/proc/") || llvm::StringRef(real).startswith("/sys/"))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "a file of the kernel's, not a source: '%s'",
                                     p.c_str());
    inputs.push_back(absolute(p));
  }

  std::unique_ptr<CompilationDatabase> db;
  if (!buildDir.empty()) {
    std::string json = buildDir;
    if (llvm::sys::fs::is_directory(buildDir)) {
      llvm::SmallString<256> file(buildDir);
      llvm::sys::path::append(file, "compile_commands.json");
      json = std::string(file);
    }
    if (!llvm::sys::fs::exists(json))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no compile_commands.json in '%s'",
                                     buildDir.c_str());
    work.databasePath = absolute(json);
  } else {
    for (const std::string& input : inputs)
      if (work.databasePath = findDatabaseNear(input); !work.databasePath.empty()) break;
  }
  if (!work.databasePath.empty()) {
    auto loaded = loadDatabase(work.databasePath);
    if (!loaded) return loaded.takeError();
    // Commands that take their flags from @response files, as CMake writes them for long lines.
    db = clang::tooling::expandResponseFiles(std::move(*loaded), llvm::vfs::getRealFileSystem());
  }

  std::set<std::string> inDatabase;
  if (db)
    for (const std::string& f : db->getAllFiles()) inDatabase.insert(absolute(f));

  // Each file once, however it was reached (an explicit input is also under a
  // symlinked directory): explicit files first, then directories.
  std::set<std::string> files, outside, python, analyzedRealPaths;
  auto add = [&](const std::string& file, bool outsideDatabase) {
    if (!analyzedRealPaths.insert(realPath(file)).second) return false;
    if (isPythonFile(file)) {
      python.insert(file);
    } else {
      files.insert(file);
      if (outsideDatabase) outside.insert(file);
    }
    return true;
  };
  for (const std::string& input : inputs)
    if (!llvm::sys::fs::is_directory(input) && add(input, !inDatabase.count(input))) work.named.push_back(input);
  for (const std::string& input : inputs) {
    if (!llvm::sys::fs::is_directory(input)) continue;
    const size_t pythonFound = addPythonFilesUnder(input, add);
    const std::string prefix = input + "/";
    size_t found = 0, missing = 0;
    for (const std::string& f : inDatabase) {
      if (f.compare(0, prefix.size(), prefix) != 0) continue;
      // A stale database names files since deleted or never generated.
      if (!llvm::sys::fs::exists(f)) {
        if (!missing++) work.firstMissingFile = f;
        continue;
      }
      add(f, false);
      ++found;
    }
    work.missingFiles += missing;
    if (found || (pythonFound && !missing)) continue;
    if (db && missing)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the %zu entries under '%s' in '%s' name files that do not exist (first: '%s')",
                                     missing, input.c_str(), work.databasePath.c_str(), work.firstMissingFile.c_str());
    if (db)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no translation unit under '%s' in '%s'",
                                     input.c_str(), work.databasePath.c_str());
    // No database at all: every source file under the directory, with fallback flags.
    // Symlinked directories are followed once each (a link back up is a cycle).
    std::error_code ec;
    std::set<std::string> visited{realPath(input)};
    for (llvm::sys::fs::recursive_directory_iterator it(input, ec), end; it != end && !ec; it.increment(ec)) {
      if (llvm::sys::fs::is_directory(it->path())) {
        if (!visited.insert(realPath(it->path())).second) it.no_push();
      } else if (isSourceFile(it->path()) && llvm::sys::fs::is_regular_file(it->path())) {
        add(absolute(it->path()), true);
        ++found;
      }
    }
    if (!found && !pythonFound)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no C++ or Python source files under '%s' and no compile_commands.json found",
                                     input.c_str());
  }
  work.files.assign(files.begin(), files.end());
  work.pythonFiles.assign(python.begin(), python.end());
  work.outsideDatabase.assign(outside.begin(), outside.end());
  work.database = std::make_unique<DatabaseWithFallback>(std::move(db));
  return work;
}

}  // namespace dtype_lint::analyzer
