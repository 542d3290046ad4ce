// DL202 unscale-fp16-grads: its runtime condition (LibTorch-free). The scaler
// protocol's cases are in tests/scaler_protocol_test.cpp.
#include <gtest/gtest.h>

#include "dtype_lint/scaler_protocol.h"

namespace dtype_lint {
namespace {

// At runtime the raw AMP ops show gradients, not parameters: Half gradients
// are Half parameters' (DL202); BFloat16 ones are not judged there yet.
TEST(RuntimeConditions, HalfGradientsAtAnUnscaleMeanHalfParameters) {
  EXPECT_EQ(parameterDtypeFromUnscaledGradients(ScalarType::Half), DtypeSet(ScalarType::Half));
  EXPECT_FALSE(parameterDtypeFromUnscaledGradients(ScalarType::BFloat16).has_value());
  EXPECT_FALSE(parameterDtypeFromUnscaledGradients(ScalarType::Float).has_value());
}

}  // namespace
}  // namespace dtype_lint
