// The rule core alone: lattice, catalog, op contracts, DL1xx engines, suppressions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "dtype_lint/catalog.h"
#include "dtype_lint/dtype.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/op_contracts.h"
#include "dtype_lint/suppression.h"

namespace dtype_lint {
namespace {

constexpr ScalarType Half = ScalarType::Half, BF16 = ScalarType::BFloat16, F32 = ScalarType::Float,
                     F64 = ScalarType::Double, I64 = ScalarType::Int64;

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

// ---- DL1xx engines on hand-made events ----

Operand operand(std::string name, DtypeSet dtype) { return Operand{std::move(name), dtype, std::nullopt}; }
SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 5, line, 20}; }

std::vector<Finding> run(const OpEvent& e) {
  std::vector<Finding> out;
  DtypeFlowRules({1, 13}).onOp(e, out);
  return out;
}

OpEvent matmul(DtypeSet a, DtypeSet b) {
  OpEvent e;
  e.op = "mm";
  e.location = at(10);
  e.inputs = {operand("'x'", a), operand("'w'", b)};
  return e;
}

TEST(DtypeFlowRules, MixedMatmulOutsideAutocastIsDL101) {
  auto findings = run(matmul(DtypeSet(Half), DtypeSet(F32)));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule->id, "DL101");
  EXPECT_EQ(findings[0].severity, Severity::Error);
  EXPECT_NE(findings[0].message.find("'x': Half"), std::string::npos);
  EXPECT_NE(findings[0].message.find("'w': Float"), std::string::npos);
}

TEST(DtypeFlowRules, AutocastThatCastsTheOpSilencesDL101) {
  OpEvent e = matmul(DtypeSet(Half), DtypeSet(F32));
  e.autocast.cuda.enabled = Tristate::On;
  EXPECT_TRUE(run(e).empty());
  e.autocast.cuda.enabled = Tristate::Unknown;  // maybe on: stay silent
  EXPECT_TRUE(run(e).empty());
  // CPU autocast does not cast dot in 1.13: the mismatch remains.
  e.op = "dot";
  e.autocast.cuda.enabled = Tristate::Off;
  e.autocast.cpu.enabled = Tristate::On;
  auto findings = run(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("does not cast 'dot'"), std::string::npos);
}

TEST(DtypeFlowRules, MismatchOnlyOnSomePathsIsNotReported) {
  EXPECT_TRUE(run(matmul(DtypeSet(Half).join(DtypeSet(F32)), DtypeSet(F32))).empty());
  EXPECT_TRUE(run(matmul(DtypeSet::unknown(), DtypeSet(F32))).empty());
  EXPECT_TRUE(run(matmul(DtypeSet(BF16), DtypeSet(BF16))).empty());
}

TEST(DtypeFlowRules, CustomBackwardMismatchIsDL103WhenForwardRanUnderAutocast) {
  OpEvent e = matmul(DtypeSet(BF16), DtypeSet(F32));
  e.inCustomBackward = true;  // the backward's own autocast state: off, as backward runs
  e.forwardUnderAutocast = Note{at(3), "forward ran under autocast from here"};
  auto findings = run(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule->id, "DL103");
  EXPECT_EQ(findings[0].notes.back().location.line, 3u);
  // Python's custom_bwd runs the backward under the forward's autocast again, which casts.
  e.autocast.cpu.enabled = Tristate::On;
  e.autocast.cpu.dtype = DtypeSet(BF16);
  EXPECT_TRUE(run(e).empty());
}

TEST(DtypeFlowRules, OutArithmeticWideningTooLateIsReportedButReductionsChooseTheirDtype) {
  OpEvent update;  // master weights += bf16 values through add_out: bf16 precision
  update.op = "add_out";
  update.location = at(4);
  update.inputs = {operand("'w'", DtypeSet(BF16)), operand("'g'", DtypeSet(BF16))};
  update.destination = operand("'master'", DtypeSet(F32));
  auto findings = run(update);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("computes in BFloat16 and only then widens into the Float destination 'master'"),
            std::string::npos)
      << findings[0].message;

  OpEvent reduction = update;  // sum_out accumulates in its out= dtype
  reduction.op = "sum_out";
  reduction.inputs = {operand("'w'", DtypeSet(BF16))};
  EXPECT_TRUE(run(reduction).empty());
}

TEST(DtypeFlowRules, OutVariantsNeedTheExactDtypeInPlaceOnlyNarrowingIsReported) {
  OpEvent out;
  out.op = "mm_out";
  out.location = at(7);
  out.inputs = {operand("'g'", DtypeSet(BF16)), operand("'x'", DtypeSet(BF16))};
  out.destination = operand("'buf'", DtypeSet(F32));
  auto findings = run(out);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule->id, "DL102");
  EXPECT_NE(findings[0].message.find("BFloat16 result into a Float destination 'buf'"), std::string::npos);

  OpEvent widen;  // float accumulator += half values: fine
  widen.op = "add_";
  widen.location = at(8);
  widen.inputs = {operand("'acc'", DtypeSet(F32)), operand("'h'", DtypeSet(Half))};
  widen.destination = operand("'acc'", DtypeSet(F32));
  EXPECT_TRUE(run(widen).empty());

  OpEvent narrow = widen;  // half tensor *= float tensor: rounded to Half
  narrow.op = "mul_";
  narrow.inputs = {operand("'h'", DtypeSet(Half)), operand("'f'", DtypeSet(F32))};
  narrow.destination = operand("'h'", DtypeSet(Half));
  findings = run(narrow);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("computes Float but its destination 'h' is Half"), std::string::npos);
}

TEST(DtypeFlowRules, LowPrecisionReductionNeedsHalfNoDtypeAndNoAutocast) {
  OpEvent e;
  e.op = "softmax";
  e.location = at(4);
  e.inputs = {operand("'logits'", DtypeSet(Half))};
  EXPECT_EQ(run(e).size(), 1u);
  e.explicitDtype = true;
  EXPECT_TRUE(run(e).empty());
  e.explicitDtype = false;
  e.autocast.cuda.enabled = Tristate::On;
  EXPECT_TRUE(run(e).empty());
  e.autocast.cuda.enabled = Tristate::Off;
  e.op = "sum";  // only a reduction over every dim
  EXPECT_TRUE(run(e).empty());
  e.reducesAllDims = true;
  EXPECT_EQ(run(e).size(), 1u);
  e.inputs = {operand("'logits'", DtypeSet(F32))};
  EXPECT_TRUE(run(e).empty());
}

TEST(DtypeFlowRules, BackwardOnHalfLossIsDL106) {
  OpEvent e;
  e.op = "backward";
  e.location = at(9);
  e.inputs = {operand("'loss'", DtypeSet(BF16))};
  auto findings = run(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule->id, "DL106");
  e.inputs = {operand("'loss'", DtypeSet(F32))};
  EXPECT_TRUE(run(e).empty());
}

TEST(DtypeFlowRules, StepWithAFilledAutocastCacheIsDL107) {
  OptimizerStepEvent step;
  step.location = at(12);
  step.optimizer = "'opt'";
  std::vector<Finding> out;
  DtypeFlowRules({1, 13}).onOptimizerStep(step, out);
  EXPECT_TRUE(out.empty());
  step.cacheFilledAt = at(8);
  step.autocast.cuda.enabled = Tristate::On;
  DtypeFlowRules({1, 13}).onOptimizerStep(step, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL107");
  EXPECT_NE(out[0].message.find("still enabled"), std::string::npos);
  EXPECT_EQ(out[0].notes.front().location.line, 8u);
  EXPECT_EQ(out[0].location.line, 12u);
}

TEST(DtypeFlowRules, RegionLeftWithoutClearingIsDL107WhereItWasLeft) {
  OptimizerStepEvent step;
  step.location = at(12);
  step.optimizer = "'opt'";
  step.cacheFilledAt = at(8);
  step.regionLeftAt = at(9);
  std::vector<Finding> out;
  DtypeFlowRules({1, 13}).onOptimizerStep(step, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL107");
  EXPECT_EQ(out[0].location.line, 9u);
  EXPECT_NE(out[0].message.find("the optimizer step on 'opt' makes stale"), std::string::npos) << out[0].message;
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[0].location.line, 8u);
  EXPECT_EQ(out[0].notes[1].location.line, 12u);
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

}  // namespace
}  // namespace dtype_lint
