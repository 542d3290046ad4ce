// The rule core alone: lattice, catalog, op contracts, suppressions, the
// configurations a program's settings are analyzed under. Each rule's
// cases are in tests/rules/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "dtype_lint/catalog.h"
#include "dtype_lint/configurations.h"
#include "dtype_lint/dtype.h"
#include "dtype_lint/op_contracts.h"
#include "dtype_lint/suppression.h"
#include "rules/rule_test_support.h"

namespace dtype_lint {
namespace {

TEST(Dtype, PromotionFollowsTorchPromoteTypes) {
  EXPECT_EQ(promote(Half, F32), F32);
  EXPECT_EQ(promote(Half, BF16), F32);
  EXPECT_EQ(promote(BF16, F64), F64);
  EXPECT_EQ(promote(I64, Half), Half);
  EXPECT_EQ(promote(ScalarType::Bool, ScalarType::Int32), ScalarType::Int32);
  EXPECT_EQ(promote(ScalarType::UInt8, ScalarType::Int8), ScalarType::Int16);
}

TEST(Dtype, FactsOfTheFloatingTypes) {
  EXPECT_EQ(maxFinite(Half), 65504.0);
  EXPECT_NEAR(smallestSubnormal(Half), 5.96e-8, 1e-10);
  EXPECT_GT(maxFinite(BF16), 3e38);
  EXPECT_TRUE(isLowPrecisionFloat(BF16));
  EXPECT_FALSE(isLowPrecisionFloat(F32));
  EXPECT_EQ(scalarTypeFromName("kFloat16"), Half);
  EXPECT_EQ(scalarTypeFromName("Float32"), F32);
  EXPECT_EQ(scalarTypeFromName("Long"), I64);
  EXPECT_FALSE(scalarTypeFromName("Quaternion"));
}

TEST(Dtype, SetsJoinAndMismatchOnlyWhenDisjoint) {
  DtypeSet halfOrFloat = DtypeSet(Half).join(DtypeSet(F32));
  EXPECT_EQ(halfOrFloat.toString(), "Half or Float");
  EXPECT_FALSE(halfOrFloat.single());
  EXPECT_TRUE(definitelyDifferentFloating(DtypeSet(Half), DtypeSet(F32)));
  EXPECT_FALSE(definitelyDifferentFloating(halfOrFloat, DtypeSet(F32)));  // equal on one path
  EXPECT_FALSE(definitelyDifferentFloating(DtypeSet::unknown(), DtypeSet(F32)));
  EXPECT_FALSE(definitelyDifferentFloating(DtypeSet(I64), DtypeSet(F32)));  // indices, not operands
  EXPECT_EQ(DtypeSet(Half).promoteWith(halfOrFloat), halfOrFloat);
  // Bottom (no value: a raising op's result) promotes as the other operand.
  EXPECT_EQ(DtypeSet().promoteWith(DtypeSet(Half)), DtypeSet(Half));
  EXPECT_EQ(halfOrFloat.promoteWith(DtypeSet()), halfOrFloat);
}

TEST(Catalog, IdsAreUniqueAndEveryRuleHasADocsPage) {
  std::set<std::string_view> ids;
  for (const RuleInfo& r : ruleCatalog()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_TRUE(std::filesystem::exists(std::string(DTYPE_LINT_SOURCE_DIR) + "/" + docsPath(r))) << docsPath(r);
  }
  EXPECT_EQ(ids.size(), 22u);
  ASSERT_NE(findRule("DL101"), nullptr);
  EXPECT_EQ(qualifiedName(*findRule("DL101")), "DL101-mixed-dtype-matmul");
  EXPECT_EQ(findRule("DL999"), nullptr);
}

// What --explain prints: the error the rule prevents, bad and good code, the fix.
TEST(Catalog, EveryPageShowsTheErrorBadAndGoodCodeAndTheFix) {
  for (const RuleInfo& r : ruleCatalog()) {
    std::ifstream in(std::string(DTYPE_LINT_SOURCE_DIR) + "/" + docsPath(r));
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(page.rfind("# " + qualifiedName(r).replace(r.id.size(), 1, " ") + "\n", 0), 0u) << r.id;
    size_t previous = 0;
    for (const char* section : {"## The error it prevents\n", "## Bad\n", "## Good\n", "## How to fix\n"}) {
      const size_t at = page.find(section);
      ASSERT_NE(at, std::string::npos) << r.id << " has no " << section;
      EXPECT_GT(at, previous) << r.id << ": " << section << " out of order";
      previous = at;
    }
    const size_t bad = page.find("## Bad\n"), good = page.find("## Good\n");
    const std::string badCode = page.substr(bad, good - bad);
    const std::string goodCode = page.substr(good, page.find("## How to fix\n") - good);
    EXPECT_NE(badCode.find("```"), std::string::npos) << r.id;
    EXPECT_NE(badCode.find(std::string(r.id)), std::string::npos) << r.id << ": the bad code marks its line";
    EXPECT_NE(goodCode.find("```"), std::string::npos) << r.id;
    EXPECT_EQ(goodCode.find(std::string(r.id)), std::string::npos) << r.id << ": the good code is clean";
  }
}

TEST(OpContracts, AutocastListsDifferByDeviceAndVersion) {
  const TorchVersion v113{1, 13}, v24{2, 4};
  EXPECT_EQ(autocastPolicy("mm", Device::CUDA, v113), AutocastPolicy::LowerPrecision);
  EXPECT_EQ(autocastPolicy("mm", Device::CPU, v113), AutocastPolicy::LowerPrecision);
  EXPECT_EQ(autocastPolicy("softmax", Device::CUDA, v113), AutocastPolicy::Fp32);
  EXPECT_EQ(autocastPolicy("dot", Device::CUDA, v113), AutocastPolicy::Promote);
  EXPECT_EQ(autocastPolicy("dot", Device::CPU, v113), AutocastPolicy::None);
  EXPECT_EQ(autocastPolicy("scaled_dot_product_attention", Device::CUDA, v113), AutocastPolicy::None);
  EXPECT_EQ(autocastPolicy("scaled_dot_product_attention", Device::CUDA, v24), AutocastPolicy::LowerPrecision);
  EXPECT_EQ(outVariantBase("mm_out"), "mm");
  EXPECT_FALSE(outVariantBase("mm"));
  EXPECT_EQ(inPlaceBase("addmm_"), "addmm");
  EXPECT_FALSE(inPlaceBase("__and__"));
}

// ---- suppressions ----

class Suppressions : public ::testing::Test {
 protected:
  std::string write(const std::string& text, const std::string& extension = ".cpp") {
    path_ = std::filesystem::temp_directory_path() / ("dtype_lint_nolint_" + std::to_string(::getpid()) + extension);
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  Finding at(const std::string& file, unsigned line, const char* rule) {
    Finding f;
    f.rule = findRule(rule);
    f.location = SourceLocation{file, line, 1, line, 1};
    return f;
  }
  std::filesystem::path path_;
};

TEST_F(Suppressions, NolintFormsFollowClangTidy) {
  const std::string file = write("a(); // NOLINT\n"
                                 "b(); // NOLINT(DL101)\n"
                                 "c(); // NOLINT(DL2*, DL105-low-precision-reduction)\n"
                                 "// NOLINTNEXTLINE(DL106)\n"
                                 "d();\n"
                                 "// NOLINTBEGIN(DL1*)\n"
                                 "e();\n"
                                 "// NOLINTEND(DL1*)\n"
                                 "f();\n");
  SourceText text;
  EXPECT_TRUE(isSuppressed(at(file, 1, "DL101"), text));
  EXPECT_TRUE(isSuppressed(at(file, 2, "DL101"), text));
  EXPECT_FALSE(isSuppressed(at(file, 2, "DL102"), text));
  EXPECT_TRUE(isSuppressed(at(file, 3, "DL105"), text));
  EXPECT_TRUE(isSuppressed(at(file, 3, "DL201"), text));
  EXPECT_FALSE(isSuppressed(at(file, 3, "DL101"), text));
  EXPECT_TRUE(isSuppressed(at(file, 5, "DL106"), text));
  EXPECT_FALSE(isSuppressed(at(file, 5, "DL101"), text));
  EXPECT_TRUE(isSuppressed(at(file, 7, "DL102"), text));
  EXPECT_FALSE(isSuppressed(at(file, 7, "DL201"), text));
  EXPECT_FALSE(isSuppressed(at(file, 9, "DL102"), text));
}

// The runtime's Python findings: the same markers in Python's comments.
TEST_F(Suppressions, PythonCommentsCarryTheSameMarkers) {
  const std::string file = write("scaler.unscale_(opt)  # NOLINT(DL202)\n"
                                 "# NOLINTNEXTLINE(DL1*)\n"
                                 "y = layer(x.half())\n"
                                 "z = layer(x.half())  // NOLINT\n",
                                 ".py");
  SourceText text;
  EXPECT_TRUE(isSuppressed(at(file, 1, "DL202"), text));
  EXPECT_FALSE(isSuppressed(at(file, 1, "DL201"), text));
  EXPECT_TRUE(isSuppressed(at(file, 3, "DL101"), text));
  EXPECT_FALSE(isSuppressed(at(file, 4, "DL101"), text)) << "'//' is no comment in Python";
}

TEST(Glob, MatchesRuleIdsAndNames) {
  EXPECT_TRUE(globMatch("DL1*", "DL105"));
  EXPECT_TRUE(globMatch("*matmul", "DL101-mixed-dtype-matmul"));
  EXPECT_TRUE(globMatch("DL10?", "DL107"));
  EXPECT_FALSE(globMatch("DL2*", "DL105"));
}

SettingChoices settingOf(size_t values) {
  SettingChoices setting;
  for (size_t v = 0; v < values; ++v) setting.choices.push_back(std::to_string(v));
  return setting;
}

// Settings that fit are analyzed under every combination, defaults first.
TEST(Configurations, EveryCombinationWhereTheyFit) {
  const std::vector<SettingChoices> settings{settingOf(3), settingOf(2), settingOf(4)};
  const ConfigurationRuns runs = configurationRuns(settings, 24);
  ASSERT_EQ(runs.size(), 24u);
  EXPECT_EQ(runs.front(), (std::vector<size_t>{0, 0, 0}));
  EXPECT_EQ(std::set<std::vector<size_t>>(runs.begin(), runs.end()).size(), 24u);
}

// Eight flags, where every combination would take 256 runs: the leading four
// still take every combination, and every value of each flag meets every
// value of each other flag in some run (a bug that needs `--log-grad-norm`
// with the teacher kept in Float, both off by default).
TEST(Configurations, LaterSettingsMeetEveryValueOfEachOther) {
  const std::vector<SettingChoices> settings(8, settingOf(2));
  const ConfigurationRuns runs = configurationRuns(settings, 24);
  ASSERT_LE(runs.size(), 24u);
  EXPECT_EQ(runs.front(), std::vector<size_t>(8, 0));
  std::set<std::vector<size_t>> leading;
  for (const auto& run : runs) leading.insert({run.begin(), run.begin() + 4});
  EXPECT_EQ(leading.size(), 16u);
  for (size_t i = 0; i < 8; ++i)
    for (size_t j = i + 1; j < 8; ++j)
      for (size_t a = 0; a < 2; ++a)
        for (size_t b = 0; b < 2; ++b)
          EXPECT_TRUE(
              std::any_of(runs.begin(), runs.end(), [&](const auto& run) { return run[i] == a && run[j] == b; }))
              << "settings " << i << " and " << j << " never take " << a << " and " << b;
}

// A setting whose pairs cannot fit makes more runs than the cap: the caller leaves it out.
TEST(Configurations, ASettingThatCannotFitOverflowsTheCap) {
  EXPECT_GT(configurationRuns({settingOf(5), settingOf(6)}, 24).size(), 24u);
}

// A finding under one value of a pairwise setting notes that value only.
TEST(Configurations, AFindingNotesTheValuesItNeeds) {
  std::vector<SettingChoices> settings(6, settingOf(2));
  for (size_t i = 0; i < settings.size(); ++i) settings[i].spelling = "--flag" + std::to_string(i);
  const ConfigurationRuns runs = configurationRuns(settings, 24);
  std::vector<std::vector<Finding>> findings(runs.size());
  for (size_t r = 0; r < runs.size(); ++r)
    if (runs[r][5] == 1) findings[r].push_back(makeFinding(RuleId::DL201, "twice", SourceLocation{"a.cpp", 3, 1}));
  const std::vector<Finding> merged = mergeConfigurationRuns(settings, runs, std::move(findings));
  ASSERT_EQ(merged.size(), 1u);
  ASSERT_EQ(merged[0].notes.size(), 1u);
  EXPECT_EQ(merged[0].notes[0].message, "assuming --flag5 is 1");
}

// One error raised where each configuration first reaches it (DL202 at
// `unscale_` with clipping on, at `step` with it off), from one origin: one
// finding, at the default configuration's place; the same rule from another
// origin stays apart.
TEST(Configurations, OneErrorRaisedAtTwoPlacesIsOneFinding) {
  std::vector<SettingChoices> settings{settingOf(2)};
  settings[0].spelling = "--grad-clip";
  const ConfigurationRuns runs = configurationRuns(settings, 24);
  ASSERT_EQ(runs.size(), 2u);
  const Note halfHere{SourceLocation{"main.py", 29, 17}, "the parameters of 'model' became Half here"};
  auto raised = [&](unsigned line, const Note& origin) {
    Finding f = makeFinding(RuleId::DL202, "unscales Half gradients", SourceLocation{"engine.py", line, 13});
    f.notes.push_back(origin);
    return f;
  };
  std::vector<std::vector<Finding>> findings{{raised(36, halfHere)}, {raised(38, halfHere)}};
  std::vector<Finding> merged = mergeConfigurationRuns(settings, runs, findings);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].location.line, 36u);
  findings[1][0].notes[0].location.line = 31;
  merged = mergeConfigurationRuns(settings, runs, std::move(findings));
  EXPECT_EQ(merged.size(), 2u);
}

}  // namespace
}  // namespace dtype_lint
