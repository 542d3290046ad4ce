// dtype-lint's command line: one option parser (LLVM's cl, with a `run`
// subcommand) and one report writer for both front ends. Exit codes: 0 no
// findings, 1 findings, 2 usage or tool error (`run`: the program's own code).
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>

#include "analysis.h"
#include "caches.h"
#include "compilation.h"
#include "config.h"
#include "dtype_lint/cache_directory.h"
#include "dtype_lint/catalog.h"
#include "dtype_lint/findings_pipeline.h"
#include "fixes.h"
#include "merge_command.h"
#include "python_analysis.h"
#include "report_output.h"
#include "rule_pages.h"
#include "run_command.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;
using namespace dtype_lint;

namespace {

cl::OptionCategory category("dtype-lint options");
cl::SubCommand runCommand("run", "Run a program under the runtime hooks: dtype-lint run [options] -- program args...");
cl::SubCommand mergeCommand("merge", "Merge JSON and SARIF reports (CI shards, the nodes of a distributed run): "
                                     "dtype-lint merge REPORT... [-o FILE]");

// Both subcommands.
cl::opt<ReportFormat>
    format("format", cl::desc("Output format"), cl::init(ReportFormat::Text),
           cl::values(clEnumValN(ReportFormat::Text, "text", "clang-style diagnostics"),
                      clEnumValN(ReportFormat::Json, "json", "JSON findings"),
                      clEnumValN(ReportFormat::Sarif, "sarif", "SARIF 2.1.0"),
                      clEnumValN(ReportFormat::CodeClimate, "codeclimate", "GitLab code quality (Code Climate JSON)")),
           cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::opt<std::string> outputFile("o", cl::desc("Write the report to this file"), cl::value_desc("file"),
                                cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::list<std::string> ruleGlobs("rules",
                                cl::desc("Rules to run: comma-separated globs, '-' excludes (DL1*,-DL107); "
                                         "appended to the config's Checks"),
                                cl::CommaSeparated, cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::alias checksAlias("checks", cl::desc("Alias for --rules, as in clang-tidy"), cl::aliasopt(ruleGlobs),
                      cl::cat(category));
cl::list<std::string> warningsAsErrors("warnings-as-errors",
                                       cl::desc("Rules whose findings are errors (globs); appended to the config's "
                                                "WarningsAsErrors"),
                                       cl::CommaSeparated, cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::opt<std::string> baseline("baseline",
                              cl::desc("Report only the findings this baseline (--write-baseline) does not hold"),
                              cl::value_desc("file"), cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::opt<std::string> writeBaseline("write-baseline",
                                   cl::desc("Record the findings in this baseline file (fingerprints that survive "
                                            "line shifts)"),
                                   cl::value_desc("file"), cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::opt<cl::boolOrDefault> useColor("use-color",
                                    cl::desc("Color in text output (default: only on a terminal), as in clang-tidy"),
                                    cl::cat(category), cl::sub(*cl::AllSubCommands));

// Static analysis.
cl::list<std::string> paths(cl::Positional, cl::desc("<file or directory>..."), cl::cat(category));
cl::opt<std::string> buildDir("p", cl::desc("Directory holding compile_commands.json"), cl::value_desc("build-dir"),
                              cl::cat(category));
cl::opt<unsigned> jobs("j", cl::desc("Translation units analyzed in parallel (default: number of cores)"), cl::init(0),
                       cl::Prefix, cl::cat(category));
cl::opt<std::string> configFile("config",
                                cl::desc("Use this config for every file instead of the nearest .dtype-lint.yaml: "
                                         "a file, or inline YAML ('{Checks: \"DL1*\"}')"),
                                cl::value_desc("file or YAML"), cl::cat(category), cl::sub(*cl::AllSubCommands));
cl::opt<std::string> headerFilter("header-filter",
                                  cl::desc("Report findings in headers only where their path matches this regular "
                                           "expression (overrides the config's HeaderFilterRegex)"),
                                  cl::value_desc("regex"), cl::cat(category));
cl::opt<bool> dumpConfig("dump-config",
                         cl::desc("Print the configuration that applies to the first input (or the working "
                                  "directory), with the command line's options on top, and exit"),
                         cl::cat(category));
cl::opt<bool> noCache("no-cache", cl::desc("Analyze every translation unit, even unchanged ones"), cl::cat(category));
cl::opt<bool> noPreamble("no-pch",
                         cl::desc("Parse LibTorch's headers in every translation unit instead of "
                                  "loading them from a cached precompiled header"),
                         cl::cat(category));
cl::opt<std::string> cacheDir("cache-dir",
                              cl::desc("Where the caches live (default: $DTYPE_LINT_CACHE_DIR, "
                                       "else $XDG_CACHE_HOME/dtype-lint, else ~/.cache/dtype-lint)"),
                              cl::value_desc("dir"), cl::cat(category));
cl::opt<uint64_t> cacheSizeLimit("cache-size-limit",
                                 cl::desc("MiB the cached preamble PCHs may take; the least recently used "
                                          "are removed beyond it (default 2048)"),
                                 cl::init(2048), cl::value_desc("MiB"), cl::cat(category));
cl::opt<unsigned> maxLinkedFiles("max-linked-files",
                                 cl::desc("Files of the run that define a translation unit's callees, analyzed "
                                          "with it so that calls across files are followed (default 8; 0: none)"),
                                 cl::init(8), cl::value_desc("N"), cl::cat(category));
cl::opt<double> unitTimeLimit("tu-time-limit",
                              cl::desc("Seconds one translation unit's parse and analysis may take; a unit past it "
                                       "ends early with a note (default 300; 0: no limit)"),
                              cl::init(300), cl::value_desc("seconds"), cl::cat(category));
cl::opt<uint64_t> unitMemoryLimit("tu-memory-limit",
                                  cl::desc("MiB one translation unit's AST and sources may take; a unit past it "
                                           "ends early with a note (default 8192; 0: no limit)"),
                                  cl::init(8192), cl::value_desc("MiB"), cl::cat(category));
cl::list<std::string> extraArgs("extra-arg",
                                cl::desc("Additional argument to append to the compiler command line (repeatable)"),
                                cl::value_desc("arg"), cl::cat(category));
cl::list<std::string> extraArgsBefore("extra-arg-before",
                                      cl::desc("Additional argument to prepend to the compiler command line "
                                               "(repeatable)"),
                                      cl::value_desc("arg"), cl::cat(category));
cl::opt<bool> applyFixIts("fix", cl::desc("Apply the fixes of the findings that have one, then report what is left"),
                          cl::cat(category));
cl::opt<std::string> exportFixesFile("export-fixes",
                                     cl::desc("Write the findings' fixes to this YAML file (clang-apply-replacements)"),
                                     cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> shard("shard",
                           cl::desc("Analyze only shard I of N (1-based) of the translation units, for CI matrix "
                                    "jobs; neighbours in path order stay in one shard"),
                           cl::value_desc("I/N"), cl::cat(category));
cl::opt<bool> listRules("list-rules", cl::desc("Print the rule catalog and exit"), cl::cat(category));
cl::opt<std::string> explain("explain",
                             cl::desc("Print a rule's page (what it flags, the error it prevents, bad and "
                                      "good code, the fix) and exit"),
                             cl::value_desc("rule"), cl::cat(category));

cl::list<std::string> mergeInputs(cl::Positional, cl::desc("<report>..."), cl::sub(mergeCommand));

// Runtime hooks.
cl::opt<bool> profile("profile",
                      cl::desc("Report the precision profile of the run's GEMMs (DL305) even when nothing in it is "
                               "worth a finding"),
                      cl::cat(category), cl::sub(runCommand));
cl::opt<int> errorExitCode("error-exitcode", cl::desc("Exit with this code when there are findings (0-255)"),
                           cl::init(-1), cl::cat(category), cl::sub(runCommand));

constexpr const char* kRunUsage =
    "usage: dtype-lint run [--format text|json|sarif|codeclimate] [-o FILE] [--rules GLOBS] [--config FILE] "
    "[--profile] [--error-exitcode N] -- program args...";

// The catalog: one line per rule, then what the footnote marks mean; with
// --format=json, every field (scripts/add_rule.py makes the docs' tables from it).
void printRules() {
  if (format == ReportFormat::Json) {
    llvm::json::OStream json(llvm::outs(), 2);
    json.object([&] {
      json.attributeArray("rules", [&] {
        for (const RuleInfo& r : ruleCatalog())
          json.object([&] {
            json.attribute("id", std::string(r.id));
            json.attribute("name", std::string(r.name));
            json.attribute("severity", std::string(name(r.severity)));
            json.attributeArray("frontEnds", [&] {
              for (const auto& [bit, frontEnd] : {std::pair{kStatic, "static"}, std::pair{kCxxRuntime, "cxx-runtime"},
                                                  std::pair{kPythonRuntime, "python-runtime"}})
                if (r.checkedBy(bit)) json.value(frontEnd);
            });
            json.attribute("cxxRuntimeScope", std::string(describe(r.cxxRuntimeScope)));
            json.attribute("cxxRuntimeScopeMark", std::string(footnoteMark(r.cxxRuntimeScope)));
            json.attribute("frontEndsText", frontEndsText(r));
            json.attribute("frontEndsMarked", frontEndsText(r, /*scopeMarks=*/true));
            json.attribute("shortDescription", std::string(r.shortDescription));
            json.attribute("fullDescription", std::string(r.fullDescription));
            json.attribute("docs", docsPath(r));
          });
      });
    });
    llvm::outs() << "\n";
    return;
  }
  for (const RuleInfo& r : ruleCatalog())
    std::cout << r.id << "  " << qualifiedName(r) << "  [" << name(r.severity) << "; " << frontEndsText(r, true)
              << "]  " << r.shortDescription << '\n';
  for (const auto scope : {CxxRuntimeScope::kScalersAnnouncedOrRawAten, CxxRuntimeScope::kScalersAnnounced})
    std::cout << "C++ runtime" << footnoteMark(scope) << ": " << describe(scope) << '\n';
}

void printVersion(llvm::raw_ostream& out) {
  out << "dtype-lint " << kToolVersion << "\n  built with LLVM/Clang " << LLVM_VERSION_STRING
      << "\n  runtime adapter built against LibTorch " << DTYPE_LINT_TORCH_VERSION
      << " (other LibTorch versions get theirs built on first use)\n";
}

int explainRule(const std::string& id) {
  const RuleInfo* rule = findRule(id.substr(0, id.find('-')));
  if (!rule) return cli::toolError("--explain: no rule '" + id + "' (see --list-rules)");
  std::cout << cli::rulePage(rule->id);
  return 0;
}

// Holds what is written to stderr (fd 2) while it lives.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(file_ ? ::dup(STDERR_FILENO) : -1) {
    if (saved_ >= 0) ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~StderrCapture() { release(); }
  // Restores stderr; what was written meanwhile.
  std::string release() {
    if (saved_ < 0) return "";
    llvm::errs().flush();
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    std::string text;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) text += char(c);
    std::fclose(file_);
    return text;
  }

 private:
  std::FILE* file_;
  int saved_;
};

// Parses the options; an error message (cl's first line, without its prefix) on failure.
std::optional<std::string> parseOptions(int argc, const char* const* argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(printVersion);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  // cl writes some errors (an option's bad value) straight to stderr: they
  // are caught there too, so that the user gets one line.
  StderrCapture capture;
  const bool parsed =
      cl::ParseCommandLineOptions(argc, argv,
                                  "dtype-lint: finds mixed-precision training bugs in LibTorch C++ code\n\n"
                                  "  dtype-lint [options] <file or directory>...      static analysis\n"
                                  "  dtype-lint run [options] -- program args...       runtime hooks\n"
                                  "  dtype-lint merge REPORT... [-o FILE]               one report from several\n",
                                  &errorStream);
  errors = capture.release() + errorStream.str();
  if (parsed) {
    std::cerr << errors;
    return std::nullopt;
  }
  std::string line = errors.substr(0, errors.find('\n'));
  return line.substr(line.find(": ") == std::string::npos ? 0 : line.find(": ") + 2);
}

// Why a file the run will write cannot be written, checked before the work
// that fills it.
std::optional<std::string> unwritable(const std::string& option, const std::string& path) {
  if (path.empty()) return std::nullopt;
  const std::string cannot = option + ": cannot write '" + path + "': ";
  llvm::SmallString<256> parent(path);
  llvm::sys::path::remove_filename(parent);
  if (parent.empty()) parent = ".";
  if (llvm::sys::fs::is_directory(path)) return cannot + "it is a directory";
  if (!llvm::sys::fs::is_directory(parent)) return cannot + "no directory '" + std::string(parent) + "'";
  // Opened as the report will be (a file made for the test is removed again).
  const bool existed = llvm::sys::fs::exists(path);
  const int fd = ::open(path.c_str(), existed ? O_WRONLY | O_APPEND : O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return cannot + std::strerror(errno);
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
  return std::nullopt;
}

// Two paths that name one file (the same real path, or the same path where it
// does not exist yet).
bool sameFile(const std::string& a, const std::string& b) {
  llvm::sys::fs::UniqueID first, second;
  if (!llvm::sys::fs::getUniqueID(a, first) && !llvm::sys::fs::getUniqueID(b, second)) return first == second;
  llvm::SmallString<256> x(a), y(b);
  llvm::sys::fs::make_absolute(x);
  llvm::sys::fs::make_absolute(y);
  llvm::sys::path::remove_dots(x, true);
  llvm::sys::path::remove_dots(y, true);
  return x == y;
}

llvm::Expected<cli::OutputOptions> outputOptions() {
  const std::pair<const char*, const std::string*> outputs[] = {
      {"-o", &outputFile}, {"--write-baseline", &writeBaseline}, {"--export-fixes", &exportFixesFile}};
  auto refuse = [](const std::string& why) {
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), why.c_str());
  };
  for (size_t i = 0; i < std::size(outputs); ++i) {
    const auto [option, path] = outputs[i];
    if (path->empty()) continue;
    // An input, or another output, is never written over.
    for (const auto* inputs : {&paths, &mergeInputs})
      for (const std::string& input : *inputs)
        if (sameFile(*path, input)) return refuse(std::string(option) + ": '" + *path + "' is an input");
    if (!baseline.empty() && sameFile(*path, baseline) && outputs[i].second != &writeBaseline)
      return refuse(std::string(option) + ": '" + *path + "' is the baseline read");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].second->empty() && sameFile(*path, *outputs[j].second))
        return refuse(std::string(outputs[j].first) + " and " + option + " both write '" + *path + "'");
    if (auto why = unwritable(option, *path)) return refuse(*why);
  }
  cli::OutputOptions out;
  out.format = format;
  out.file = outputFile;
  // -o all.sarif: the format its name says, unless --format says otherwise.
  if (!format.getNumOccurrences()) {
    const llvm::StringRef file(outputFile);
    if (file.endswith(".sarif")) out.format = ReportFormat::Sarif;
    else if (file.endswith(".json")) out.format = ReportFormat::Json;
  }
  if (useColor != cl::BOU_UNSET) out.color = useColor == cl::BOU_TRUE;
  out.writeBaseline = writeBaseline;
  if (!baseline.empty()) {
    auto read = cli::readBaseline(baseline);
    if (!read) return read.takeError();
    out.baseline = std::move(*read);
  }
  return out;
}

// A config error is already a "file:line:col: error: ..." line.
int configError(llvm::Error error) {
  std::cerr << llvm::toString(std::move(error)) << '\n';
  return 2;
}

// The config that applies where the user stands: the one given, else the
// nearest to the first input, else to the working directory.
llvm::Expected<analyzer::Config> configHere() {
  if (!configFile.empty()) return analyzer::givenConfig(configFile);
  llvm::SmallString<256> here(paths.empty() ? "." : paths.front().c_str());
  llvm::sys::fs::make_absolute(here);
  if (llvm::sys::fs::is_directory(here)) llvm::sys::path::append(here, "-");
  return analyzer::configFor(std::string(here));
}

// Shard `index` of `count` (1-based) of the files in path order: contiguous
// blocks, so that a directory's files, which call each other most, stay together.
std::vector<std::string> shardOf(const std::vector<std::string>& sorted, unsigned index, unsigned count) {
  const size_t begin = sorted.size() * (index - 1) / count, end = sorted.size() * index / count;
  return std::vector<std::string>(sorted.begin() + begin, sorted.begin() + end);
}

// The Python front end's findings, through the same pipeline as the C++
// analyzer's (each file's configuration), then both in one order.
void addPythonFindings(analyzer::AnalysisResult& result, const std::vector<std::string>& files,
                       const analyzer::AnalysisOptions& options) {
  python::PythonAnalysisResult python = python::analyzePythonFiles(files);
  std::map<std::string, FindingBatch> byFile;
  for (Finding& finding : python.findings) {
    FindingBatch& batch = byFile[finding.location.file];
    auto config = options.configs.find(finding.location.file);
    batch.policy = config != options.configs.end() ? config->second.policy : options.configs.at(files.front()).policy;
    batch.findings.push_back(std::move(finding));
  }
  std::vector<FindingBatch> batches;
  for (auto& [file, batch] : byFile) batches.push_back(std::move(batch));
  SourceText source;
  std::vector<Finding> selected = finalizeFindings(std::move(batches), options.commandLine, source);
  FindingBatch both;
  both.findings = std::move(result.findings);
  both.findings.insert(both.findings.end(), std::make_move_iterator(selected.begin()),
                       std::make_move_iterator(selected.end()));
  std::vector<FindingBatch> one;
  one.push_back(std::move(both));
  result.findings = finalizeFindings(std::move(one), FindingPolicy{}, source);
  for (Note& note : python.toolNotes) addToolNote(result.toolNotes, std::move(note));
}

int analyzePaths(const FindingPolicy& commandLine, const cli::OutputOptions& output) {
  if (paths.empty()) return cli::toolError("no input paths (usage: dtype-lint [options] <file or directory>...)");
  constexpr unsigned kMaxJobs = 1024;  // each worker reserves 512 MiB of stack address space
  if (jobs > kMaxJobs) return cli::toolError(fmt::format("-j: at most {} ({} asked)", kMaxJobs, jobs.getValue()));
  // Flags that make clang print instead of compile would write into the report.
  for (const auto* args : {&extraArgs, &extraArgsBefore})
    for (const std::string& arg : *args)
      if (llvm::StringRef a(arg); a == "-###" || a == "-v" || a.startswith("--help") || a.startswith("-help") ||
                                  a.startswith("--version") || a.startswith("-print-") || a.startswith("--print-"))
        return cli::toolError("--extra-arg: '" + arg + "' makes clang print instead of compile");
  if (!(unitTimeLimit >= 0))
    return cli::toolError(fmt::format("--tu-time-limit: not a number of seconds: '{:g}'", unitTimeLimit.getValue()));
  // The default place may be unusable (a read-only home) and the run goes on
  // without caches; a directory the user named must work.
  if (!cacheDir.empty() && !(noCache && noPreamble))
    if (std::error_code error = llvm::sys::fs::create_directories(cacheDir.getValue());
        error || !llvm::sys::fs::is_directory(cacheDir.getValue()))
      return cli::toolError("--cache-dir: cannot make '" + cacheDir +
                            "' a directory: " + (error ? error.message() : std::string("a file is in the way")));
  auto work = analyzer::selectWork(paths, buildDir);
  if (!work) return cli::toolError(llvm::toString(work.takeError()));
  std::vector<std::string> allFiles = work->files;
  allFiles.insert(allFiles.end(), work->pythonFiles.begin(), work->pythonFiles.end());
  auto configs = analyzer::configsFor(allFiles, configFile);
  if (!configs) return configError(configs.takeError());
  // A config's ExcludePaths leave its files out of the analysis, not only out
  // of the report; a file the user named is said to be left out.
  for (const std::string& file : work->named)
    if (const analyzer::Config& config = (*configs)[file]; config.policy.excludes(file))
      std::cerr << "dtype-lint: note: '" << file << "' is left out by the ExcludePaths of '" << config.path << "'\n";
  for (auto* files : {&work->files, &work->outsideDatabase, &work->pythonFiles})
    llvm::erase_if(*files, [&](const std::string& file) { return (*configs)[file].policy.excludes(file); });
  if (!extraArgs.empty() || !extraArgsBefore.empty()) {
    // As clang-tidy does: after the driver name, and at the end of every command.
    auto adjusted = std::make_unique<clang::tooling::ArgumentsAdjustingCompilations>(std::move(work->database));
    adjusted->appendArgumentsAdjuster(
        clang::tooling::getInsertArgumentAdjuster(extraArgsBefore, clang::tooling::ArgumentInsertPosition::BEGIN));
    adjusted->appendArgumentsAdjuster(
        clang::tooling::getInsertArgumentAdjuster(extraArgs, clang::tooling::ArgumentInsertPosition::END));
    work->database = std::move(adjusted);
  }
  if (!shard.empty()) {
    const auto [indexText, countText] = llvm::StringRef(shard).split('/');
    unsigned index = 0, count = 0;  // getAsInteger refuses what does not fit, unlike %u
    if (indexText.getAsInteger(10, index) || countText.getAsInteger(10, count) || count == 0 || index == 0 ||
        index > count)
      return cli::toolError("--shard: '" + shard + "' is not I/N with 1 <= I <= N");
    work->files = shardOf(work->files, index, count);
    work->pythonFiles = shardOf(work->pythonFiles, index, count);
    llvm::erase_if(work->outsideDatabase,
                   [&](const std::string& file) { return !llvm::is_contained(work->files, file); });
  }
  if (work->missingFiles)
    std::cerr << "dtype-lint: note: " << work->missingFiles << " entries of '" << work->databasePath
              << "' name files that do not exist (first: '" << work->firstMissingFile
              << "'); skipped: is the database stale?\n";
  for (const std::string& file : work->outsideDatabase)
    std::cerr << "dtype-lint: note: '" << file << "' is not in "
              << (work->databasePath.empty() ? std::string("a compilation database") : "'" + work->databasePath + "'")
              << "; analyzing it with fallback flags (C++17 and the LibTorch headers)\n";

  analyzer::AnalysisOptions options;
  options.jobs = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  options.commandLine = commandLine;
  options.configs = std::move(*configs);
  options.cacheDirectory = cacheDir.empty() ? defaultCacheDirectory() : std::string(cacheDir);
  options.usePreamble = !noPreamble;
  options.preambleSizeLimit = cacheSizeLimit * (uint64_t(1) << 20);
  options.useResultCache = !noCache;
  options.maxLinkedFiles = maxLinkedFiles;
  options.unitBudget.seconds = unitTimeLimit;
  options.unitBudget.memoryBytes = unitMemoryLimit << 20;
  // A progress line for runs over many files, only where a person watches stderr.
  const bool showProgress = work->files.size() > 1 && isatty(STDERR_FILENO);
  if (showProgress)
    options.onUnitDone = [](size_t done, size_t total, const std::string& file) {
      std::cerr << "\r\033[K";
      if (done < total) std::cerr << '[' << done << '/' << total << "] " << llvm::sys::path::filename(file).str();
      std::cerr << std::flush;
    };
  llvm::CrashRecoveryContext::Enable();
  auto analyzedAt = std::chrono::system_clock::now();
  analyzer::AnalysisResult result;
  if (!work->files.empty()) result = analyzer::analyze(*work->database, work->files, options);
  if (!work->pythonFiles.empty()) addPythonFindings(result, work->pythonFiles, options);
  if (!exportFixesFile.empty())
    if (llvm::Error error = cli::exportFixes(exportFixesFile, result.findings))
      return cli::toolError(llvm::toString(std::move(error)));
  if (applyFixIts) {
    // A fix can uncover a finding its own hid (one per place and rule): a few passes, as ruff does.
    constexpr int kFixPasses = 4;
    size_t applied = 0;
    std::set<std::string> changedSince;
    for (int pass = 0; pass < kFixPasses; ++pass) {
      auto count = cli::applyFixes(result.findings, analyzedAt, changedSince);
      if (!count) return cli::toolError(llvm::toString(count.takeError()));
      if (!*count) break;
      applied += *count;
      analyzedAt = std::chrono::system_clock::now();
      result = analyzer::AnalysisResult{};
      if (!work->files.empty()) result = analyzer::analyze(*work->database, work->files, options);
      if (!work->pythonFiles.empty()) addPythonFindings(result, work->pythonFiles, options);
    }
    for (const std::string& file : changedSince)
      std::cerr << "dtype-lint: note: '" << file << "' changed during the analysis: its fixes were not applied\n";
    std::cerr << "dtype-lint: note: applied " << applied << " fix(es)\n";
  }

  bool failed = false;
  for (const auto& unit : result.units) {
    if (unit.compileErrors)
      result.toolNotes.push_back(
          Note{SourceLocation::startOf(unit.file),
               fmt::format("{} compile error(s); {} ({}: {})", unit.compileErrors,
                           unit.fatal ? "the parse stopped at a fatal error, so only the code before it was analyzed"
                                      : "findings cover what parsed",
                           unit.fatal ? "fatal" : "first", unit.firstError)});
    if (!unit.failure.empty()) {
      failed = true;
      result.toolNotes.push_back(Note{SourceLocation::startOf(unit.file),
                                      unit.failure + "; no findings for this file (the others are reported)"});
    }
  }
  const auto reported = cli::emitReport(std::move(result.findings), result.toolNotes, output, /*toStderr=*/false);
  if (!reported || failed) return 2;
  return reported->empty() ? 0 : 1;
}

int runProgram(char** program, const FindingPolicy& commandLine, const cli::OutputOptions& output) {
  if (!program || !*program) return cli::toolError(std::string("no program to run (") + kRunUsage + ")");
  cli::RunOptions run;
  if (errorExitCode.getNumOccurrences()) {
    if (errorExitCode < 0 || errorExitCode > 255)
      return cli::toolError("--error-exitcode: not an exit code: '" + std::to_string(errorExitCode) + "'");
    run.errorExitCode = errorExitCode;
  }
  auto config = configHere();
  if (!config) return configError(config.takeError());
  run.environment = analyzer::runtimeEnvironment(*config);
  // The hooks count values only for the rules selected (the counts are their cost).
  if (const RuleSelection checks = config->policy.with(commandLine).checks; !checks.globs.empty())
    run.environment.emplace_back(kChecksVariable, checks.text());
  run.policy = config->policy;
  if (profile) run.environment.emplace_back("DTYPE_LINT_PROFILE", "1");
  return cli::runUnderHooks(program, run, commandLine, output);
}

}  // namespace

int main(int argc, char** argv) {
  // `run`: the options end at "--"; what follows is the program's own command line.
  const bool run = argc >= 2 && std::string_view(argv[1]) == "run";
  int optionCount = argc;
  char** program = nullptr;
  if (run) {
    for (int i = 2; i < argc; ++i)
      if (std::string_view(argv[i]) == "--") {
        optionCount = i;
        program = argv + i + 1;
        break;
      }
  }
  if (auto error = parseOptions(optionCount, argv))
    return cli::toolError(run ? *error + " (" + kRunUsage + ")" : *error);
  if (listRules) {
    printRules();
    return 0;
  }
  if (explain.getNumOccurrences()) return explainRule(explain);
  FindingPolicy commandLine;
  commandLine.checks.globs.assign(ruleGlobs.begin(), ruleGlobs.end());
  commandLine.warningsAsErrors.globs.assign(warningsAsErrors.begin(), warningsAsErrors.end());
  for (const RuleSelection* globs : {&commandLine.checks, &commandLine.warningsAsErrors})
    if (auto glob = globs->unmatchedGlob())
      return cli::toolError(std::string(globs == &commandLine.checks ? "--rules" : "--warnings-as-errors") + ": '" +
                            *glob + "' matches no rule (see --list-rules)");
  if (headerFilter.getNumOccurrences()) {
    if (std::string error = regexError(headerFilter); !error.empty())
      return cli::toolError("--header-filter: not a regular expression: " + error);
    commandLine.headerFilterRegex = headerFilter;
  }
  if (dumpConfig) {
    auto config = configHere();
    if (!config) return configError(config.takeError());
    config->policy = config->policy.with(commandLine);
    std::cout << analyzer::dumpConfig(*config);
    return 0;
  }
  auto output = outputOptions();
  if (!output) return cli::toolError(llvm::toString(output.takeError()));
  if (mergeCommand) {
    auto config = configHere();
    if (!config) return configError(config.takeError());
    return cli::mergeReports(mergeInputs, config->policy, commandLine, *output);
  }
  return run ? runProgram(program, commandLine, *output) : analyzePaths(commandLine, *output);
}
