// DL305 precision-profile: its unit cases, from the GEMMs a front end reports (LibTorch-free).
// Its samples are samples/DL305_precision_profile/, run under the runtime hooks, with its runtime tests
// RuntimeHooks.*Profile* and PythonHooks.TheProfileIsAtTheFullPrecisionGemms (tests/runtime_test.cpp); it has no
// analyzer cases (a runtime-only rule).
#include <gtest/gtest.h>

#include "dtype_lint/dl305_precision_profile.h"

namespace dtype_lint {
namespace {

SourceLocation profileAt(unsigned line) { return SourceLocation{"train.py", line, 1, line, 1}; }

// Under BFloat16 autocast, one Float GEMM in a region that runs in full
// precision: the finding is at the Float GEMM, not at the larger BFloat16 one.
TEST(PrecisionProfile, TheFindingIsAtTheFullPrecisionGemmsNotTheLargest) {
  PrecisionProfile profile(/*always=*/true);
  const GemmKind bf16{"BFloat16 x BFloat16", ScalarType::BFloat16, AutocastAtGemm::On};
  const GemmKind fp32{"Float x Float", ScalarType::Float, AutocastAtGemm::On};
  ASSERT_TRUE(profile.wantsSite(bf16));
  profile.add(bf16, 300, profileAt(10));
  ASSERT_TRUE(profile.wantsSite(fp32));
  profile.add(fp32, 400, profileAt(20));
  // A backward's GEMMs have no user site: counted in the totals only.
  profile.add(bf16, 600, std::nullopt);
  const auto f = profile.finish();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->rule->id, "DL305");
  EXPECT_EQ(f->location.line, 20u);
  EXPECT_EQ(f->message,
            "31% of the matmul FLOPs under autocast ran in Float32 or Double (400 FLOP of 1.3 kFLOP): autocast did not "
            "cast them (autocast enabled for another device, a region that disables it, Double operands, or ops it "
            "does not cast); all 1.3 kFLOP of GEMMs: 69% BFloat16 x BFloat16 ran in BFloat16 (autocast on); 31% Float "
            "x Float ran in Float (autocast on)");
  ASSERT_EQ(f->notes.size(), 2u);
  EXPECT_EQ(f->notes[0].location.line, 20u);
  EXPECT_EQ(f->notes[0].message, "400 FLOP in full precision under autocast here (sampled)");
  EXPECT_EQ(f->notes[1].location.line, 10u);
  EXPECT_EQ(f->notes[1].message, "300 FLOP of GEMMs here (sampled)");
}

TEST(PrecisionProfile, LowPrecisionUnderAutocastIsNoFinding) {
  PrecisionProfile profile;
  const GemmKind bf16{"BFloat16 x BFloat16", ScalarType::BFloat16, AutocastAtGemm::On};
  EXPECT_FALSE(profile.wantsSite(bf16));
  profile.add(bf16, 1e9, std::nullopt);
  EXPECT_FALSE(profile.finish());
}

// The dtype a dispatcher GEMM ran in: autocast's, unless an operand is
// Double (autocast leaves those); autocast on for another device counts as on.
TEST(PrecisionProfile, ADispatcherGemmRunsInAutocastsDtypeUnlessAnOperandIsDouble) {
  DispatcherGemm gemm;
  gemm.first = ScalarType::Float;
  gemm.second = ScalarType::Float;
  gemm.autocastDtype = ScalarType::BFloat16;
  gemm.autocastOn = true;
  const GemmKind cast = kindOf(gemm);
  EXPECT_EQ(cast.operands, "Float x Float");
  EXPECT_EQ(cast.ranIn, ScalarType::BFloat16);
  EXPECT_EQ(cast.autocast, AutocastAtGemm::On);

  gemm.second = ScalarType::Double;
  gemm.anyDouble = true;
  EXPECT_EQ(kindOf(gemm).ranIn, ScalarType::Double);

  DispatcherGemm elsewhere;
  elsewhere.first = ScalarType::Half;
  elsewhere.autocastOn = true;  // on for CUDA, the op on CPU
  const GemmKind vector = kindOf(elsewhere);
  EXPECT_EQ(vector.operands, "Half");
  EXPECT_EQ(vector.ranIn, ScalarType::Half);
  EXPECT_EQ(vector.autocast, AutocastAtGemm::On);
  EXPECT_EQ(kindOf(DispatcherGemm{}).autocast, AutocastAtGemm::Off);
}

TEST(PrecisionProfile, ACublasCallRunsInItsFirstOperandsDtypeOrInDouble) {
  EXPECT_EQ(kindOfCublasCall(ScalarType::Half, ScalarType::Half, false).ranIn, ScalarType::Half);
  EXPECT_EQ(kindOfCublasCall(ScalarType::Float, ScalarType::Float, true).ranIn, ScalarType::Double);
  EXPECT_EQ(kindOfCublasCall(ScalarType::Float, ScalarType::Half, false).autocast, AutocastAtGemm::Unknown);
}

}  // namespace
}  // namespace dtype_lint
