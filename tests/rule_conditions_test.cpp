// The rule conditions the analyzer used to decide itself, now in rules/:
// what makes a factor loss scaling, when a scaler is pointless, which
// optimizers have an eps.
#include <gtest/gtest.h>

#include "dtype_lint/dl203_manual_scaling.h"
#include "dtype_lint/dl209_scaler_with_bfloat16.h"
#include "dtype_lint/dl304_optimizer_epsilon.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/scaler_protocol.h"

namespace dtype_lint {
namespace {

SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 3, line, 10}; }

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

AutocastState autocastOn(ScalarType cpu, std::optional<ScalarType> cuda) {
  AutocastState state;
  state.cpu = DeviceAutocast{Tristate::On, DtypeSet(cpu), at(5)};
  if (cuda) state.cuda = DeviceAutocast{Tristate::On, DtypeSet(*cuda), at(6)};
  return state;
}

TEST(ScalerWithBFloat16, OnlyWhenEveryEnabledDeviceAutocastsToBFloat16) {
  EXPECT_FALSE(bfloat16AutocastAt(AutocastState{}));  // autocast off
  const auto cpuOnly = bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, std::nullopt));
  ASSERT_TRUE(cpuOnly);
  EXPECT_EQ(cpuOnly->line, 5u);
  EXPECT_TRUE(bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, ScalarType::BFloat16)));
  EXPECT_FALSE(bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, ScalarType::Half)));
  AutocastState maybe = autocastOn(ScalarType::BFloat16, std::nullopt);
  maybe.cpu.enabled = Tristate::Unknown;
  EXPECT_FALSE(bfloat16AutocastAt(maybe));

  std::vector<Finding> out;
  const ObjectRef scaler{1, "'scaler'"};
  checkScalerWithBFloat16(scaler, at(7), bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, ScalarType::Half)), out);
  EXPECT_TRUE(out.empty());
  checkScalerWithBFloat16(scaler, at(7), bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, std::nullopt)), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, std::string("DL209"));
}

TEST(OptimizerEpsilon, AdamAndAdamWHaveAnEpsSGDHasNone) {
  EXPECT_EQ(defaultEpsilon("Adam"), 1e-8);
  EXPECT_EQ(defaultEpsilon("AdamW"), 1e-8);
  EXPECT_FALSE(defaultEpsilon("SGD"));
  EXPECT_FALSE(defaultEpsilon("RMSprop"));

  std::vector<Finding> out;
  checkOptimizerEpsilon("AdamW 'opt'", *defaultEpsilon("AdamW"), DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("is zero in Half"), std::string::npos);
  checkOptimizerEpsilon("AdamW 'opt'", *defaultEpsilon("AdamW"), DtypeSet(ScalarType::Float), std::nullopt, at(1), out);
  EXPECT_EQ(out.size(), 1u);
}

// At runtime the raw AMP ops show gradients, not parameters: Half gradients
// are Half parameters' (DL202); BFloat16 ones are not judged there yet.
TEST(RuntimeConditions, HalfGradientsAtAnUnscaleMeanHalfParameters) {
  EXPECT_EQ(parameterDtypeFromUnscaledGradients(ScalarType::Half), DtypeSet(ScalarType::Half));
  EXPECT_FALSE(parameterDtypeFromUnscaledGradients(ScalarType::BFloat16).has_value());
  EXPECT_FALSE(parameterDtypeFromUnscaledGradients(ScalarType::Float).has_value());
}

// A matmul the autograd engine runs in a custom backward on operands of
// different dtypes: their forward ran, so autocast reconciled them there (DL103).
TEST(RuntimeConditions, AMismatchInACustomBackwardSeenAtRuntimeIsDL103) {
  OpEvent event;
  event.op = "mm";
  event.location = at(4);
  event.inputs = {Operand{"'grad'", DtypeSet(ScalarType::BFloat16), std::nullopt},
                  Operand{"'weight'", DtypeSet(ScalarType::Float), std::nullopt}};
  const DtypeFlowRules rules(TorchVersion{1, 13});
  std::vector<Finding> plain;
  rules.onOp(event, plain);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].rule->id, "DL101");
  markRunInCustomBackward(event);
  std::vector<Finding> inBackward;
  rules.onOp(event, inBackward);
  ASSERT_EQ(inBackward.size(), 1u);
  EXPECT_EQ(inBackward[0].rule->id, "DL103");
}

}  // namespace
}  // namespace dtype_lint

namespace dtype_lint {
namespace {

OpEvent underCpuAutocast(std::string op, Operand input) {
  OpEvent e;
  e.op = std::move(op);
  e.location = SourceLocation{"train.cpp", 20, 5, 20, 30};
  e.autocast.cpu.enabled = Tristate::On;  // BFloat16
  e.inputs = {std::move(input)};
  return e;
}

Operand castOperand(DtypeSet from, ScalarType to) {
  return Operand{"'x'", DtypeSet(to), std::nullopt, ExplicitCast{from, to, SourceLocation{"train.cpp", 19, 9, 19, 30}}};
}

TEST(CastInsideAutocast, ACastAutocastUndoesOrRoundTripsIsReportedAtTheCast) {
  const DtypeFlowRules rules(TorchVersion{2, 15});
  std::vector<Finding> out;
  rules.onOp(underCpuAutocast("mm", castOperand(DtypeSet(ScalarType::BFloat16), ScalarType::Float)), out);
  rules.onOp(underCpuAutocast("mse_loss", castOperand(DtypeSet(ScalarType::Float), ScalarType::BFloat16)), out);
  ASSERT_EQ(out.size(), 2u);
  for (const Finding& f : out) {
    EXPECT_EQ(f.rule->id, "DL104");
    EXPECT_EQ(f.location.line, 19u);
    ASSERT_EQ(f.notes.size(), 1u);
    EXPECT_EQ(f.notes[0].location.line, 20u);
  }
  EXPECT_EQ(out[0].message,
            "'x' is cast to Float by hand inside an autocast region, but autocast casts the operands of mm to "
            "BFloat16 anyway: the cast is undone; to run mm in Float, disable autocast around it");
  EXPECT_EQ(out[1].message,
            "'x' is cast from Float to BFloat16 by hand inside an autocast region before mse_loss, which autocast runs "
            "in Float: the values lose their precision in the round-trip; remove the cast");

  // A source of unknown dtype (a struct's field): the cast is pointless either way.
  out.clear();
  rules.onOp(underCpuAutocast("mse_loss", castOperand(DtypeSet::unknown(), ScalarType::BFloat16)), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("the cast is at best a no-op"), std::string::npos) << out[0].message;
}

TEST(CastInsideAutocast, UpcastsBeforeFloatOpsNoOpsCastsToAutocastsDtypeAndOpsAutocastLeavesAreFine) {
  const DtypeFlowRules rules(TorchVersion{2, 15});
  std::vector<Finding> out;
  // RMSNorm's idiom: norm(x.float()).to(x.dtype), then a linear autocast runs in BFloat16 anyway.
  rules.onOp(underCpuAutocast("layer_norm", castOperand(DtypeSet(ScalarType::BFloat16), ScalarType::Float)), out);
  rules.onOp(underCpuAutocast("linear", castOperand(DtypeSet(ScalarType::Float), ScalarType::BFloat16)), out);
  rules.onOp(underCpuAutocast("mm", castOperand(DtypeSet(ScalarType::Float), ScalarType::Float)), out);
  rules.onOp(underCpuAutocast("mse_loss", castOperand(DtypeSet(ScalarType::BFloat16), ScalarType::Float)), out);
  rules.onOp(underCpuAutocast("mse_loss", castOperand(DtypeSet(ScalarType::BFloat16), ScalarType::BFloat16)), out);
  rules.onOp(underCpuAutocast("relu", castOperand(DtypeSet(ScalarType::Float), ScalarType::BFloat16)), out);
  rules.onOp(underCpuAutocast("mse_loss", castOperand(DtypeSet(ScalarType::Half), ScalarType::BFloat16)), out);
  OpEvent off = underCpuAutocast("linear", castOperand(DtypeSet(ScalarType::Float), ScalarType::BFloat16));
  off.autocast.cpu.enabled = Tristate::Off;
  rules.onOp(off, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace dtype_lint
