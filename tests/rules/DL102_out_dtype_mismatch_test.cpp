// DL102 out-dtype-mismatch: out= variants into another dtype than they compute, in-place ops that narrow, reductions
// that choose their dtype (LibTorch-free).
// Its samples are samples/DL102_out_dtype_mismatch/ and samples/python/DL102_out_dtype_mismatch/; its analyzer cases
// are the `dtype-lint-expect: DL102` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_flow_fixture.h"

namespace dtype_lint {
namespace {

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

}  // namespace
}  // namespace dtype_lint
