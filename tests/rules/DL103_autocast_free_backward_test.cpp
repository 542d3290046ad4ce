// DL103 autocast-free-backward: a mismatch in a custom backward, from the analyzer's events and seen at run time
// (LibTorch-free).
// Its samples are samples/DL103_autocast_free_backward/; its analyzer cases are the `dtype-lint-expect: DL103` markers
// in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_flow_fixture.h"

namespace dtype_lint {
namespace {

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
