// DL106 half-loss-backward: backward() on a BFloat16 loss, not on a Float one (LibTorch-free).
// Its samples are samples/DL106_half_loss_backward/; its analyzer cases are the `dtype-lint-expect: DL106` markers in
// tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_flow_fixture.h"

namespace dtype_lint {
namespace {

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

}  // namespace
}  // namespace dtype_lint
