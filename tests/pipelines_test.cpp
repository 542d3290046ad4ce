// dtype-lint in the pipelines teams run: CI matrix shards merged into one
// report, GitLab's code quality format, the progress line on a terminal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_test_support.h"

namespace {

using dtype_lint::testing::CommandResult;
using dtype_lint::testing::dtypeLint;
using dtype_lint::testing::expectToolError;
using dtype_lint::testing::readFile;
using dtype_lint::testing::TempDir;

const std::string kSource = DTYPE_LINT_SOURCE_DIR;
const std::string kBuild = std::string("-p ") + DTYPE_LINT_BINARY_DIR;
// The DL10x samples' translation units: enough to split, few enough to be quick.
const std::string kSamples = kSource + "/samples/DL10*";

using Pipelines = TempDir;

std::set<std::string> findingsOf(const nlohmann::json& sarif) {
  std::set<std::string> out;
  for (const auto& r : sarif.at("runs")[0].at("results")) {
    const auto& at = r.at("locations")[0].at("physicalLocation");
    out.insert(r.at("ruleId").get<std::string>() + " " + at.at("artifactLocation").at("uri").get<std::string>() + ":" +
               std::to_string(at.at("region").at("startLine").get<int>()));
  }
  return out;
}

TEST_F(Pipelines, ShardsSplitTheUnitsAndMergeIntoTheWholeReport) {
  const std::string whole = (dir_ / "whole.sarif").string(), first = (dir_ / "1.sarif").string(),
                    second = (dir_ / "2.json").string(), merged = (dir_ / "merged.sarif").string();
  EXPECT_EQ(dtypeLint(kBuild + " -o " + whole + " " + kSamples).exitCode, 1);
  EXPECT_EQ(dtypeLint(kBuild + " --shard 1/2 -o " + first + " " + kSamples).exitCode, 1);
  EXPECT_EQ(dtypeLint(kBuild + " --shard 2/2 -o " + second + " " + kSamples).exitCode, 1);
  const auto firstFindings = findingsOf(nlohmann::json::parse(readFile(first)));
  const auto secondReport = nlohmann::json::parse(readFile(second));
  ASSERT_TRUE(secondReport.contains("findings")) << "-o *.json writes JSON";
  std::set<std::string> secondFiles, firstFiles;
  for (const auto& f : secondReport.at("findings")) secondFiles.insert(f.at("location").at("file").get<std::string>());
  for (const std::string& finding : firstFindings) firstFiles.insert(finding.substr(6, finding.rfind(':') - 6));
  for (const std::string& file : secondFiles) EXPECT_EQ(firstFiles.count(file), 0u) << file << " is in both shards";

  CommandResult run = dtypeLint("merge " + first + " " + second + " " + first + " -o " + merged);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_EQ(findingsOf(nlohmann::json::parse(readFile(merged))), findingsOf(nlohmann::json::parse(readFile(whole))))
      << "the shards together, each finding once";
  expectToolError(dtypeLint(kBuild + " --shard 3/2 " + kSamples), "--shard: '3/2' is not I/N");
  expectToolError(dtypeLint("merge " + write("notes.txt", "hello")), "is not a dtype-lint report");
}

TEST_F(Pipelines, MergeJoinsTheRanksOfTheSameFinding) {
  auto report = [&](const std::string& name, const std::string& ranks) {
    return write(name, R"({"tool": "dtype-lint", "findings": [{"rule": "DL205", "severity": "warning",
      "message": "gradients clipped while they hold the scaled loss's gradients", "ranks": )" +
                           ranks + R"(,
      "location": {"file": "train.py", "line": 12, "column": 1, "endLine": 12, "endColumn": 1}, "notes": []}]})");
  };
  const std::string node0 = report("node0.json", "[0, 1]"), node1 = report("node1.json", "[2, 3]");
  CommandResult run = dtypeLint("merge " + node0 + " " + node1);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_NE(run.out.find("train.py:12:1: warning: gradients clipped while they hold the scaled loss's gradients "
                         "(ranks 0\u20133) [DL205-clip-before-unscale]"),
            std::string::npos)
      << run.out;
  const auto sarif = nlohmann::json::parse(dtypeLint("merge --format sarif " + node0 + " " + node1).out);
  EXPECT_EQ(sarif.at("runs")[0].at("results")[0].at("properties").at("ranks"), nlohmann::json({0, 1, 2, 3}));
}

// The merged report is kept by the same policy as any other: --rules, and
// --warnings-as-errors, from the command line or a config.
TEST_F(Pipelines, MergeKeepsTheFindingsThePolicyKeeps) {
  const std::string node0 = write("node0.json", R"({"tool": "dtype-lint", "findings": [{"rule": "DL205",
      "severity": "warning", "message": "clipped", "location": {"file": "train.py", "line": 12}}]})");
  CommandResult dropped = dtypeLint("merge --rules=-DL205 " + node0);
  EXPECT_EQ(dropped.exitCode, 0) << dropped.out << dropped.err;
  EXPECT_EQ(dtypeLint("merge --config '{Checks: \"-*\"}' " + node0).exitCode, 0);
  CommandResult promoted = dtypeLint("merge --warnings-as-errors=DL205 " + node0);
  EXPECT_NE(promoted.out.find("error: clipped [DL205"), std::string::npos) << promoted.out << promoted.err;
}

TEST(CodeClimate, GitLabsCodeQualityIssues) {
  // Run from the repository's root, as CI does: paths relative to it.
  CommandResult run =
      dtype_lint::testing::runCommand("cd " + kSource + " && " + DTYPE_LINT_EXE + " " + kBuild +
                                      " --format codeclimate samples/DL105_low_precision_reduction/buggy.cpp");
  EXPECT_EQ(run.exitCode, 1) << run.err;
  const auto issues = nlohmann::json::parse(run.out);
  ASSERT_TRUE(issues.is_array());
  ASSERT_EQ(issues.size(), 3u) << run.out;
  std::set<std::string> fingerprints;
  for (const auto& issue : issues) {
    EXPECT_EQ(issue.at("check_name"), "DL105-low-precision-reduction");
    EXPECT_EQ(issue.at("severity"), "major");
    EXPECT_EQ(issue.at("location").at("path"), "samples/DL105_low_precision_reduction/buggy.cpp");
    EXPECT_GT(issue.at("location").at("lines").at("begin").get<int>(), 0);
    fingerprints.insert(issue.at("fingerprint").get<std::string>());
  }
  EXPECT_EQ(fingerprints.size(), 3u) << "GitLab matches issues across runs by fingerprint";
}

// On a terminal, a run over several files says how far it is on stderr, and
// leaves the line clean; redirected, it says nothing.
TEST(Progress, ALineOnATerminalOnly) {
  const std::string command = std::string(DTYPE_LINT_EXE) + " " + kBuild + " " + kSamples;
  CommandResult onTerminal = dtype_lint::testing::runCommand("script -qec '" + command + "' /dev/null");
  EXPECT_NE(onTerminal.out.find("\r\033[K[1/"), std::string::npos) << onTerminal.out;
  EXPECT_NE(onTerminal.out.find("\r\033[K[2/"), std::string::npos) << onTerminal.out;
  CommandResult redirected = dtypeLint(kBuild + " " + kSamples);
  EXPECT_EQ(redirected.err.find("[1/"), std::string::npos) << redirected.err;
}

}  // namespace
