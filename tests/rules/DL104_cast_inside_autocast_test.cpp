// DL104 cast-inside-autocast: which casts inside an autocast region are reported (LibTorch-free).
// Its samples are samples/DL104_cast_inside_autocast/ and samples/python/DL104_cast_inside_autocast/; its analyzer
// cases are the `dtype-lint-expect: DL104` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_lint/dtype_flow_rules.h"

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
