// The dtype-lint executable as users run it: exit codes, formats, bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_test_support.h"
#include "expectations.h"

namespace {

namespace fs = std::filesystem;

using dtype_lint::testing::CommandResult;
using dtype_lint::testing::dtypeLint;
using dtype_lint::testing::expectToolError;
using dtype_lint::testing::lineCount;
using dtype_lint::testing::readFile;
using dtype_lint::testing::TempDir;
using dtype_lint::testing::writeFile;

const std::string kSource = DTYPE_LINT_SOURCE_DIR;
const std::string kBuild = std::string("-p ") + DTYPE_LINT_BINARY_DIR;
const std::string kBuggy = kSource + "/samples/DL101_mixed_dtype_matmul/buggy.cpp";
const std::string kFixed = kSource + "/samples/DL101_mixed_dtype_matmul/fixed.cpp";

TEST(Cli, FindingsExitWithOneAndPrintClangStyleLines) {
  CommandResult run = dtypeLint(kBuild + " " + kBuggy);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  const auto markers = dtype_lint::testing::readMarkers(kBuggy);
  ASSERT_FALSE(markers.empty());
  const std::string expected = "buggy.cpp:" + std::to_string(markers.begin()->first) + ":";
  EXPECT_NE(run.out.find(expected), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[DL101-mixed-dtype-matmul]"), std::string::npos);
  EXPECT_NE(run.out.find("^"), std::string::npos) << "a caret under the source line";
  EXPECT_EQ(run.out.find("\033["), std::string::npos) << "no color when stdout is not a terminal";
}

TEST(Cli, CleanCodeExitsWithZeroAndPrintsNothing) {
  CommandResult run = dtypeLint(kBuild + " " + kFixed);
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST_F(TempDir, SarifToAFileParsesAndNamesTheRule) {
  const std::string out = (dir_ / "report.sarif").string();
  CommandResult run = dtypeLint(kBuild + " --format sarif -o " + out + " " + kBuggy);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_EQ(run.out, "");
  // The terminal still says what went to the file.
  EXPECT_NE(run.err.find(std::to_string(dtype_lint::testing::readMarkers(kBuggy).size()) + " findings written to '" +
                         out + "'"),
            std::string::npos)
      << run.err;
  const auto sarif = nlohmann::json::parse(readFile(out));
  EXPECT_EQ(sarif.at("version"), "2.1.0");
  const auto& results = sarif.at("runs").at(0).at("results");
  ASSERT_EQ(results.size(), dtype_lint::testing::readMarkers(kBuggy).size());
  for (const auto& r : results) {
    EXPECT_EQ(r.at("ruleId"), "DL101");
    EXPECT_GT(r.at("locations").at(0).at("physicalLocation").at("region").at("startLine").get<int>(), 0);
  }
}

TEST(Cli, JsonListsEachFindingWithItsLine) {
  CommandResult run = dtypeLint(kBuild + " --format json " + kBuggy);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  dtype_lint::testing::LineRules lines;
  for (const auto& f : json.at("findings")) lines.emplace(f.at("location").at("line"), f.at("rule"));
  EXPECT_EQ(lines, dtype_lint::testing::readMarkers(kBuggy));
}

// A tree of C++ and Python: one report of both languages, in every format,
// with each file's own configuration and NOLINT comments.
TEST_F(TempDir, CppAndPythonInOneReport) {
  const std::string python = kSource + "/samples/python/DL201_double_unscale/buggy.py";
  const std::string sarifFile = (dir_ / "report.sarif").string();
  CommandResult sarif = dtypeLint(kBuild + " --format sarif -o " + sarifFile + " " + kBuggy + " " + python);
  EXPECT_EQ(sarif.exitCode, 1) << sarif.err;
  std::set<std::pair<std::string, std::string>> reported;
  const auto report = nlohmann::json::parse(readFile(sarifFile));
  for (const auto& r : report.at("runs").at(0).at("results"))
    reported.emplace(
        fs::path(r.at("locations").at(0).at("physicalLocation").at("artifactLocation").at("uri").get<std::string>())
            .filename()
            .string(),
        r.at("ruleId").get<std::string>());
  EXPECT_TRUE(reported.count({"buggy.cpp", "DL101"}));
  EXPECT_TRUE(reported.count({"buggy.py", "DL201"}));

  const CommandResult text = dtypeLint(kBuild + " " + kBuggy + " " + python);
  EXPECT_NE(text.out.find("buggy.py:16:5: error: gradients of 'optimizer' unscaled again"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("[DL101-mixed-dtype-matmul]"), std::string::npos) << text.out;

  // A directory of Python scripts alone needs no compilation database; # NOLINT works.
  std::string script = readFile(python);
  script.replace(script.find("# dtype-lint-expect: DL201"), 26, "# NOLINT(DL201)");
  writeFile(dir_ / "scripts" / "train.py", script);
  writeFile(dir_ / "scripts" / ".venv" / "pyvenv.cfg", "home = /usr/bin\n");
  writeFile(dir_ / "scripts" / ".venv" / "lib" / "torch_like.py", readFile(python));
  const CommandResult directory = dtypeLint("--format json " + (dir_ / "scripts").string());
  EXPECT_EQ(directory.exitCode, 0) << directory.err << directory.out;
  EXPECT_TRUE(nlohmann::json::parse(directory.out).at("findings").empty()) << directory.out;
}

TEST(Cli, RuleFilterExcludesRules) {
  CommandResult run = dtypeLint(kBuild + " --rules=-DL101 " + kBuggy);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

TEST(Cli, ListRulesPrintsTheWholeCatalog) {
  CommandResult run = dtypeLint("--list-rules");
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_EQ(lineCount(run.out), dtype_lint::ruleCatalog().size() + 2) << run.out;  // and the two scopes' footnotes
  EXPECT_NE(run.out.find("DL101  DL101-mixed-dtype-matmul  [error; static, C++ runtime, Python runtime]"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("C++ runtime\u00b2: scalers announced with `dtype_lint/annotate.h`\n"), std::string::npos)
      << run.out;
  // Every field, for scripts (scripts/add_rule.py makes the docs' tables from it).
  const CommandResult json = dtypeLint("--list-rules --format=json");
  EXPECT_EQ(json.exitCode, 0) << json.err;
  const auto rules = nlohmann::json::parse(json.out)["rules"];
  ASSERT_EQ(rules.size(), dtype_lint::ruleCatalog().size());
  EXPECT_EQ(rules[0]["id"], "DL101");
  EXPECT_EQ(rules[0]["frontEnds"], nlohmann::json::array({"static", "cxx-runtime", "python-runtime"}));
}

TEST(Cli, ExplainPrintsTheRulesPageAsShipped) {
  CommandResult run = dtypeLint("--explain DL205");
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, readFile(kSource + "/docs/rules/DL205.md"));
  EXPECT_EQ(dtypeLint("--explain DL205-clip-before-unscale").out, run.out);
  expectToolError(dtypeLint("--explain DL999"), "no rule 'DL999'");
}

TEST(Cli, VersionNamesTheLlvmAndLibTorchItWasBuiltWith) {
  CommandResult run = dtypeLint("--version");
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out.rfind("dtype-lint 0.", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("LLVM/Clang 16."), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("LibTorch 1.13"), std::string::npos) << run.out;
}

// Bad input: one line on stderr, exit code 2.
TEST(Cli, MissingPathIsAToolError) { expectToolError(dtypeLint("/no/such/dir"), "no such file or directory"); }
TEST(Cli, NoPathIsAToolError) { expectToolError(dtypeLint(""), "no input paths"); }
TEST(Cli, UnknownOptionIsAToolError) { expectToolError(dtypeLint("--frobnicate " + kFixed), "frobnicate"); }
TEST(Cli, UnknownRuleGlobIsAToolError) { expectToolError(dtypeLint("--rules=DL9* " + kFixed), "matches no rule"); }

TEST_F(TempDir, BuildDirWithoutDatabaseIsAToolError) {
  expectToolError(dtypeLint("-p " + dir_.string() + " " + kFixed), "no compile_commands.json");
}

TEST_F(TempDir, MalformedDatabaseIsAToolError) {
  write("compile_commands.json", "[{\"directory\": ");
  expectToolError(dtypeLint("-p " + dir_.string() + " " + kFixed), "cannot load compilation database");
}

TEST_F(TempDir, DirectoryWithoutTranslationUnitsIsAToolError) {
  write("compile_commands.json", "[]");
  fs::create_directories(dir_ / "src");
  expectToolError(dtypeLint("-p " + dir_.string() + " " + (dir_ / "src").string()), "no translation unit under");
}

TEST_F(TempDir, FileOutsideTheDatabaseUsesFallbackFlagsAndCompileErrorsAreCounted) {
  const std::string file = write("broken.cpp", "#include <torch/torch.h>\n"
                                               "void train() {\n"
                                               "  auto loss = torch::randn({4}, torch::kHalf).sum(0);\n"
                                               "  loss.backward();\n"
                                               "  this_does_not_compile;\n"
                                               "}\n");
  CommandResult run = dtypeLint(file);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_NE(run.out.find("broken.cpp:4:3: warning: backward() on a Half loss"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("fallback flags"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("broken.cpp:1:1: note: 1 compile error(s)"), std::string::npos) << run.out;
}

TEST_F(TempDir, ShapesThatCrashedTheAnalysisOnRealProjectsAreAnalyzed) {
  // A specialization named only in a declaration (a map of an incomplete
  // struct) has no definition, and so no bases to read.
  const std::string declaredOnly = write(
      "declared_only.cpp", "#include <torch/torch.h>\n"
                           "#include <map>\n"
                           "struct Window;\n"
                           "double average(const std::map<int, Window>& windows);\n"
                           "double telemetry(const std::vector<torch::Tensor>& p) { return p.empty() ? 0 : 1; }\n");
  // A module class template with an out-of-line constructor (pytorch-cpp's
  // ResNet): some of its expressions have no type.
  const std::string moduleTemplate = write(
      "module_template.cpp",
      "#include <torch/torch.h>\n"
      "template <typename Block>\n"
      "class NetImpl : public torch::nn::Module {\n"
      " public:\n"
      "  explicit NetImpl(const std::array<int64_t, 3>& layers);\n"
      "  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }\n"
      " private:\n"
      "  torch::nn::Sequential make_layer(int64_t blocks);\n"
      "  torch::nn::Sequential layer1;\n"
      "  torch::nn::Linear fc;\n"
      "};\n"
      "template <typename Block>\n"
      "NetImpl<Block>::NetImpl(const std::array<int64_t, 3>& layers) : layer1(make_layer(layers[0])), fc(4, 2) {\n"
      "  register_module(\"layer1\", layer1);\n"
      "  register_module(\"fc\", fc);\n"
      "}\n"
      "template <typename Block>\n"
      "torch::nn::Sequential NetImpl<Block>::make_layer(int64_t blocks) {\n"
      "  torch::nn::Sequential layers;\n"
      "  for (int64_t i = 0; i < blocks; ++i) layers->push_back(Block(torch::nn::LinearOptions(4, 4)));\n"
      "  return layers;\n"
      "}\n"
      "template <typename Block = torch::nn::Linear>\n"
      "class Net : public torch::nn::ModuleHolder<NetImpl<Block>> {\n"
      " public:\n"
      "  using torch::nn::ModuleHolder<NetImpl<Block>>::ModuleHolder;\n"
      "};\n"
      "int main() {\n"
      "  return Net<>(std::array<int64_t, 3>{1, 1, 1})->forward(torch::randn({2, 4})).numel() > 0 ? 0 : 1;\n"
      "}\n");
  for (const std::string& file : {declaredOnly, moduleTemplate}) {
    CommandResult run = dtypeLint("--no-cache " + file);
    EXPECT_EQ(run.exitCode, 0) << file << run.out << run.err;
    EXPECT_EQ(run.out.find("crashed"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("compile error"), std::string::npos) << run.out;
  }
}

TEST_F(TempDir, ExtraArgsAdjustEveryCompileCommand) {
  const std::string file = write("flagged.cpp", "#include <torch/torch.h>\n"
                                                "void probe() {\n"
                                                "#ifdef HALF_INPUTS\n"
                                                "  auto x = torch::randn({2, 4}, torch::kHalf);\n"
                                                "#else\n"
                                                "  auto x = torch::randn({2, 4});\n"
                                                "#endif\n"
                                                "  torch::nn::Linear fc(4, 4);\n"
                                                "  fc(x);\n"
                                                "}\n");
  EXPECT_EQ(dtypeLint(file).exitCode, 0);
  for (const std::string option : {"--extra-arg=-DHALF_INPUTS", "--extra-arg-before=-DHALF_INPUTS"}) {
    CommandResult run = dtypeLint(option + " " + file);
    EXPECT_EQ(run.exitCode, 1) << option << run.err;
    EXPECT_NE(run.out.find("flagged.cpp:9:3: error: 'linear' on operands of different dtypes"), std::string::npos)
        << option << run.out;
  }
}

// The database entry of a sample, as the project's own build wrote it.
nlohmann::json sampleEntry(const std::string& file) {
  const auto database = nlohmann::json::parse(readFile(std::string(DTYPE_LINT_BINARY_DIR) + "/compile_commands.json"));
  for (const auto& entry : database)
    if (entry["file"] == file) return entry;
  ADD_FAILURE() << file << " is not in the build's compile_commands.json";
  return {};
}

TEST_F(TempDir, GccPrecompiledHeaderFlagsOfCMakeBuildsAreStripped) {
  // CMake's target_precompile_headers with GCC: clang cannot read GCC's PCH.
  nlohmann::json entry = sampleEntry(kBuggy);
  ASSERT_TRUE(entry.contains("command"));
  std::string command = entry["command"];
  command.insert(command.find(' '), " -Winvalid-pch -include " + dir_.string() + "/CMakeFiles/train.dir/cmake_pch.hxx");
  entry["command"] = command;
  write("compile_commands.json", nlohmann::json::array({entry}).dump());
  CommandResult run = dtypeLint("-p " + dir_.string() + " --cache-dir " + dir_.string() + "/cache " + kBuggy);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_EQ(run.out.find("compile error"), std::string::npos) << run.out;
  const auto markers = dtype_lint::testing::readMarkers(kBuggy);
  ASSERT_FALSE(markers.empty());
  EXPECT_NE(run.out.find("buggy.cpp:" + std::to_string(markers.begin()->first) + ":"), std::string::npos) << run.out;
}

TEST_F(TempDir, ParallelRunsReportInTheSameOrderAsASerialRun) {
  const std::string files =
      kSource + "/samples/DL101_mixed_dtype_matmul " + kSource + "/samples/DL105_low_precision_reduction";
  const std::string options = kBuild + " --no-cache --cache-dir " + dir_.string() + "/cache ";
  CommandResult serial = dtypeLint(options + "-j1 " + files);
  CommandResult parallel = dtypeLint(options + "-j4 " + files);
  EXPECT_EQ(serial.exitCode, 1) << serial.err;
  EXPECT_GE(lineCount(serial.out), 2u);
  EXPECT_EQ(parallel.out, serial.out);
}

// Where the analysis stops early the report says which function and why: a
// call chain deeper than the analysis follows.
TEST_F(TempDir, AnalysisCutShortIsReportedInTheReport) {
  std::string code = "#include <torch/torch.h>\n";
  code += "torch::Tensor f12(torch::Tensor x) { return x; }\n";
  for (int i = 11; i >= 0; --i)
    code += "torch::Tensor f" + std::to_string(i) + "(torch::Tensor x) { return f" + std::to_string(i + 1) + "(x); }\n";
  code += "int main() { f0(torch::ones({2})); }\n";
  const std::string file = write("deep.cpp", code);
  const CommandResult json = dtypeLint("--format json " + file);
  EXPECT_EQ(json.exitCode, 0) << json.err;
  const auto report = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << json.out;
  ASSERT_TRUE(report.contains("notifications")) << json.out;
  const std::string message = report.at("notifications").at(0).at("message");
  EXPECT_NE(message.find("deeper than 9"), std::string::npos) << message;
  const CommandResult sarif = dtypeLint("--format sarif " + file);
  EXPECT_NE(sarif.out.find("toolExecutionNotifications"), std::string::npos) << sarif.out;
  EXPECT_NE(dtypeLint(file).out.find("note: " + message), std::string::npos);
}

// A TU that stops at a fatal missing header (after a header with an empty
// out-of-line destructor, the shape that once crashed the CFG builder) is
// reported as such in JSON, and never costs the other files their findings.
TEST_F(TempDir, AFatalErrorInOneFileKeepsTheOthersFindings) {
  write("logger.h", "#pragma once\n#include <torch/torch.h>\n"
                    "class Logger {\n public:\n  ~Logger();\n  torch::Tensor last;\n};\nLogger::~Logger() {}\n");
  const std::string stopped = write("stopped.cpp", "#include \"logger.h\"\n#include \"missing/never_there.hpp\"\n"
                                                   "int main() { Logger l; }\n");
  const std::string other =
      write("other.cpp", "#include <torch/torch.h>\n"
                         "void f() { torch::randn({2, 4}, torch::kHalf).mm(torch::randn({4, 4})); }\n");
  const CommandResult run = dtypeLint("--format json " + stopped + " " + other);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  const auto report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.out;
  ASSERT_EQ(report.at("findings").size(), 1u) << run.out;
  EXPECT_EQ(report.at("findings").at(0).at("rule"), "DL101");
  const std::string note = report.at("notifications").at(0).at("message");
  EXPECT_NE(note.find("fatal"), std::string::npos) << note;
  EXPECT_NE(note.find("never_there.hpp"), std::string::npos) << note;
}

// Findings in headers included through "dir/../" name the header's plain path.
TEST_F(TempDir, HeaderPathsAreNormalized) {
  fs::create_directories(dir_ / "ppo");
  write("util.h", "#pragma once\n#include <torch/torch.h>\n"
                  "inline void f() { torch::randn({2, 4}, torch::kHalf).mm(torch::randn({4, 4})); }\n");
  const std::string main = write("main.cpp", "#include \"ppo/../util.h\"\nint main() { f(); }\n");
  const CommandResult run = dtypeLint("--format json " + main);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  const auto report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.out;
  ASSERT_EQ(report.at("findings").size(), 1u) << run.out;
  EXPECT_EQ(report.at("findings").at(0).at("location").at("file"), (dir_ / "util.h").string());
}

}  // namespace
