// DL101 mixed-dtype-matmul: a matmul on operands of different dtypes outside autocast, and what keeps it silent: an
// autocast that casts the op, dtypes that differ on some paths only (LibTorch-free).
// Its samples are samples/DL101_mixed_dtype_matmul/ and samples/python/DL101_mixed_dtype_matmul/; its analyzer cases
// are the `dtype-lint-expect: DL101` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_flow_fixture.h"

namespace dtype_lint {
namespace {

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

}  // namespace
}  // namespace dtype_lint
