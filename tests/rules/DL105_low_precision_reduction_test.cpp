// DL105 low-precision-reduction: a precision-sensitive op on Half, without dtype= and outside autocast (LibTorch-free).
// Its samples are samples/DL105_low_precision_reduction/; its analyzer cases are the `dtype-lint-expect: DL105` markers
// in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_flow_fixture.h"

namespace dtype_lint {
namespace {

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

// kl_div(log_p, q): a Float operand beside the Half one promotes the op to Float;
// an integer target (cross_entropy's labels) does not.
TEST(DtypeFlowRules, LowPrecisionReductionPromotedByAFloatOperandIsNot) {
  OpEvent e;
  e.op = "kl_div";
  e.location = at(7);
  e.inputs = {operand("'log_p'", DtypeSet(Half)), operand("'q'", DtypeSet(F32))};
  EXPECT_TRUE(run(e).empty());
  e.op = "cross_entropy";
  e.inputs = {operand("'logits'", DtypeSet(Half)), operand("'labels'", DtypeSet(ScalarType::Int64))};
  EXPECT_EQ(run(e).size(), 1u);
}

}  // namespace
}  // namespace dtype_lint
