// DL202 unscale-fp16-grads: Half parameters at a scaler's step, and Half gradients at a raw unscale (LibTorch-free).
// Its samples are samples/DL202_unscale_fp16_grads/ and samples/python/DL202_unscale_fp16_grads/; its analyzer cases
// are the `dtype-lint-expect: DL202` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

TEST_F(Protocol, HalfParametersAreDL202) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::Half), Note{at(9), "became Half here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL202"});
  EXPECT_EQ(out[0].notes.front().location.line, 9u);
}

// At runtime the raw AMP ops show gradients, not parameters: Half gradients
// are Half parameters' (DL202); BFloat16 ones are not judged there yet.
TEST(RuntimeConditions, HalfGradientsAtAnUnscaleMeanHalfParameters) {
  EXPECT_EQ(parameterDtypeFromUnscaledGradients(ScalarType::Half), DtypeSet(ScalarType::Half));
  EXPECT_FALSE(parameterDtypeFromUnscaledGradients(ScalarType::BFloat16).has_value());
  EXPECT_FALSE(parameterDtypeFromUnscaledGradients(ScalarType::Float).has_value());
}

}  // namespace
}  // namespace dtype_lint
