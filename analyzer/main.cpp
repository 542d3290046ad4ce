// dtype-lint: the static front end. Exit codes: 0 no findings, 1 findings,
// 2 usage or tool error.
#include <fstream>
#include <iostream>
#include <thread>

#include <unistd.h>

#include "analysis.h"
#include "caches.h"
#include "compilation.h"
#include "dtype_lint/catalog.h"
#include "dtype_lint/report.h"
#include "launcher/launcher.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;
using namespace dtype_lint;

namespace {

cl::OptionCategory category("dtype-lint options");
cl::list<std::string> paths(cl::Positional, cl::desc("<file or directory>..."), cl::cat(category));
cl::opt<std::string> buildDir("p", cl::desc("Directory holding compile_commands.json"), cl::value_desc("build-dir"),
                              cl::cat(category));
cl::opt<ReportFormat> format("format", cl::desc("Output format"), cl::init(ReportFormat::Text),
                             cl::values(clEnumValN(ReportFormat::Text, "text", "clang-style diagnostics"),
                                        clEnumValN(ReportFormat::Json, "json", "JSON findings"),
                                        clEnumValN(ReportFormat::Sarif, "sarif", "SARIF 2.1.0")),
                             cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Write the report to this file"), cl::value_desc("file"),
                                cl::cat(category));
cl::opt<unsigned> jobs("j", cl::desc("Translation units analyzed in parallel (default: number of cores)"),
                       cl::init(0), cl::Prefix, cl::cat(category));
cl::list<std::string> ruleGlobs("rules", cl::desc("Rules to run: comma-separated globs, '-' excludes (DL1*,-DL107)"),
                                cl::CommaSeparated, cl::cat(category));
cl::opt<cl::boolOrDefault> useColor("use-color",
                                   cl::desc("Color in text output (default: only on a terminal), as in clang-tidy"),
                                   cl::cat(category));
cl::opt<std::string> configFile("config", cl::desc("Read this config instead of the nearest .dtype-lint.yaml"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<bool> noCache("no-cache", cl::desc("Analyze every translation unit, even unchanged ones"), cl::cat(category));
cl::opt<bool> noPreamble("no-pch", cl::desc("Parse LibTorch's headers in every translation unit instead of "
                                            "loading them from a cached precompiled header"),
                         cl::cat(category));
cl::opt<std::string> cacheDir("cache-dir",
                              cl::desc("Where the caches live (default: $DTYPE_LINT_CACHE_DIR, "
                                       "else $XDG_CACHE_HOME/dtype-lint, else ~/.cache/dtype-lint)"),
                              cl::value_desc("dir"), cl::cat(category));
cl::opt<bool> listRules("list-rules", cl::desc("Print the rule catalog and exit"), cl::cat(category));

int fail(const std::string& message) {
  std::cerr << "dtype-lint: error: " << message << '\n';
  return 2;
}

void printRules() {
  for (const RuleInfo& r : ruleCatalog()) {
    std::string frontEnds = r.checkedStatically && r.checkedAtRuntime ? "static+runtime"
                            : r.checkedStatically                     ? "static"
                            : r.checkedAtRuntime                      ? "runtime"
                                                                      : "planned";
    std::cout << r.id << "  " << qualifiedName(r) << "  [" << name(r.severity) << ", " << frontEnds << "]  "
              << r.shortDescription << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "run") return dtype_lint::runtime::runUnderHooks(argc, argv);
  cl::HideUnrelatedOptions(category);
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "dtype-lint: finds mixed-precision training bugs in LibTorch C++ code\n\n"
                                   "  dtype-lint [options] <file or directory>...      static analysis\n"
                                   "  dtype-lint run [options] -- program args...       runtime hooks\n",
                                   &errorStream)) {
    errorStream.flush();
    std::string line = parseErrors.substr(0, parseErrors.find('\n'));
    return fail(line.substr(line.find(": ") == std::string::npos ? 0 : line.find(": ") + 2));
  }
  if (listRules) {
    printRules();
    return 0;
  }
  if (paths.empty()) return fail("no input paths (usage: dtype-lint [options] <file or directory>...)");

  auto work = analyzer::selectWork(paths, buildDir);
  if (!work) return fail(llvm::toString(work.takeError()));
  for (const std::string& file : work->outsideDatabase)
    std::cerr << "dtype-lint: note: '" << file << "' is not in "
              << (work->databasePath.empty() ? std::string("a compilation database") : "'" + work->databasePath + "'")
              << "; analyzing it with fallback flags (C++17 and the LibTorch headers)\n";

  analyzer::AnalysisOptions options;
  options.jobs = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  options.ruleGlobs.assign(ruleGlobs.begin(), ruleGlobs.end());
  for (const std::string& g : options.ruleGlobs) {
    const std::string pattern = !g.empty() && g[0] == '-' ? g.substr(1) : g;
    bool matches = false;
    for (const RuleInfo& r : ruleCatalog()) matches = matches || globMatch(pattern, r.id) || globMatch(pattern, qualifiedName(r));
    if (!matches) return fail("--rules: '" + g + "' matches no rule (see --list-rules)");
  }
  auto configs = analyzer::configsFor(work->files, configFile);
  if (!configs) return fail(llvm::toString(configs.takeError()));
  options.configs = std::move(*configs);
  options.cacheDirectory = cacheDir.empty() ? analyzer::defaultCacheDirectory() : std::string(cacheDir);
  options.usePreamble = !noPreamble;
  options.useResultCache = !noCache;
  llvm::SmallString<256> cwd;
  llvm::sys::fs::current_path(cwd);
  analyzer::AnalysisResult result = analyzer::analyze(*work->database, work->files, options);

  for (const auto& unit : result.units)
    if (unit.compileErrors)
      std::cerr << "dtype-lint: note: '" << unit.file << "': " << unit.compileErrors
                << " compile error(s); findings cover what parsed (first: " << unit.firstError << ")\n";

  ReportOptions reportOptions;
  reportOptions.baseDir = std::string(cwd);
  SourceText source;
  if (!outputFile.empty()) {
    std::ofstream out(outputFile);
    if (!out) return fail("cannot write '" + outputFile + "'");
    writeReport(out, format, result.findings, reportOptions, source);
  } else {
    reportOptions.color = format == ReportFormat::Text &&
                          (useColor == cl::BOU_TRUE || (useColor == cl::BOU_UNSET && isatty(STDOUT_FILENO)));
    writeReport(std::cout, format, result.findings, reportOptions, source);
  }
  return result.findings.empty() ? 0 : 1;
}
