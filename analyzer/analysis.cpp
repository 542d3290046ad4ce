#include "analysis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"

#include "caches.h"
#include "dtype_flow.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "input_files.h"
#include "tool_flags.h"
#include "torch_api.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/thread.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace {

// Counts compile errors instead of printing LibTorch's diagnostics.
class ErrorCounter : public DiagnosticConsumer {
 public:
  explicit ErrorCounter(TranslationUnitReport& report) : report_(report) {}
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    // A fatal error (a missing header) ends the parse: it is the one to show.
    const bool firstFatal = level == DiagnosticsEngine::Fatal && !report_.fatal;
    report_.fatal = report_.fatal || level == DiagnosticsEngine::Fatal;
    if (report_.compileErrors++ == 0 || firstFatal) {
      llvm::SmallString<128> message;
      info.FormatDiagnostic(message);
      std::string where;
      if (info.hasSourceManager() && info.getLocation().isValid()) {
        PresumedLoc p = info.getSourceManager().getPresumedLoc(info.getLocation());
        if (p.isValid()) where = std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ": ";
      }
      report_.firstError = where + message.str().str();
    }
  }

 private:
  TranslationUnitReport& report_;
};

int macroInteger(Preprocessor& pp, llvm::StringRef name, int fallback) {
  // Looked up by libclang's own out-of-line code: the identifier table's
  // inline get() would start allocator slabs in this binary, and a sanitizer
  // build then takes libclang's later allocations there (an identifier read
  // from the PCH) for poisoned memory.
  Token identifier;
  identifier.startToken();
  identifier.setKind(tok::raw_identifier);
  identifier.setRawIdentifierData(name.data());
  identifier.setLength(static_cast<unsigned>(name.size()));
  const MacroInfo* macro = pp.getMacroInfo(pp.LookUpIdentifierInfo(identifier));
  if (!macro || macro->getNumTokens() != 1 || !macro->tokens_begin()->isLiteral()) return fallback;
  const Token& token = *macro->tokens_begin();
  int value = fallback;
  // Tokens of macros loaded from a PCH have no literal data: spell them.
  llvm::StringRef(pp.getSpelling(token)).getAsInteger(10, value);
  return value;
}

// The user headers (not LibTorch, not system) the TU read: what the result
// cache must see unchanged.
std::vector<std::string> userHeadersOf(const SourceManager& sm) {
  std::vector<std::string> headers;
  for (unsigned i = 0; i < sm.local_sloc_entry_size(); ++i) {
    const SrcMgr::SLocEntry& entry = sm.getLocalSLocEntry(i);
    if (!entry.isFile() || entry.getFile().getFileCharacteristic() != SrcMgr::C_User) continue;
    const FileEntry* file = entry.getFile().getContentCache().OrigEntry;
    if (!file || file == sm.getFileEntryForID(sm.getMainFileID()) || isLibTorchPath(file->getName())) continue;
    llvm::SmallString<256> path(file->tryGetRealPathName());
    if (path.empty()) path = file->getName();
    headers.push_back(std::string(path));
  }
  std::sort(headers.begin(), headers.end());
  headers.erase(std::unique(headers.begin(), headers.end()), headers.end());
  return headers;
}

// The TU's budget, checked as the parse goes: the first time it is found
// spent, the TU gets its note and the parse stops.
class BudgetGuard {
 public:
  BudgetGuard(CompilerInstance& ci, const UnitBudget::Clock& budget, CachedUnit& unit)
      : ci_(ci), budget_(budget), unit_(unit) {}

  // Whether the budget is spent, checked at `where`.
  bool spent(clang::SourceLocation where) {
    if (unit_.overBudget) return true;
    const auto spent = budget_.spent(ci_.getASTContext());
    if (!spent) return false;
    unit_.overBudget = true;
    const SourceManager& sm = ci_.getSourceManager();
    std::string at;  // "file:line", the file by its real path (not "/../lib/gcc/.../../include/...")
    if (const clang::SourceLocation expansion = sm.getExpansionLoc(where); expansion.isValid()) {
      const FileEntry* file = sm.getFileEntryForID(sm.getFileID(expansion));
      const llvm::StringRef real = file ? file->tryGetRealPathName() : "";
      at = fmt::format(" at {}:{}", real.empty() ? sm.getPresumedLoc(expansion).getFilename() : real,
                       sm.getExpansionLineNumber(expansion));
    }
    unit_.toolNotes.push_back(Note{SourceLocation::startOf(sm.getFileEntryForID(sm.getMainFileID())->getName().str()),
                                   fmt::format("not analyzed: the parse stopped{} because {} was spent", at, *spent)});
    return true;
  }

 private:
  CompilerInstance& ci_;
  const UnitBudget::Clock& budget_;
  CachedUnit& unit_;
};

// Macros that expand into millions of tokens never reach the next top-level
// declaration: the budget is checked as they expand, and once it is spent
// macros expand no more, so the declaration ends and the parse stops there.
class BudgetedMacroExpansion : public PPCallbacks {
 public:
  BudgetedMacroExpansion(Preprocessor& pp, BudgetGuard& guard) : pp_(pp), guard_(guard) {}

  void MacroExpands(const Token& name, const MacroDefinition&, clang::SourceRange, const MacroArgs*) override {
    constexpr unsigned kCheckEvery = 4096;
    if (++expansions_ % kCheckEvery == 0 && guard_.spent(name.getLocation())) pp_.SetMacroExpansionOnlyInDirectives();
  }

 private:
  Preprocessor& pp_;
  BudgetGuard& guard_;
  uint64_t expansions_ = 0;
};

class DtypeFlowConsumer : public ASTConsumer {
 public:
  DtypeFlowConsumer(CompilerInstance& ci, const ScalerApi& scalerApi, const UnitBudget::Clock& budget, CachedUnit& unit)
      : ci_(ci), scalerApi_(scalerApi), budget_(budget), unit_(unit), guard_(ci, budget, unit) {
    ci.getPreprocessor().addPPCallbacks(std::make_unique<BudgetedMacroExpansion>(ci.getPreprocessor(), guard_));
  }

  // Only declarations of user code are traversed: LibTorch's (parsed here or
  // loaded from the preamble PCH) are only looked up, never walked. Returning
  // false ends the parse: the TU's budget is spent.
  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl* d : group)
      if (isUserCode(d->getLocation(), ci_.getSourceManager())) userDecls_.push_back(d);
    // Sema passes instantiations here too and ignores the answer: the parse
    // stops at the next declaration the parser itself hands over.
    return !guard_.spent(group.isNull() ? clang::SourceLocation() : (*group.begin())->getLocation());
  }

  void HandleTranslationUnit(ASTContext& context) override {
    if (unit_.overBudget) return;  // the parse's note says so
    context.setTraversalScope(userDecls_);
    unit_.userHeaders = userHeadersOf(ci_.getSourceManager());
    Preprocessor& pp = ci_.getPreprocessor();
    const TorchVersion torch{macroInteger(pp, "TORCH_VERSION_MAJOR", 1), macroInteger(pp, "TORCH_VERSION_MINOR", 13)};
    AnalysisLimits limits;
    limits.unitBudget = &budget_;
    DtypeFlowResult result = analyzeDtypeFlow(context, torch, scalerApi_, limits);
    std::move(result.findings.begin(), result.findings.end(), std::back_inserter(unit_.findings));
    unit_.callableRoots = std::move(result.callableRoots);
    unit_.toolNotes.insert(unit_.toolNotes.end(), result.truncations.begin(), result.truncations.end());
    unit_.overBudget = result.unitBudgetSpent;
    unit_.linkage = std::move(result.linkage);
  }

 private:
  CompilerInstance& ci_;
  const ScalerApi& scalerApi_;
  const UnitBudget::Clock& budget_;
  CachedUnit& unit_;
  BudgetGuard guard_;
  std::vector<Decl*> userDecls_;
};

class DtypeFlowAction : public ASTFrontendAction {
 public:
  DtypeFlowAction(const ScalerApi& scalerApi, const UnitBudget::Clock& budget, CachedUnit& unit)
      : scalerApi_(scalerApi), budget_(budget), unit_(unit) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& ci, llvm::StringRef) override {
    return std::make_unique<DtypeFlowConsumer>(ci, scalerApi_, budget_, unit_);
  }

 private:
  const ScalerApi& scalerApi_;
  const UnitBudget::Clock& budget_;
  CachedUnit& unit_;
};

class ActionFactory : public tooling::FrontendActionFactory {
 public:
  ActionFactory(const ScalerApi& scalerApi, const UnitBudget::Clock& budget, CachedUnit& unit)
      : scalerApi_(scalerApi), budget_(budget), unit_(unit) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<DtypeFlowAction>(scalerApi_, budget_, unit_);
  }

 private:
  const ScalerApi& scalerApi_;
  const UnitBudget::Clock& budget_;
  CachedUnit& unit_;
};

std::string fingerprint(const ScalerApi& api) {
  std::string out;
  for (const auto* names : {&api.classes, &api.scale, &api.unscale, &api.step, &api.update}) {
    for (const std::string& name : *names) out += name + ",";
    out += ";";
  }
  return out;
}

// Reads only regular files, none larger than the TU's memory budget: an
// #include of a FIFO would block the parse, one of /dev/zero never end.
class RegularFilesOnly : public llvm::vfs::ProxyFileSystem {
 public:
  RegularFilesOnly(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs, uint64_t maxBytes)
      : ProxyFileSystem(std::move(fs)), maxBytes_(maxBytes) {}
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine& path) override {
    auto status = getUnderlyingFS().status(path);
    if (!status) return status.getError();
    if (status->getType() != llvm::sys::fs::file_type::regular_file)
      return std::make_error_code(std::errc::invalid_argument);
    if (maxBytes_ && status->getSize() > maxBytes_) return std::make_error_code(std::errc::file_too_large);
    return ProxyFileSystem::openFileForRead(path);
  }

 private:
  uint64_t maxBytes_;
};

// LLVM's fatal errors (a damaged PCH, a full disk) end the TU's analysis, not
// the run: the message goes into the TU's failure instead of to stderr.
thread_local std::string* fatalErrorOfThisThread = nullptr;

void onFatalError(void*, const char* reason, bool) {
  if (fatalErrorOfThisThread) *fatalErrorOfThisThread = reason;
  if (llvm::CrashRecoveryContext* recovery = llvm::CrashRecoveryContext::GetCurrent()) recovery->HandleExit(70);
  std::fprintf(stderr, "dtype-lint: error: LLVM: %s\n", reason);
}

// Runs work(0) ... work(count - 1) on up to `jobs` threads. The threads have
// large stacks (deep recursion in Clang and in the flow, an expression of
// 100,000 terms, needs more than the default 8 MiB, which llvm::ThreadPool
// cannot change) and live as long as the process: they are made once and
// never exit, which also keeps ASan's thread-exit bookkeeping (that clang 16's
// runtime gets wrong with glibc 2.36) out of the sanitizer builds' runs.
class Workers {
 public:
  static Workers& instance() {
    static auto* workers = new Workers();  // never destroyed: its threads end with the process
    return *workers;
  }

  // A stack overflow (an expression of millions of terms, which Clang's
  // checks walk recursively) is a crash like any other: the TU's recovery
  // context catches it, if its handler runs on a stack of its own. The
  // handlers CrashRecoveryContext::Enable() installed are made to use each
  // thread's alternate stack (serve()).
  Workers() {
    for (int signal : {SIGSEGV, SIGBUS}) {
      struct sigaction action;
      if (sigaction(signal, nullptr, &action) != 0 || action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN)
        continue;
      action.sa_flags |= SA_ONSTACK;
      sigaction(signal, &action, nullptr);
    }
  }

  void run(size_t count, unsigned jobs, llvm::function_ref<void(size_t)> work) {
    std::lock_guard<std::mutex> oneBatchAtATime(batchMutex_);
    std::unique_lock<std::mutex> lock(mutex_);
    while (threads_.size() < std::min<size_t>(std::max(1u, jobs), count))
      threads_.emplace_back(std::optional<unsigned>(kStackBytes), [this] { serve(); });
    work_ = work;
    count_ = count;
    next_ = 0;
    pending_ = count;
    ++batch_;
    wake_.notify_all();
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  static constexpr unsigned kStackBytes = 512u
                                          << 20;  // address space; pages are used only as deep as the recursion goes
  static constexpr size_t kSignalStackBytes = 1u << 20;  // LLVM's handlers, then the jump out of the TU

  void serve() {
    std::vector<char> signalStack(kSignalStackBytes);
    stack_t alternate{};
    alternate.ss_sp = signalStack.data();
    alternate.ss_size = signalStack.size();
    sigaltstack(&alternate, nullptr);
    std::unique_lock<std::mutex> lock(mutex_);
    for (uint64_t seen = 0;; seen = batch_) {
      wake_.wait(lock, [&] { return batch_ != seen && next_ < count_; });
      while (next_ < count_) {
        const size_t i = next_++;
        lock.unlock();
        work_(i);
        lock.lock();
        if (--pending_ == 0) done_.notify_all();
      }
    }
  }

  std::mutex batchMutex_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<llvm::thread> threads_;
  llvm::function_ref<void(size_t)> work_;
  size_t count_ = 0, next_ = 0, pending_ = 0;
  uint64_t batch_ = 0;
};

bool isPreambleFailure(const std::string& error) {
  return llvm::StringRef(error).contains("precompiled header") || llvm::StringRef(error).contains("PCH file") ||
         llvm::StringRef(error).contains("AST file");
}

// One parse of the TU, with the preamble PCH when there is one; `text`, when
// set, stands for the main file's.
CachedUnit parse(const tooling::CompilationDatabase& database, const std::string& file, const Config& config,
                 const UnitBudget& budget, const std::optional<std::string>& pch,
                 const std::optional<std::string>& text) {
  CachedUnit unit;
  TranslationUnitReport errors;
  // Its own file system: each tool's working directory is its compile
  // command's, never the process's (workers run side by side).
  tooling::ClangTool tool(
      database, {file}, std::make_shared<PCHContainerOperations>(),
      llvm::makeIntrusiveRefCnt<RegularFilesOnly>(
          llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>(llvm::vfs::createPhysicalFileSystem()), budget.memoryBytes));
  if (text) tool.mapVirtualFile(file, *text);
  tool.appendArgumentsAdjuster(analyzerArgumentsAdjuster());
  if (pch)
    tool.appendArgumentsAdjuster(
        tooling::getInsertArgumentAdjuster({"-include-pch", *pch}, tooling::ArgumentInsertPosition::BEGIN));
  ErrorCounter counter(errors);
  tool.setDiagnosticConsumer(&counter);
  tool.setPrintErrorMessage(false);
  const UnitBudget::Clock clock = budget.start();
  ActionFactory factory(config.scaler, clock, unit);
  // A crash inside Clang or the analysis loses this TU, never the run.
  llvm::CrashRecoveryContext recovery;
  std::string fatalError;
  fatalErrorOfThisThread = &fatalError;
  const bool finished = recovery.RunSafely([&] { tool.run(&factory); });
  fatalErrorOfThisThread = nullptr;
  if (!finished) {
    forgetDtypeFlowAfterCrash();  // the next TU on this thread starts clean
    CachedUnit crashed;
    crashed.failure = fatalError.empty() ? "the analysis crashed" : "the analysis stopped: " + fatalError;
    return crashed;
  }
  if (unit.overBudget) return unit;  // its note says the parse stopped; what failed to parse after it is no news
  unit.compileErrors = errors.compileErrors;
  unit.firstError = errors.firstError;
  unit.stoppedByFatalError = errors.fatal;
  return unit;
}

// The TU's command line as the analyzer runs it, and its main file's text.
struct UnitInputs {
  std::vector<std::string> commandLine;  // adjusted, input file included
  std::string directory;
  std::string text;
};

std::optional<UnitInputs> inputsOf(const tooling::CompilationDatabase& database, const std::string& file,
                                   llvm::StringRef text) {
  const auto commands = database.getCompileCommands(file);
  if (commands.empty()) return std::nullopt;
  UnitInputs inputs;
  inputs.commandLine = analyzerArgumentsAdjuster()(commands.front().CommandLine, file);
  inputs.directory = commands.front().Directory;
  inputs.text = text.str();
  return inputs;
}

// The command line without its input file, include paths made absolute and
// joined to their flag (`-I dir` and `-Idir` alike): what a preamble for it is
// built with, the same for TUs of any directory that see the same headers.
std::vector<std::string> withoutInput(const std::vector<std::string>& commandLine, const std::string& file,
                                      const std::string& directory) {
  static const llvm::StringRef kPathFlags[] = {"-isystem", "-iquote",  "-idirafter", "-include-pch",
                                               "-include", "-imacros", "-I"};
  auto absolute = [&](llvm::StringRef path) {
    llvm::SmallString<256> out(path);
    llvm::sys::fs::make_absolute(directory, out);
    llvm::sys::path::remove_dots(out, true);
    return std::string(out);
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < commandLine.size(); ++i) {
    llvm::StringRef arg = commandLine[i];
    if (i > 0 && (arg == file || absolute(arg) == file)) continue;
    const llvm::StringRef* flag = llvm::find_if(kPathFlags, [&](llvm::StringRef f) { return arg.startswith(f); });
    if (i == 0 || flag == std::end(kPathFlags)) {
      out.push_back(arg.str());
    } else if (arg == *flag && i + 1 < commandLine.size()) {
      // -include-pch takes its file only as a separate argument.
      if (arg == "-include-pch") out.push_back(arg.str());
      out.push_back((arg == "-include-pch" ? "" : arg.str()) + absolute(commandLine[++i]));
    } else {
      out.push_back(flag->str() + absolute(arg.drop_front(flag->size())));
    }
  }
  return out;
}

// Finds a quoted include as the compiler would: beside the file, then in the
// -iquote and -I directories of its command line.
UserHeaderReader userHeaderReader(const UnitInputs& inputs, const std::string& file) {
  std::vector<std::string> directories{std::string(llvm::sys::path::parent_path(file))};
  const std::vector<std::string>& args = inputs.commandLine;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    for (llvm::StringRef flag : {"-iquote", "-I"})
      if (arg.consume_front(flag)) {
        if (arg.empty() && i + 1 < args.size()) arg = args[++i];
        llvm::SmallString<256> dir(arg);
        llvm::sys::fs::make_absolute(inputs.directory, dir);
        directories.push_back(std::string(dir));
        break;
      }
  }
  return [directories](llvm::StringRef quoted) -> std::optional<std::string> {
    for (const std::string& dir : directories) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, quoted);
      if (auto buffer = readInputFile(std::string(path))) return (*buffer)->getBuffer().str();
      else llvm::consumeError(buffer.takeError());
    }
    return std::nullopt;
  };
}

// The TU, alone or with the files it is linked to (linked_units.h) included after its text.
CachedUnit analyzeOne(const tooling::CompilationDatabase& database, const std::string& file, const Config& config,
                      const UnitBudget& budget, PreambleCache* preambles, const ResultCache* results,
                      const std::vector<std::string>& linked = {}) {
  // Clang's tool would stop the process where it cannot enter the directory.
  for (const tooling::CompileCommand& command : database.getCompileCommands(file))
    if (!llvm::sys::fs::is_directory(command.Directory)) {
      CachedUnit unit;
      unit.failure = "the directory of its compile command, '" + command.Directory + "', does not exist";
      return unit;
    }
  // A source that cannot be read is a failure, not a clean result.
  auto source = readInputFile(file);
  if (!source) {
    CachedUnit unit;
    unit.failure = "cannot read it: " + llvm::toString(source.takeError());
    return unit;
  }
  const auto inputs = inputsOf(database, file, (*source)->getBuffer());
  if (!linked.empty() && !inputs) return CachedUnit{};
  const std::optional<std::string> text =
      linked.empty() ? std::nullopt : std::optional(withLinkedFiles(inputs->text, linked));
  std::string key;
  if (results && inputs) {
    key = ResultCache::keyOf(text.value_or(inputs->text), inputs->commandLine, fingerprint(config.scaler));
    if (auto cached = results->lookup(key)) return std::move(*cached);
  }
  std::optional<std::string> pch;
  std::vector<std::string> includes;
  if (preambles && inputs) includes = libTorchIncludePrefix(inputs->text, userHeaderReader(*inputs, file));
  if (!includes.empty())
    pch = preambles->pchFor(includes, withoutInput(inputs->commandLine, file, inputs->directory), inputs->directory);
  CachedUnit unit = parse(database, file, config, budget, pch, text);
  if (pch && (isPreambleFailure(unit.firstError) || !unit.failure.empty())) {
    // Stale (LibTorch's headers changed since it was built) or damaged (the
    // parse failed reading it): once more with a fresh one, else in full.
    preambles->discard(*pch);
    pch = preambles->pchFor(includes, withoutInput(inputs->commandLine, file, inputs->directory), inputs->directory);
    unit = parse(database, file, config, budget, pch, text);
    if (pch && (isPreambleFailure(unit.firstError) || !unit.failure.empty()))
      unit = parse(database, file, config, budget, std::nullopt, text);
  }
  if (results && inputs && unit.failure.empty() && !unit.overBudget) results->store(key, unit);
  return unit;
}

// What the TU's analysis together with the files defining its callees adds:
// findings reached through those calls (first, for their call chains). Where
// the files do not compile as one (names that clash between them), the TU
// keeps its own analysis and the report says that the calls were not followed.
void addCalleesAnalysis(CachedUnit& unit, CachedUnit withCallees, unsigned errorsApart, const std::string& file,
                        const std::vector<std::string>& calleeFiles) {
  if (!withCallees.failure.empty() || withCallees.compileErrors > errorsApart) {
    const std::string why = withCallees.failure.empty()
                                ? "analyzed with this file they do not compile (" + withCallees.firstError + ")"
                                : withCallees.failure + " when analyzed with this file";
    unit.toolNotes.push_back(Note{SourceLocation::startOf(file), fmt::format("calls into {} were not followed: {}",
                                                                             fmt::join(calleeFiles, ", "), why)});
    return;
  }
  std::move(unit.findings.begin(), unit.findings.end(), std::back_inserter(withCallees.findings));
  unit.findings = std::move(withCallees.findings);
  std::move(withCallees.callableRoots.begin(), withCallees.callableRoots.end(), std::back_inserter(unit.callableRoots));
  unit.linkage.reached = std::move(withCallees.linkage.reached);
  unit.toolNotes.insert(unit.toolNotes.end(), withCallees.toolNotes.begin(), withCallees.toolNotes.end());
}

}  // namespace

AnalysisResult analyze(const tooling::CompilationDatabase& database, const std::vector<std::string>& files,
                       const AnalysisOptions& options) {
  static std::once_flag fatalErrorHandler;
  std::call_once(fatalErrorHandler, [] { llvm::install_fatal_error_handler(onFatalError); });
  std::optional<PreambleCache> preambles;
  std::optional<ResultCache> results;
  if (!options.cacheDirectory.empty()) {
    if (options.usePreamble) preambles.emplace(options.cacheDirectory, options.preambleSizeLimit);
    if (options.useResultCache) results.emplace(options.cacheDirectory);
  }
  PreambleCache* const preambleCache = preambles ? &*preambles : nullptr;
  const ResultCache* const resultCache = results ? &*results : nullptr;
  auto configOf = [&](size_t i) {
    auto config = options.configs.find(files[i]);
    return config != options.configs.end() ? config->second : Config{};
  };
  std::vector<CachedUnit> units(files.size());
  std::vector<CachedUnit> withCallees(files.size());
  std::vector<std::vector<size_t>> linked;
  {
    std::mutex progress;
    size_t done = 0;
    Workers::instance().run(files.size(), options.jobs, [&](size_t i) {
      units[i] = analyzeOne(database, files[i], configOf(i), options.unitBudget, preambleCache, resultCache);
      if (!options.onUnitDone) return;
      std::lock_guard<std::mutex> lock(progress);
      options.onUnitDone(++done, files.size(), files[i]);
    });
    std::vector<Linkage> linkage;
    for (const CachedUnit& unit : units) linkage.push_back(unit.linkage);
    linked = linkedFiles(files, linkage, options.maxLinkedFiles);
    Workers::instance().run(files.size(), options.jobs, [&](size_t i) {
      if (linked[i].empty()) return;
      std::vector<std::string> paths;
      for (size_t j : linked[i]) paths.push_back(files[j]);
      withCallees[i] =
          analyzeOne(database, files[i], configOf(i), options.unitBudget, preambleCache, resultCache, paths);
    });
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (linked[i].empty() || !units[i].failure.empty()) continue;
    unsigned errorsApart = units[i].compileErrors;
    std::vector<std::string> names;
    for (size_t j : linked[i]) {
      errorsApart += units[j].compileErrors;
      names.push_back(std::string(llvm::sys::path::filename(files[j])));
    }
    addCalleesAnalysis(units[i], std::move(withCallees[i]), errorsApart, files[i], names);
  }

  // A function another file's analysis followed from its callers is reported
  // from there, not from its analysis alone.
  std::set<std::string> reachedFromCallers;
  for (const CachedUnit& unit : units)
    reachedFromCallers.insert(unit.linkage.reached.begin(), unit.linkage.reached.end());
  for (CachedUnit& unit : units)
    for (CallableRootFindings& root : unit.callableRoots)
      if (!reachedFromCallers.count(root.usr))
        std::move(root.findings.begin(), root.findings.end(), std::back_inserter(unit.findings));

  AnalysisResult result;
  result.units.resize(files.size());
  std::vector<std::vector<Finding>> perFile(files.size());
  std::vector<std::vector<Note>> toolNotes(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    CachedUnit& unit = units[i];
    result.units[i].file = files[i];
    perFile[i] = std::move(unit.findings);
    result.units[i].failure = std::move(unit.failure);
    toolNotes[i] = std::move(unit.toolNotes);
    result.units[i].compileErrors = unit.compileErrors;
    result.units[i].fatal = unit.stoppedByFatalError;
    result.units[i].firstError = std::move(unit.firstError);
    result.units[i].parsed = true;
  }

  std::vector<FindingBatch> batches(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    batches[i].findings = std::move(perFile[i]);
    batches[i].policy = configOf(i).policy;
    batches[i].mainFile = files[i];
  }
  SourceText source;
  result.findings = finalizeFindings(std::move(batches), options.commandLine, source);
  for (auto& notes : toolNotes)
    for (Note& n : notes) addToolNote(result.toolNotes, std::move(n));
  return result;
}

}  // namespace dtype_lint::analyzer
