// .dtype-lint.yaml and the options that override it, as users write them:
// clang-tidy's keys, errors at their line and column, --dump-config.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace {

using dtype_lint::testing::CommandResult;
using dtype_lint::testing::dtypeLint;
using dtype_lint::testing::lineCount;
using dtype_lint::testing::TempDir;

const std::string kSource = DTYPE_LINT_SOURCE_DIR;
const std::string kBuild = std::string("-p ") + DTYPE_LINT_BINARY_DIR;
const std::string kMatmul = kSource + "/samples/DL101_mixed_dtype_matmul/buggy.cpp";
const std::string kReduction = kSource + "/samples/DL105_low_precision_reduction/buggy.cpp";

// A config error is one "file:line:col: error: ..." line and exit code 2.
void expectConfigError(const CommandResult& run, const std::string& expected) {
  EXPECT_EQ(run.exitCode, 2) << run.out;
  EXPECT_EQ(lineCount(run.err), 1u) << run.err;
  EXPECT_EQ(run.err.rfind(expected, 0), 0u) << run.err;
}

using Config = TempDir;

TEST_F(Config, ErrorsPointAtTheirLineAndColumn) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"Checks: [DL101\n", "1:15: error: Could not find closing ]!"},
      {"Checks: \"DL1*\"\nCheks: \"DL2*\"\n", "2:1: error: unknown key 'Cheks'"},
      {"GradScaler:\n  Classes: 3\n", "2:12: error: expected a list here ([a, b]), not one value"},
      {"Checks: \"-*,DL1*,DL9*\"\n", "1:9: error: 'DL9*' matches no rule (see --list-rules)"},
      {"WarningsAsErrors: \"DL3O1\"\n", "1:19: error: 'DL3O1' matches no rule"},
      {"HeaderFilterRegex: \"src/(.*\"\n", "1:20: error: not a regular expression"},
      {"CheckOptions:\n  DL303.UnderflowShare: 1.5\n",
       "2:3: error: DL303.UnderflowShare: 1.5 is not a share between 0 and 1"},
      {"CheckOptions:\n  DL303.Underflow: 0.1\n", "2:3: error: unknown key 'DL303.Underflow'"},
      {"RuntimeOptions:\n  CastCheckEvery: 0\n", "2:3: error: CastCheckEvery: 0 is not a positive integer"},
      {"Rules: [DL1*]\nChecks: \"DL1*\"\n", "1:1: error: 'Checks' and 'Rules' both given"},
  };
  for (const Case& c : cases) {
    const std::string config = write("bad.yaml", c.text);
    expectConfigError(dtypeLint("--config " + config + " " + kBuild + " " + kMatmul), config + ":" + c.error);
    // `run` reads the same config before it starts the program.
    expectConfigError(dtypeLint("run --config " + config + " -- true"), config + ":" + c.error);
  }
  expectConfigError(dtypeLint("--config '{Checks: \"DL1*\"' --dump-config"), "<command line>:1:15: error: ");
}

TEST_F(Config, ChecksInClangTidySyntaxWithTheCommandLineOnTop) {
  write(".dtype-lint.yaml", "Checks: >\n  -*,\n  DL2*\n");
  const std::string file = write("train.cpp", dtype_lint::testing::readFile(kMatmul));
  EXPECT_EQ(dtypeLint(kBuild + " " + file).exitCode, 0) << "the nearest config turns DL101 off";
  CommandResult run = dtypeLint(kBuild + " --checks=DL101 " + file);
  EXPECT_EQ(run.exitCode, 1) << "--checks is appended: it turns DL101 back on";
  EXPECT_NE(run.out.find("[DL101-mixed-dtype-matmul]"), std::string::npos) << run.out;
  EXPECT_EQ(dtypeLint(kBuild + " --config '{Rules: [\"DL2*\"]}' " + kMatmul).exitCode, 0)
      << "the older Rules: list, inline";
  EXPECT_EQ(dtypeLint(kBuild + " --rules=-DL101 " + kMatmul).exitCode, 0)
      << "a first glob that excludes keeps the rest";
}

TEST_F(Config, WarningsAsErrorsMakeFindingsErrors) {
  CommandResult plain = dtypeLint(kBuild + " " + kReduction);
  ASSERT_EQ(plain.exitCode, 1) << plain.err;
  EXPECT_NE(plain.out.find(": warning: "), std::string::npos) << plain.out;
  const std::string config = write("wae.yaml", "WarningsAsErrors: \"DL105\"\n");
  CommandResult strict = dtypeLint("--config " + config + " " + kBuild + " " + kReduction);
  EXPECT_EQ(strict.out.find(": warning: "), std::string::npos) << strict.out;
  EXPECT_NE(strict.out.find(": error: "), std::string::npos) << strict.out;
  EXPECT_EQ(dtypeLint("--warnings-as-errors=DL1* " + kBuild + " " + kReduction).out, strict.out);
}

TEST_F(Config, HeaderFilterAndExcludePathsChooseTheFilesReported) {
  write("include/loss.h", "#include <torch/torch.h>\n"
                          "inline void halfLoss() {\n"
                          "  auto loss = torch::randn({4}, torch::kHalf).sum(0);\n"
                          "  loss.backward();\n"
                          "}\n");
  const std::string file = write("train.cpp", "#include \"include/loss.h\"\nint main() { halfLoss(); }\n");
  CommandResult all = dtypeLint(file);
  EXPECT_NE(all.out.find("loss.h:4:3: warning: backward() on a Half loss"), std::string::npos) << all.out << all.err;
  EXPECT_EQ(dtypeLint("--header-filter='/src/' " + file).exitCode, 0) << "the header's path does not match";
  write(".dtype-lint.yaml", "HeaderFilterRegex: \"include/\"\n");
  EXPECT_EQ(dtypeLint(file).out, all.out);
  write(".dtype-lint.yaml", "ExcludePaths: [\"include/*\"]\n");
  EXPECT_EQ(dtypeLint(file).exitCode, 0) << "findings in excluded files are dropped";
  write(".dtype-lint.yaml", "ExcludePaths: [\"train.cpp\"]\n");
  CommandResult excluded = dtypeLint(file);
  EXPECT_EQ(excluded.exitCode, 0) << excluded.out;
  EXPECT_EQ(excluded.err.find("fallback flags"), std::string::npos) << "an excluded file is not even parsed";
}

// `run` reports what the config's Checks select, and its WarningsAsErrors.
TEST_F(Config, RunReportsWhatTheConfigSelects) {
  const std::string program = std::string(DTYPE_LINT_BINARY_DIR) + "/samples/sample_DL101_mixed_dtype_matmul_buggy";
  const std::string report = (dir_ / "report.json").string();
  auto findingsOf = [&](const std::string& binary, const std::string& options) {
    dtypeLint("run " + options + " -o " + report + " -- " + binary);
    return nlohmann::json::parse(dtype_lint::testing::readFile(report)).at("findings");
  };
  auto findings = [&](const std::string& options) { return findingsOf(program, options); };
  EXPECT_EQ(findings("").size(), 2u);
  EXPECT_EQ(findings("--config '{Checks: \"-*,DL2*\"}'").size(), 0u);
  write(".dtype-lint.yaml", "Checks: \"-DL101\"\n");
  EXPECT_EQ(findings("--checks=DL101 --config " + (dir_ / ".dtype-lint.yaml").string()).size(), 2u)
      << "--checks on top of the config's";
  const std::string reduction =
      std::string(DTYPE_LINT_BINARY_DIR) + "/samples/sample_DL105_low_precision_reduction_buggy";
  EXPECT_EQ(findingsOf(reduction, "")[0].at("severity"), "warning");
  EXPECT_EQ(findingsOf(reduction, "--config '{WarningsAsErrors: \"DL105\"}'")[0].at("severity"), "error");
}

TEST_F(Config, DumpConfigPrintsTheEffectiveConfiguration) {
  write(".dtype-lint.yaml", "Checks: \"-*,DL2*\"\nCheckOptions:\n  DL303.UnderflowShare: 0.1\n");
  CommandResult run = dtypeLint("--dump-config --rules=DL101 " + dir_.string());
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("Checks:          \"-*,DL2*,DL101\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("DL303.UnderflowShare: '0.1'"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("DL302.CastCheckEvery: '16'"), std::string::npos) << "defaults shown" << run.out;
  // What it prints is a config that reads back the same.
  const std::string dumped = write("dumped.yaml", run.out);
  EXPECT_EQ(dtypeLint("--dump-config --config " + dumped).out, run.out);
}

}  // namespace
