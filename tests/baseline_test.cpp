// Baselines as a team adopting dtype-lint on an old tree uses them: record
// today's findings, then fail only on new ones, across line shifts and edits.
#include <gtest/gtest.h>

#include "cli_test_support.h"

namespace {

using dtype_lint::testing::CommandResult;
using dtype_lint::testing::dtypeLint;
using dtype_lint::testing::expectToolError;
using dtype_lint::testing::readFile;
using dtype_lint::testing::TempDir;

const std::string kBuggy = std::string(DTYPE_LINT_SOURCE_DIR) + "/samples/DL101_mixed_dtype_matmul/buggy.cpp";
// The sample's second bug, and its fix.
const std::string kMatmul = "torch::matmul(tokens, table)";
const std::string kMatmulFixed = "torch::matmul(tokens, table.to(tokens.dtype()))";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

using Baseline = TempDir;

TEST_F(Baseline, OnlyNewFindingsAreReportedAndGoneEntriesAreCounted) {
  const std::string original = readFile(kBuggy);
  const std::string file = write("train.cpp", replaced(original, kMatmul, kMatmulFixed));
  const std::string baseline = (dir_ / "baseline.json").string();
  CommandResult recorded = dtypeLint("--write-baseline " + baseline + " " + file);
  EXPECT_EQ(recorded.exitCode, 0) << recorded.err;
  EXPECT_NE(recorded.out.find("train.cpp:14:"), std::string::npos) << "the report is written too" << recorded.out;
  EXPECT_NE(recorded.err.find("wrote 1 finding(s) to the baseline"), std::string::npos) << recorded.err;

  // Lines added above, and the second bug back: only that one is new.
  write("train.cpp", "// Copyright\n\n#include <vector>\n" + original);
  CommandResult shifted = dtypeLint("--baseline " + baseline + " " + file);
  EXPECT_EQ(shifted.exitCode, 1) << shifted.err;
  EXPECT_EQ(shifted.out.find("train.cpp:17:"), std::string::npos)
      << "the recorded finding, 3 lines down" << shifted.out;
  EXPECT_NE(shifted.out.find("train.cpp:24:10: error: 'matmul'"), std::string::npos) << shifted.out;
  EXPECT_EQ(shifted.err.find("no longer occur"), std::string::npos) << shifted.err;

  // Both fixed: nothing new, and the recorded entry is gone.
  write("train.cpp", replaced(replaced(original, kMatmul, kMatmulFixed), "hidden(x)", "hidden(x.to(torch::kFloat))"));
  CommandResult fixed = dtypeLint("--baseline " + baseline + " --format json " + file);
  EXPECT_EQ(fixed.exitCode, 0) << fixed.out << fixed.err;
  EXPECT_NE(fixed.err.find("1 of the baseline's 1 entries no longer occur"), std::string::npos) << fixed.err;
}

TEST_F(Baseline, AFileThatIsNotABaselineIsAToolError) {
  const std::string file = write("train.cpp", readFile(kBuggy));
  expectToolError(dtypeLint("--baseline " + (dir_ / "missing.json").string() + " " + file), "cannot read the baseline");
  expectToolError(dtypeLint("--baseline " + write("bad.json", "{\"findings\": 3}") + " " + file), "is not a baseline");
  expectToolError(dtypeLint("--baseline " + write("broken.json", "{") + " " + file), "is not a baseline");
}

}  // namespace
