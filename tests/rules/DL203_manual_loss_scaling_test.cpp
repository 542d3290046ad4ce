// DL203 manual-loss-scaling: what makes a factor loss scaling, the scaling pending until gradients are divided back or
// checked, in the analyzer's checks and in the runtime's trace (LibTorch-free).
// Its samples are samples/DL203_manual_loss_scaling/ and samples/python/DL203_manual_loss_scaling/; its analyzer cases
// are the `dtype-lint-expect: DL203` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_lint/dl203_manual_scaling.h"
#include "rule_test_support.h"

namespace dtype_lint {
namespace {

TEST(ManualScalingOf, AFactorIsScalingWhenItsNameSaysScaleOrItIsALargeConstant) {
  EXPECT_TRUE(nameSaysScale("loss_scale"));
  EXPECT_TRUE(nameSaysScale("kLossScale"));
  EXPECT_TRUE(nameSaysScale("SCALE"));
  EXPECT_FALSE(nameSaysScale("weight"));
  EXPECT_FALSE(nameSaysScale("scal"));

  const ManualScaling named = manualScalingOf(at(1), std::nullopt, "loss_scale", "'loss_scale'");
  EXPECT_TRUE(named.namedAsScale);
  EXPECT_FALSE(named.largeConstant);
  EXPECT_EQ(named.factor, "'loss_scale'");

  const ManualScaling weight = manualScalingOf(at(1), 0.5, "weight", "'weight'");
  EXPECT_FALSE(weight.namedAsScale);
  EXPECT_FALSE(weight.largeConstant);

  // A literal is quoted by its value; a constant variable by its name and value.
  const ManualScaling literal = manualScalingOf(at(1), 1024.0, std::nullopt, "'1024.0'");
  EXPECT_TRUE(literal.largeConstant);
  EXPECT_EQ(literal.factor, "1024");
  EXPECT_EQ(manualScalingOf(at(1), 1024.0, "k", "'k'").factor, "'k' (1024)");
  EXPECT_TRUE(manualScalingOf(at(1), kLargeLossScale, std::nullopt, "").largeConstant);
  EXPECT_FALSE(manualScalingOf(at(1), kLargeLossScale - 1, std::nullopt, "").largeConstant);
  // Below that, only a power of two from 32 is a static scale: no loss weight is 64, many are 10 or 100.
  EXPECT_TRUE(manualScalingOf(at(1), 64.0, std::nullopt, "").largeConstant);
  EXPECT_TRUE(isLossScaleConstant(-kPowerOfTwoLossScale));
  EXPECT_FALSE(isLossScaleConstant(kPowerOfTwoLossScale / 2));
  EXPECT_FALSE(isLossScaleConstant(100));
  EXPECT_FALSE(isLossScaleConstant(48));
}

TEST(PendingManualScaling, GradientsDividedByTheFactorAfterTheBackwardAreReported) {
  std::vector<Finding> out;
  PendingManualScaling pending;
  const ManualScaling scaling = manualScalingOf(at(1), std::nullopt, "loss_scale", "'loss_scale'");
  pending.backward(scaling, 7, at(2), /*functionChecksForNonFinite=*/false, out);
  EXPECT_TRUE(out.empty());  // a named factor alone is no finding at backward()
  EXPECT_EQ(pending.size(), 1u);
  pending.gradientsDividedBy(8, at(3), out);
  EXPECT_TRUE(out.empty());  // another variable
  pending.gradientsDividedBy(7, at(3), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, std::string("DL203"));
  EXPECT_NE(out[0].message.find("divided back"), std::string::npos);
}

TEST(PendingManualScaling, AFunctionThatChecksForInfIsAHandWrittenScaler) {
  std::vector<Finding> out;
  PendingManualScaling pending;
  const ManualScaling large = manualScalingOf(at(1), 1024.0, std::nullopt, "");
  pending.backward(large, 7, at(2), /*functionChecksForNonFinite=*/true, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(pending.size(), 0u);
  pending.backward(large, 7, at(2), /*functionChecksForNonFinite=*/false, out);
  EXPECT_EQ(out.size(), 1u);  // a large constant is reported at backward()
}

TEST(PendingManualScaling, AFixedScaleIsReportedEvenWithAnInfCheck) {
  std::vector<Finding> out;
  PendingManualScaling pending;
  ManualScaling fixed = manualScalingOf(at(1), 512.0, "static_loss_scale", "'cfg.static_loss_scale'");
  fixed.fixed = true;
  pending.backward(fixed, 7, at(2), /*functionChecksForNonFinite=*/true, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("the fixed scale 'cfg.static_loss_scale' (512)"), std::string::npos) << out[0].message;
  EXPECT_NE(out[0].message.find("never adapts"), std::string::npos);
  EXPECT_EQ(pending.size(), 0u);
}

TEST(PendingManualScaling, JoinKeepsOnlyWhatIsPendingOnBothPaths) {
  std::vector<Finding> out;
  const ManualScaling scaling = manualScalingOf(at(1), std::nullopt, "s", "'s'");
  PendingManualScaling a, b;
  a.backward(scaling, 1, at(2), false, out);
  a.backward(scaling, 2, at(2), false, out);
  b.backward(scaling, 2, at(3), false, out);
  a.join(b);
  EXPECT_EQ(a.size(), 1u);
  a.gradientsDividedBy(1, at(4), out);
  EXPECT_TRUE(out.empty());
  a.gradientsDividedBy(2, at(4), out);
  EXPECT_EQ(out.size(), 1u);
}

TEST(ManualScaling, OnlyScalingForPrecisionIsReported) {
  std::vector<Finding> out;
  ManualScaling weight{at(1), "0.5", false, false};
  checkManualScalingAtBackward(weight, at(2), out);
  checkScalingInsideScaler(weight, at(2), out);
  EXPECT_TRUE(out.empty());
  ManualScaling named{at(1), "'loss_scale'", false, true};
  checkScalingInsideScaler(named, at(2), out);
  ManualScaling large{at(1), "1024", true, false};
  checkManualScalingAtBackward(large, at(2), out);
  EXPECT_EQ(rules(out), (std::vector<std::string>{"DL203", "DL203"}));
}

TEST(ManualScaling, AWeightInsideTheScalerDividedBackByHandIsReportedOnce) {
  constexpr uintptr_t kBoost = 7;
  std::vector<Finding> out;
  PendingManualScaling pending;
  ManualScaling boost{at(1), "'kBoost' (16)", false, false};
  pending.scaledInsideScaler(boost, kBoost, at(1), out);
  EXPECT_TRUE(out.empty());  // a weight, so far
  pending.gradientsDividedBy(kBoost, at(3), out);
  ASSERT_EQ(rules(out), (std::vector<std::string>{"DL203"}));
  EXPECT_EQ(out[0].location.line, 1u);
  EXPECT_EQ(out[0].notes.back().message, "gradients divided back here");
  out.clear();
  PendingManualScaling twice;
  ManualScaling scale{at(1), "1024", true, false};
  twice.scaledInsideScaler(scale, kBoost, at(1), out);
  twice.gradientsDividedBy(kBoost, at(3), out);
  EXPECT_EQ(rules(out), (std::vector<std::string>{"DL203"}));  // scaled twice, said once
}

TEST(ManualScalingTrace, ScalingUndoneWithoutACheckIsReportedAtTheBackward) {
  std::vector<Finding> out;
  ManualScalingTrace trace;
  trace.backward(512.0, at(10), out);
  EXPECT_FALSE(trace.undoesPendingFactor(1.0 / 256));
  ASSERT_TRUE(trace.undoesPendingFactor(1.0 / 512));
  trace.gradientsDividedBack(at(11));
  trace.backward(std::nullopt, at(20), out);  // the next backward decides the previous one
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL203"});
  EXPECT_EQ(out[0].location.line, 10u);
  EXPECT_NE(out[0].message.find("512"), std::string::npos) << out[0].message;
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes.back().location.line, 11u);
}

TEST(ManualScalingTrace, AnInfCheckOrASmallUndividedWeightIsSilent) {
  std::vector<Finding> out;
  ManualScalingTrace trace;
  trace.backward(1024.0, at(1), out);
  trace.gradientsDividedBack(at(2));
  trace.nonFiniteCheck();
  trace.backward(0.5, at(3), out);
  trace.finish(out);
  EXPECT_TRUE(out.empty());
  trace.backward(65536.0, at(4), out);  // large, not divided back, no check
  trace.finish(out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL203"});
}

}  // namespace
}  // namespace dtype_lint
