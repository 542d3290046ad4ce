// DL103 autocast-free-backward: a mismatch in a custom backward seen at run time
// (LibTorch-free).
#include <gtest/gtest.h>

#include "dtype_lint/dtype_flow_rules.h"

namespace dtype_lint {
namespace {

SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 3, line, 10}; }

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
