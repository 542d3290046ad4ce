// Fix-its as users apply them: --fix on copies of the samples, then a re-lint
// that must find nothing the fixes were for and no compile error;
// --export-fixes as clang-apply-replacements reads it; fixes in SARIF.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_test_support.h"
#include "expectations.h"

namespace {

namespace fs = std::filesystem;
using dtype_lint::testing::CommandResult;
using dtype_lint::testing::dtypeLint;
using dtype_lint::testing::readFile;
using dtype_lint::testing::TempDir;

const std::string kSource = DTYPE_LINT_SOURCE_DIR;
// The samples' scaler header includes the annotation header.
const std::string kIncludes = "--extra-arg=-I" + kSource + "/include ";

// Findings per (file, rule), those with a fix or those without.
std::map<std::pair<std::string, std::string>, int> countByFileAndRule(const nlohmann::json& findings, bool withFix) {
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const auto& f : findings)
    if (f.contains("fix") == withFix)
      ++counts[{f.at("location").at("file").get<std::string>(), f.at("rule").get<std::string>()}];
  return counts;
}

nlohmann::json lint(const std::string& files) {
  CommandResult run = dtypeLint(kIncludes + "--format json " + files);
  EXPECT_NE(run.exitCode, 2) << run.err;
  return nlohmann::json::parse(run.out);
}

using Fixes = TempDir;

TEST_F(Fixes, EveryFixOfTheSamplesRemovesItsFindingAndCompiles) {
  // All the buggy samples in one run, as a tree is linted: LibTorch is parsed
  // once per file either way, but one process loads the preamble once.
  fs::copy(kSource + "/samples", dir_ / "samples", fs::copy_options::recursive);
  std::string buggy;
  for (const auto& entry : fs::directory_iterator(dir_ / "samples"))
    if (fs::exists(entry.path() / "buggy.cpp")) buggy += " " + (entry.path() / "buggy.cpp").string();
  const nlohmann::json before = lint(buggy);
  const auto fixed = countByFileAndRule(before.at("findings"), true);
  std::set<std::string> fixable;
  for (const auto& [fileAndRule, count] : fixed) fixable.insert(fileAndRule.first);
  EXPECT_GE(fixable.size(), 3u) << "DL105, DL205 and DL304's samples have fixes";
  std::string toFix;
  for (const std::string& file : fixable) toFix += " " + file;
  CommandResult run = dtypeLint(kIncludes + "--fix" + toFix);
  EXPECT_NE(run.err.find("applied"), std::string::npos) << run.err;
  const nlohmann::json after = lint(buggy);
  EXPECT_EQ(countByFileAndRule(after.at("findings"), false), countByFileAndRule(before.at("findings"), false))
      << "only the findings without a fix are left";
  EXPECT_EQ(countByFileAndRule(after.at("findings"), true), (std::map<std::pair<std::string, std::string>, int>{}));
  EXPECT_FALSE(after.contains("notifications")) << after.dump();
}

TEST_F(Fixes, Dl101CastInTheOpIsChangedToTheOtherOperandsDtype) {
  const std::string file = write("train.cpp", "#include <torch/torch.h>\n"
                                              "int main() {\n"
                                              "  torch::nn::Linear fc(16, 4);\n"
                                              "  auto inputs = torch::randn({8, 16});\n"
                                              "  auto y = fc(inputs.to(torch::kBFloat16));\n"
                                              "  auto half = inputs.to(torch::kHalf);\n"
                                              "  auto z = fc(half);\n"
                                              "  return int(y.sum().item<float>() + z.sum().item<float>());\n"
                                              "}\n");
  const nlohmann::json before = lint(file);
  ASSERT_EQ(before.at("findings").size(), 2u) << before.dump();
  EXPECT_EQ(before.at("findings")[0].at("fix").at("edits")[0].at("replacement"), "torch::kFloat");
  EXPECT_FALSE(before.at("findings")[1].contains("fix")) << "the cast is not in the op: which to change is a choice";
  dtypeLint(kIncludes + "--fix " + file);  // the flags of the lint: the same preamble
  EXPECT_NE(readFile(file).find("auto y = fc(inputs.to(torch::kFloat));"), std::string::npos) << readFile(file);
  EXPECT_EQ(lint(file).at("findings").size(), 1u);
}

// DL205 where the block unscales after the clip: the fix moves that unscale
// up (a second one would be DL201), trailing comment and all.
TEST_F(Fixes, Dl205MovesTheBlocksOwnUnscaleBeforeTheClip) {
  const std::string file =
      write("train.cpp", "#include \"" + kSource +
                             "/samples/common/grad_scaler.h\"\n"
                             "class Trainer {\n"
                             " public:\n"
                             "  Trainer() : model_(16, 1), optimizer_(model_->parameters(), 0.01) {}\n"
                             "  void step(const torch::Tensor& x) {\n"
                             "    optimizer_.zero_grad();\n"
                             "    scaler_.scale(model_(x).pow(2).mean()).backward();\n"
                             "    const double norm = torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);\n"
                             "    scaler_.unscale_(optimizer_);  // the true gradients\n"
                             "    scaler_.step(optimizer_);\n"
                             "    scaler_.update();\n"
                             "  }\n\n"
                             " private:\n"
                             "  torch::nn::Linear model_;\n"
                             "  torch::optim::SGD optimizer_;\n"
                             "  GradScaler scaler_;\n"
                             "};\n");
  const nlohmann::json before = lint(file);
  ASSERT_EQ(before.at("findings").size(), 1u) << before.dump();
  EXPECT_EQ(before.at("findings")[0].at("fix").at("description"), "move the unscale on line 9 before the clip");
  dtypeLint(kIncludes + "--fix " + file);
  EXPECT_NE(
      readFile(file).find("    scaler_.unscale_(optimizer_);  // the true gradients\n"
                          "    const double norm = torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);\n"
                          "    scaler_.step(optimizer_);\n"),
      std::string::npos)
      << readFile(file);
  EXPECT_EQ(lint(file).at("findings").size(), 0u);
}

TEST_F(Fixes, ExportedFixesApplyWithClangApplyReplacementsAsWithFix) {
  const std::string sample = kSource + "/samples/DL304_fp16_optimizer_epsilon/buggy.cpp";
  const std::string byFix = write("by_fix/train.cpp", readFile(sample));
  const std::string exported = write("exported/train.cpp", readFile(sample));
  dtypeLint("--fix " + byFix);
  CommandResult run = dtypeLint("--export-fixes " + (dir_ / "exported" / "fixes.yaml").string() + " " + exported);
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_EQ(readFile(exported), readFile(sample)) << "--export-fixes alone changes nothing";
  const std::string yaml = readFile((dir_ / "exported" / "fixes.yaml").string());
  EXPECT_NE(yaml.find("DiagnosticName:  DL304-fp16-optimizer-epsilon"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("ReplacementText: '.eps(1e-4)'"), std::string::npos) << yaml;
  CommandResult apply = dtype_lint::testing::runCommand("clang-apply-replacements-16 " + (dir_ / "exported").string());
  ASSERT_EQ(apply.exitCode, 0) << apply.err;
  EXPECT_EQ(readFile(exported), readFile(byFix));
}

TEST_F(Fixes, SarifResultsCarryTheirFixes) {
  const std::string file = write("train.cpp", readFile(kSource + "/samples/DL304_fp16_optimizer_epsilon/buggy.cpp"));
  CommandResult run = dtypeLint("--format sarif " + file);
  const auto sarif = nlohmann::json::parse(run.out);
  const auto& fix = sarif.at("runs")[0].at("results")[0].at("fixes")[0];
  EXPECT_EQ(fix.at("description").at("text"), "set eps(1e-4)");
  const auto& replacement = fix.at("artifactChanges")[0].at("replacements")[0];
  EXPECT_EQ(replacement.at("insertedContent").at("text"), ".eps(1e-4)");
  const auto& region = replacement.at("deletedRegion");
  EXPECT_EQ(region.at("startColumn"), region.at("endColumn")) << "an insertion deletes nothing";
}

}  // namespace
