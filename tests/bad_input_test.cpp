// Bad input, swept: every case gives one clear line and exit code 2, or a
// normal result (exit 0 or 1, what went wrong said in a note), and never a
// signal, a hang, an LLVM error or a stack trace.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <regex>

#include "cli_test_support.h"

namespace {

using dtype_lint::testing::CommandResult;
using dtype_lint::testing::lineCount;
using dtype_lint::testing::runCommand;
using dtype_lint::testing::writeFile;

const std::string kSource = DTYPE_LINT_SOURCE_DIR;
const std::string kMatmul = kSource + "/samples/DL101_mixed_dtype_matmul/buggy.cpp";

enum class Expect {
  ToolError,  // "dtype-lint: error: <needle>...", one line, exit 2
  ConfigError,  // "<file>[:<line>:<col>]: error: <needle>", one line, exit 2
  Normal,  // exit 0 or 1; the needle in stdout or stderr when given
  UnitFailure,  // exit 2; the needle in the file's note
  RunError,  // `run`: "dtype-lint: error: <needle>", one line, the shell's exit code (126, 127)
};

struct Case {
  const char* name;
  // Makes the case's files in the scratch directory (the working directory of
  // the command); returns the arguments.
  std::function<std::string(const std::filesystem::path& dir)> setup;
  Expect expect;
  const char* needle = "";
  int exitCode = -1;  // RunError's
  const char* absent = "";  // Normal's: what must not be said
};

std::string repeated(const std::string& unit, size_t times) {
  std::string out;
  out.reserve(unit.size() * times);
  for (size_t i = 0; i < times; ++i) out += unit;
  return out;
}

std::string database(const std::filesystem::path& dir, const std::string& entries) {
  return writeFile(dir / "build" / "compile_commands.json", entries);
}

std::string entry(const std::string& directory, const std::string& command, const std::string& file) {
  return "{\"directory\":\"" + directory + "\",\"command\":\"" + command + "\",\"file\":\"" + file + "\"}";
}

const std::string kPlain = "int twice(int x) { return 2 * x; }\n";
constexpr char kElfHeader[] = "\x7f"
                              "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\xff\xfe\0\x80";
const std::string kBinary(kElfHeader, sizeof kElfHeader);

std::string fifo(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  ::mkfifo(path.c_str(), 0644);
  return path.string();
}

const std::string kDeep = std::string(100000, '[');

std::vector<Case> cases() {
  using P = const std::filesystem::path&;
  auto plainFile = [](P d) { return writeFile(d / "ok.cpp", kPlain); };
  return {
      // Paths.
      {"MissingPath", [](P) { return "nothere.cpp"; }, Expect::ToolError, "no such file or directory: 'nothere.cpp'"},
      {"DanglingSymlink",
       [](P d) {
         std::filesystem::create_symlink(d / "gone.cpp", d / "link.cpp");
         return "link.cpp";
       },
       Expect::ToolError, "no such file or directory: 'link.cpp'"},
      {"Fifo",
       [](P d) {
         ::mkfifo((d / "pipe.cpp").c_str(), 0644);
         return "pipe.cpp";
       },
       Expect::ToolError, "not a regular file or a directory: 'pipe.cpp'"},
      {"DeviceFile", [](P) { return "/dev/null"; }, Expect::ToolError,
       "not a regular file or a directory: '/dev/null'"},
      {"DirectoryWithoutSources",
       [](P d) {
         writeFile(d / "src" / "notes.txt", "text");
         return "src";
       },
       Expect::ToolError, "no C++ or Python source files under"},
      {"EmptySource", [](P d) { return writeFile(d / "empty.cpp", ""); }, Expect::Normal},
      {"BinarySource", [](P d) { return writeFile(d / "blob.cpp", repeated(kBinary, 64)); }, Expect::Normal,
       "compile error(s)"},
      {"HugeSource",
       [](P d) {
         return writeFile(d / "huge.cpp", "/*" + repeated(std::string(1023, 'x') + "\n", 48 * 1024) + "*/\n" + kPlain);
       },
       Expect::Normal},
      {"TwentyThousandFunctions",
       [](P d) {
         std::string text;
         for (int i = 0; i < 20000; ++i)
           text += "int f" + std::to_string(i) + "(int x) { return x + " + std::to_string(i) + "; }\n";
         return writeFile(d / "many.cpp", text);
       },
       Expect::Normal},
      {"NestedThreeThousandDeep",
       [](P d) {
         return writeFile(d / "deep.cpp",
                          "int f() { return " + repeated("(", 3000) + "1" + repeated(")", 3000) + "; }\n");
       },
       Expect::Normal, "compile error(s)"},
      {"BracesThreeThousandDeep",
       [](P d) { return writeFile(d / "blocks.cpp", "void f() " + repeated("{", 3000) + repeated("}", 3000) + "\n"); },
       Expect::Normal, "compile error(s)"},
      {"SymlinkCycle",
       [](P d) {
         writeFile(d / "src" / "a.cpp", kPlain);
         std::filesystem::create_directory_symlink("..", d / "src" / "loop");
         return "src";
       },
       Expect::Normal},
      {"PathWithSpacesAndUnicode", [](P d) { return "'" + writeFile(d / "dir é x" / "train step.cpp", kPlain) + "'"; },
       Expect::Normal},
      {"NamedFileExcludedByTheConfig",
       [](P d) {
         writeFile(d / "a" / ".dtype-lint.yaml", "ExcludePaths: [\"b/*\"]\n");
         return writeFile(d / "a" / "b" / "x.cpp", kPlain);
       },
       Expect::Normal, "x.cpp' is left out by the ExcludePaths of '"},
      // Python sources: the Python front end reads whatever it is given.
      {"PythonSyntaxError", [](P d) { return writeFile(d / "broken.py", "def train(:\n    x = (\n"); }, Expect::Normal,
       "syntax error at line 1: findings cover what parsed"},
      {"PythonBinary", [](P d) { return writeFile(d / "blob.py", repeated(kBinary, 64)); }, Expect::Normal},
      {"PythonDeepNesting", [](P d) { return writeFile(d / "deep.py", "x = " + std::string(20000, '(') + "\n"); },
       Expect::Normal},
      {"PythonImportCycle",
       [](P d) {
         writeFile(d / "a.py", "from b import g\ndef f():\n    return g()\n");
         return writeFile(d / "b.py", "from a import f\ndef g():\n    return f()\nf()\n");
       },
       Expect::Normal},
      {"KernelFile", [](P) { return "/proc/self/status"; }, Expect::ToolError,
       "a file of the kernel's, not a source: '/proc/self/status'"},
      // Compile databases.
      {"BuildDirMissing", [=](P d) { return "-p nothere " + plainFile(d); }, Expect::ToolError,
       "no compile_commands.json in 'nothere'"},
      {"DatabaseNotJson",
       [=](P d) {
         database(d, "this is not json");
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "cannot load compilation database"},
      {"DatabaseBinary",
       [=](P d) {
         database(d, kBinary);
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "cannot load compilation database"},
      {"DatabaseNotAnArray",
       [=](P d) {
         database(d, "{\"directory\": \"/\"}");
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "Expected array"},
      {"DatabaseEntryWithoutFile",
       [=](P d) {
         database(d, "[{\"directory\":\"/tmp\",\"command\":\"c++ -c x.cpp\"}]");
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "Missing key: \"file\""},
      {"DatabaseEmptyForDirectory",
       [=](P d) {
         database(d, "[]");
         plainFile(d);
         return std::string("-p build .");
       },
       Expect::ToolError, "no translation unit under"},
      {"DatabaseIsADirectory",
       [=](P d) {
         std::filesystem::create_directories(d / "build" / "compile_commands.json");
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "cannot read compilation database"},
      {"DatabaseCompilerMissing",
       [=](P d) {
         const std::string file = plainFile(d);
         database(d, "[" + entry(d.string(), "/no/such/compiler -std=c++17 -c " + file, file) + "]");
         return "-p build " + file;
       },
       Expect::Normal},
      {"DatabaseDirectoryMissing",
       [=](P d) {
         const std::string file = plainFile(d);
         database(d, "[" + entry("/no/such/dir", "c++ -c " + file, file) + "]");
         return "-p build " + file;
       },
       Expect::UnitFailure, "the directory of its compile command, '/no/such/dir', does not exist"},
      {"DatabaseCommandWithUnbalancedQuote",
       [=](P d) {
         const std::string file = plainFile(d);
         database(d, "[" + entry(d.string(), "c++ '-DX -c " + file, file) + "]");
         return "-p build " + file;
       },
       Expect::Normal, "compile error(s)"},
      {"DatabaseEmptyArguments",
       [=](P d) {
         const std::string file = plainFile(d);
         database(d, "[{\"directory\":\"" + d.string() + "\",\"arguments\":[],\"file\":\"" + file + "\"}]");
         return "-p build " + file;
       },
       Expect::Normal, "compile error(s)"},
      {"DatabaseUnknownFlags",
       [=](P d) {
         const std::string file = plainFile(d);
         database(d,
                  "[" + entry(d.string(), "nvcc --expt-relaxed-constexpr -Xcompiler -fopenmp -c " + file, file) + "]");
         return "-p build " + file;
       },
       Expect::Normal},
      {"DatabaseNamesMissingFiles",
       [=](P d) {
         const std::string file = plainFile(d);
         std::string entries = entry(d.string(), "c++ -c " + file, file);
         for (const char* gone : {"gone1.cpp", "gone2.cpp", "gone3.cpp"})
           entries += "," + entry(d.string(), std::string("c++ -c ") + gone, (d / gone).string());
         database(d, "[" + entries + "]");
         return std::string("-p build .");
       },
       Expect::Normal, "3 entries of", -1, "gone2.cpp"},
      {"DatabaseNamesOnlyMissingFiles",
       [=](P d) {
         database(d, "[" + entry(d.string(), "c++ -c gone.cpp", (d / "gone.cpp").string()) + "]");
         return std::string("-p build .");
       },
       Expect::ToolError, "name files that do not exist (first: '"},
      {"DatabaseEntryIsADirectory",
       [=](P d) {
         std::filesystem::create_directories(d / "src.cpp");
         database(d, "[" + entry(d.string(), "c++ -c src.cpp", (d / "src.cpp").string()) + "]");
         return std::string("-p build .");
       },
       Expect::UnitFailure, "cannot read it: it is a directory"},
      {"SourceWithoutExtension", [](P d) { return writeFile(d / "train", kPlain); }, Expect::Normal, "", -1,
       "compile error"},
      {"ExplicitFileAlsoUnderASymlinkedDirectory",
       [](P d) {
         const std::string file = writeFile(d / "real" / "step.cpp", kPlain);
         std::filesystem::create_directory_symlink(d / "real", d / "link");
         return file + " link";
       },
       Expect::Normal, "real/step.cpp' is not in", -1, "link/step.cpp"},
      // Configs.
      {"ConfigBrokenYaml",
       [=](P d) { return "--config " + writeFile(d / "c.yaml", "Checks: [DL101\n") + " " + plainFile(d); },
       Expect::ConfigError, "Could not find closing ]"},
      {"ConfigChecksAsAList", [=](P d) { return "--config '{Checks: [DL101]}' " + plainFile(d); }, Expect::ConfigError,
       "expected one value here, not a list or a mapping"},
      {"ConfigWithAnAlias",
       [=](P d) {
         return "--config " + writeFile(d / "c.yaml", "Checks: &a \"DL1*\"\nWarningsAsErrors: *a\n") + " " +
                plainFile(d);
       },
       Expect::ConfigError, "YAML anchors and aliases (&name, *name) are not supported"},
      {"ConfigEmpty", [=](P d) { return "--config " + writeFile(d / "c.yaml", "") + " " + plainFile(d); },
       Expect::Normal},
      {"ConfigEndingInAnEmptyDocument",
       [=](P d) { return "--config " + writeFile(d / "c.yaml", "Checks: \"DL1*\"\n---\n") + " " + plainFile(d); },
       Expect::Normal},
      {"ConfigOfTwoDocuments",
       [=](P d) {
         return "--config " + writeFile(d / "c.yaml", "Checks: \"DL1*\"\n---\nChecks: \"-*\"\n") + " " + plainFile(d);
       },
       Expect::ConfigError, "more than one YAML document"},
      {"ConfigUnknownKey",
       [=](P d) { return "--config " + writeFile(d / "c.yaml", "Chekcs: DL1*\n") + " " + plainFile(d); },
       Expect::ConfigError, "unknown key 'Chekcs'"},
      {"ConfigBinary", [=](P d) { return "--config " + writeFile(d / "c.yaml", kBinary) + " " + plainFile(d); },
       Expect::ConfigError, "error: "},
      {"ConfigIsADirectory", [=](P d) { return "--config " + d.string() + " " + plainFile(d); }, Expect::ConfigError,
       "error: cannot read the config: it is a directory"},
      {"ConfigMissing", [=](P d) { return "--config nothere.yaml " + plainFile(d); }, Expect::ConfigError,
       "nothere.yaml: error: cannot read the config: No such file or directory"},
      {"NearestConfigBroken",
       [=](P d) {
         writeFile(d / ".dtype-lint.yaml", "Checks: {\n");
         return plainFile(d);
       },
       Expect::ConfigError, "error: "},
      {"InlineConfigBroken", [=](P d) { return "--config '{Checks: \"DL1*\"' " + plainFile(d); }, Expect::ConfigError,
       "error: "},
      // Option values.
      {"UnknownOption", [=](P d) { return "--frobnicate " + plainFile(d); }, Expect::ToolError,
       "Unknown command line argument '--frobnicate'"},
      {"FormatUnknown", [=](P d) { return "--format xml " + plainFile(d); }, Expect::ToolError,
       "Cannot find option named 'xml'"},
      {"JobsNotANumber", [=](P d) { return "-j abc " + plainFile(d); }, Expect::ToolError, "'abc' value invalid"},
      {"JobsNegative", [=](P d) { return "-j -1 " + plainFile(d); }, Expect::ToolError, "'-1' value invalid"},
      {"BoolOptionGivenAValue", [=](P d) { return "--fix=maybe " + plainFile(d); }, Expect::ToolError,
       "'maybe' is invalid value"},
      {"RulesMatchNothing", [=](P d) { return "--rules=DL999 " + plainFile(d); }, Expect::ToolError,
       "'DL999' matches no rule"},
      {"HeaderFilterNotARegex", [=](P d) { return "--header-filter='src/(' " + plainFile(d); }, Expect::ToolError,
       "--header-filter: not a regular expression"},
      {"HeaderFilterRepetitionOverflow",
       [=](P d) { return "--header-filter='a{99999999999999999999}' " + plainFile(d); }, Expect::ToolError,
       "a repetition count above 1000"},
      {"ShardZero", [=](P d) { return "--shard 0/0 " + plainFile(d); }, Expect::ToolError, "--shard: '0/0'"},
      {"ShardText", [=](P d) { return "--shard half " + plainFile(d); }, Expect::ToolError, "--shard: 'half'"},
      {"TimeLimitNegative", [=](P d) { return "--tu-time-limit=-1 " + plainFile(d); }, Expect::ToolError,
       "--tu-time-limit: not a number of seconds: '-1'"},
      {"TimeLimitText", [=](P d) { return "--tu-time-limit=soon " + plainFile(d); }, Expect::ToolError,
       "'soon' value invalid"},
      {"MemoryLimitNegative", [=](P d) { return "--tu-memory-limit=-5 " + plainFile(d); }, Expect::ToolError,
       "'-5' value invalid"},
      {"CacheSizeText", [=](P d) { return "--cache-size-limit lots " + plainFile(d); }, Expect::ToolError,
       "'lots' value invalid"},
      {"CacheDirIsAFile", [=](P d) { return "--cache-dir " + plainFile(d) + " " + plainFile(d); }, Expect::ToolError,
       "--cache-dir: cannot make '"},
      {"ExplainEmpty", [](P) { return "--explain ''"; }, Expect::ToolError, "--explain: no rule ''"},
      {"ExplainUnknown", [](P) { return "--explain DL999"; }, Expect::ToolError, "--explain: no rule 'DL999'"},
      {"NoInputs", [](P) { return ""; }, Expect::ToolError, "no input paths"},
      // Outputs that cannot be written: said before any analysis.
      {"OutputIsADirectory", [=](P d) { return "-o " + d.string() + " " + plainFile(d); }, Expect::ToolError,
       "-o: cannot write"},
      {"OutputDirectoryMissing", [=](P d) { return "-o nothere/report.json " + plainFile(d); }, Expect::ToolError,
       "-o: cannot write 'nothere/report.json': no directory 'nothere'"},
      {"OutputInProc", [=](P d) { return "-o /proc/dtype-lint.sarif " + plainFile(d); }, Expect::ToolError,
       "-o: cannot write '/proc/dtype-lint.sarif'"},
      {"BaselineWrittenToADirectory", [=](P d) { return "--write-baseline " + d.string() + " " + plainFile(d); },
       Expect::ToolError, "--write-baseline: cannot write"},
      {"FixesExportedToAMissingDirectory", [=](P d) { return "--export-fixes nothere/fixes.yaml " + plainFile(d); },
       Expect::ToolError, "--export-fixes: cannot write"},
      {"BaselineMissing", [=](P d) { return "--baseline nothere.json " + plainFile(d); }, Expect::ToolError,
       "cannot read the baseline 'nothere.json'"},
      {"BaselineBinary", [=](P d) { return "--baseline " + writeFile(d / "b.json", kBinary) + " " + plainFile(d); },
       Expect::ToolError, "is not a baseline"},
      // The translation unit's budgets.
      {"TimeBudgetSpent", [](P) { return "--no-cache --tu-time-limit=0.000001 " + kMatmul; }, Expect::Normal,
       "its time budget of 1e-06 s was spent"},
      {"MemoryBudgetSpent", [](P) { return "--no-cache --tu-memory-limit=1 " + kMatmul; }, Expect::Normal,
       "its memory budget of 1 MiB"},
      // Found by the sweep of issue 17 made outside the repository (docs/RELIABILITY.md).
      {"OutputIsAnInput", [=](P d) { return "-o " + plainFile(d) + " " + plainFile(d); }, Expect::ToolError,
       "is an input"},
      {"ExportedFixesOverAnInput", [=](P d) { return "--export-fixes " + plainFile(d) + " " + plainFile(d); },
       Expect::ToolError, "--export-fixes: '"},
      {"BaselineAndReportToOneFile", [=](P d) { return "-o r.json --write-baseline r.json " + plainFile(d); },
       Expect::ToolError, "-o and --write-baseline both write 'r.json'"},
      {"MergeOverItsInput",
       [](P d) { return "merge " + writeFile(d / "r.json", "{}") + " -o " + (d / "r.json").string(); },
       Expect::ToolError, "is an input"},
      {"PathWithANewline", [](P) { return "'a\nb.cpp'"; }, Expect::ToolError, "no such file or directory: 'a\\nb.cpp'"},
      {"DatabaseNestedDeep",
       [=](P d) {
         database(d, kDeep);
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "nested more than 256 deep at 1:257"},
      {"BaselineNestedDeep", [=](P d) { return "--baseline " + writeFile(d / "b.json", kDeep) + " " + plainFile(d); },
       Expect::ToolError, "nested more than 256 deep"},
      {"ConfigNestedDeep",
       [=](P d) { return "--config " + writeFile(d / "c.yaml", "Checks: " + kDeep) + " " + plainFile(d); },
       Expect::ConfigError, "1:265: error: nested more than 256 deep"},
      {"InlineConfigNestedDeep", [=](P d) { return "--config '{" + kDeep + "' " + plainFile(d); }, Expect::ConfigError,
       "nested more than 256 deep"},
      {"MergeNestedDeep", [](P d) { return "merge " + writeFile(d / "r.json", kDeep); }, Expect::ToolError,
       "nested more than 256 deep"},
      {"DatabaseIsAFifo",
       [=](P d) {
         fifo(d / "build" / "compile_commands.json");
         return "-p build " + plainFile(d);
       },
       Expect::ToolError, "not a regular file"},
      {"BaselineIsAFifo", [=](P d) { return "--baseline " + fifo(d / "b.json") + " " + plainFile(d); },
       Expect::ToolError, "not a regular file"},
      {"ConfigIsAFifo", [=](P d) { return "--config " + fifo(d / "c.yaml") + " " + plainFile(d); }, Expect::ConfigError,
       "not a regular file"},
      {"NearestConfigIsAFifo",
       [=](P d) {
         fifo(d / ".dtype-lint.yaml");
         return plainFile(d);
       },
       Expect::ConfigError, "not a regular file"},
      {"MergeInputIsAFifo", [](P d) { return "merge " + fifo(d / "r.json"); }, Expect::ToolError, "not a regular file"},
      {"IncludeOfAFifo",
       [](P d) {
         fifo(d / "pipe.h");
         return writeFile(d / "inc.cpp", "#include \"pipe.h\"\nint f();\n");
       },
       Expect::Normal, "compile error(s)"},
      {"IncludeOfDevZero", [](P d) { return writeFile(d / "zero.cpp", "#include \"/dev/zero\"\nint f();\n"); },
       Expect::Normal, "compile error(s)"},
      {"MacroExpandingExponentially",  // 2^26 terms in one declaration: the budget holds between declarations too
       [](P d) {
         std::string text = "#define A0 1\n";
         for (int i = 1; i <= 26; ++i) {
           const std::string previous = "A" + std::to_string(i - 1);
           text += "#define A" + std::to_string(i) + " " + previous + "+" + previous + "\n";
         }
         return "--no-cache --tu-memory-limit=64 " + writeFile(d / "macros.cpp", text + "int sum = A26;\n");
       },
       Expect::Normal, "the parse stopped at", -1, "compile error"},
      {"StackOverflowInClang",  // a million nested parentheses: a crash that ends the TU, not the run
       [](P d) {
         return "--no-cache --extra-arg=-fbracket-depth=2000000 " +
                writeFile(d / "parens.cpp",
                          "int f() { return " + repeated("(", 1000000) + "1" + repeated(")", 1000000) + "; }\n");
       },
       Expect::UnitFailure, "the analysis crashed"},
      {"ExpressionOfAHundredThousandTerms",
       [=](P d) {
         std::string sum = "1";
         for (int i = 1; i < 100000; ++i) sum += "+1";
         return writeFile(d / "sum.cpp", "int x = " + sum + ";\n") + " " + plainFile(d);
       },
       Expect::Normal, "", -1, "crashed"},
      {"JobsBeyondThreads", [=](P d) { return "-j 4294967295 " + plainFile(d); }, Expect::ToolError,
       "-j: at most 1024"},
      {"TimeLimitAYearOrMore", [](P) { return "--no-cache --tu-time-limit=1e300 " + kMatmul; }, Expect::Normal, "DL101",
       -1, "budget"},
      {"TimeLimitInfinite", [](P) { return "--no-cache --tu-time-limit=inf " + kMatmul; }, Expect::Normal, "DL101", -1,
       "budget"},
      {"ShardBeyond32Bits", [=](P d) { return "--shard 1/4294967297 " + plainFile(d); }, Expect::ToolError,
       "--shard: '1/4294967297'"},
      {"ExtraArgThatPrints", [=](P d) { return "--extra-arg=--help " + plainFile(d); }, Expect::ToolError,
       "--extra-arg: '--help' makes clang print"},
      {"InlineConfigWithoutBraces", [=](P d) { return "--config 'Checks: DL1*' " + plainFile(d); }, Expect::ConfigError,
       "inline YAML goes in braces"},
      {"ConfigNotUtf8",
       [=](P d) { return "--config " + writeFile(d / "c.yaml", "Checks: \"DL1\xff\"\n") + " " + plainFile(d); },
       Expect::ConfigError, "1:13: error: not UTF-8 text"},
      {"ResponseFileInTheDatabase",
       [](P d) {
         writeFile(d / "flags.rsp", "-DFROM_RESPONSE_FILE -std=c++17");
         const std::string file =
             writeFile(d / "rsp.cpp", "#ifndef FROM_RESPONSE_FILE\n#error the response file was not read\n#endif\n");
         database(d, "[" + entry(d.string(), "c++ @flags.rsp -c " + file, file) + "]");
         return "-p build " + file;
       },
       Expect::Normal, "", -1, "compile error"},
      {"ReportLineNotANumber",
       [](P d) {
         return "merge " + writeFile(d / "r.json", R"({"tool":"dtype-lint","findings":[{"rule":"DL101","message":"m",)"
                                                   R"("location":{"file":"t.cpp","line":1e30}}]})");
       },
       Expect::ToolError, "'line' is not a line or column number"},
      // merge.
      {"MergeNothing", [](P) { return "merge"; }, Expect::ToolError, "no reports to merge"},
      {"MergeMissing", [](P) { return "merge nothere.json"; }, Expect::ToolError, "nothere.json"},
      {"MergeBinary", [](P d) { return "merge " + writeFile(d / "r.sarif", kBinary); }, Expect::ToolError, "r.sarif"},
      {"MergeEmptyObject", [](P d) { return "merge " + writeFile(d / "r.json", "{}"); }, Expect::ToolError, "r.json"},
      {"MergeUnknownSeverity",
       [](P d) {
         return "merge " + writeFile(d / "r.json", R"({"tool":"dtype-lint","findings":[{"rule":"DL101","message":"m",)"
                                                   R"("severity":"fatal","location":{"file":"t.cpp","line":1}}]})");
       },
       Expect::ToolError, "'severity' is not error, warning or note: \"fatal\""},
      {"MergeFindingWithoutAFile",
       [](P d) {
         return "merge " + writeFile(d / "r.sarif", R"({"version":"2.1.0","runs":[{"results":[{"ruleId":"DL101",)"
                                                    R"("message":{"text":"m"},"locations":[]}]}]})");
       },
       Expect::ToolError, "a finding without a file"},
      {"MergeSarifRunsNull",
       [](P d) { return "merge " + writeFile(d / "r.sarif", R"({"version":"2.1.0","runs":null})"); }, Expect::ToolError,
       "'runs' is not an array"},
      {"MergeFindingsAnObject",
       [](P d) { return "merge " + writeFile(d / "r.json", R"({"tool":"dtype-lint","findings":{"rule":"DL101"}})"); },
       Expect::ToolError, "'findings' is not an array"},
      // run.
      {"RunNoProgram", [](P) { return "run --"; }, Expect::ToolError, "no program to run"},
      {"RunMissingProgram", [](P) { return "run -- ./no-such-program"; }, Expect::RunError,
       "cannot run './no-such-program'", 127},
      {"RunADirectory", [](P d) { return "run -- " + d.string(); }, Expect::RunError, "cannot run", 126},
      {"RunOfAProgramWithoutLibTorch", [](P) { return "run -- true"; }, Expect::Normal,
       "the hooks attached to no process of this run"},
      {"RunReportOverTheProgram",
       [](P d) {
         std::filesystem::copy_file("/bin/true", d / "prog");
         return std::string("run -o prog -- ./prog");
       },
       Expect::ToolError, "-o: 'prog' is the program to run"},
      {"RunBadExitCode", [](P) { return "run --error-exitcode 300 -- true"; }, Expect::ToolError,
       "--error-exitcode: not an exit code: '300'"},
  };
}

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class BadInput : public ::testing::TestWithParam<Case> {};

// What no input may cause.
void expectNoCrash(const CommandResult& run) {
  for (const char* crash : {"Stack dump", "LLVM ERROR", "PLEASE submit", "terminate called", "Segmentation",
                            "AddressSanitizer", "runtime error:"})
    EXPECT_EQ(run.err.find(crash), std::string::npos) << run.err;
  EXPECT_NE(run.exitCode, 124) << "hung (killed by timeout)";
  EXPECT_LT(run.exitCode, 128) << "killed by signal " << run.exitCode - 128 << "\n" << run.err;
}

TEST_P(BadInput, OneClearLineOrANormalResult) {
  const Case& c = GetParam();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dtype_lint_bad_input_" + std::to_string(::getpid()) + "_" + c.name);
  std::filesystem::create_directories(dir);
  const std::string args = c.setup(dir);
  const CommandResult run =
      runCommand("cd '" + dir.string() + "' && timeout 300 " + std::string(DTYPE_LINT_EXE) + " " + args);
  std::filesystem::remove_all(dir);
  SCOPED_TRACE("dtype-lint " + args);
  expectNoCrash(run);
  switch (c.expect) {
  case Expect::ToolError:
  case Expect::RunError:
    EXPECT_EQ(run.exitCode, c.expect == Expect::RunError ? c.exitCode : 2) << run.err;
    EXPECT_EQ(lineCount(run.err), 1u) << run.err;
    EXPECT_EQ(run.err.rfind("dtype-lint: error: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find(c.needle), std::string::npos) << run.err;
    break;
  case Expect::ConfigError:
    EXPECT_EQ(run.exitCode, 2) << run.err;
    EXPECT_EQ(lineCount(run.err), 1u) << run.err;
    EXPECT_TRUE(std::regex_search(run.err, std::regex(R"(^[^\n]+: error: )"))) << run.err;
    EXPECT_NE(run.err.find(c.needle), std::string::npos) << run.err;
    break;
  case Expect::Normal:
    EXPECT_TRUE(run.exitCode == 0 || run.exitCode == 1) << run.exitCode << "\n" << run.out << run.err;
    EXPECT_NE((run.out + run.err).find(c.needle), std::string::npos) << run.out << run.err;
    if (*c.absent) EXPECT_EQ((run.out + run.err).find(c.absent), std::string::npos) << run.out << run.err;
    break;
  case Expect::UnitFailure:
    EXPECT_EQ(run.exitCode, 2) << run.err;
    EXPECT_NE(run.out.find(c.needle), std::string::npos) << run.out << run.err;
    break;
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, BadInput, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
