// DL303 fp16-gradient-underflow: the share of gradient values below Half's normal range over the threshold, and none
// in Float training, after clipping while scaled, or on too few values (LibTorch-free).
// Its samples are samples/DL303_fp16_gradient_underflow/ and samples/python/DL303_fp16_gradient_underflow/, run under
// the runtime hooks; it has no analyzer cases (a runtime-only rule).
#include <gtest/gtest.h>

#include "numeric_health_fixture.h"

namespace dtype_lint {
namespace {

TEST(NumericHealth, HalfGradientsBelowHalfsNormalRangeAboveTheShareNameTheLossScale) {
  NumericHealthRules rules;
  GradientCheck check;
  check.point = GradientPoint::Unscale;
  check.lossScale = 8;
  check.computedInHalf = true;
  check.gradients = {gradient("a Float [100] parameter", 100, 0, 100, 60, 2),
                     gradient("a Float [900] parameter", 900, 0, 900, 200, 0)};
  std::vector<Finding> out;
  rules.onGradients(check, scriptAt(7), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL303");
  EXPECT_EQ(out[0].message,
            "26.0% of the nonzero gradient values (260 of 1000) are below Half's normal range (|x| < 6.1e-05), 2 of "
            "them flush to zero in Half (over the 25% threshold): the loss scale (8) is too small");

  out.clear();
  check.gradients[1].counts.halfSubnormal = 180;  // 24%: under the threshold, as correct fp16 runs of real models
  rules.onGradients(check, scriptAt(7), out);
  EXPECT_TRUE(out.empty());

  check.gradients[1].counts.halfSubnormal = 500;
  check.computedInHalf = false;  // Float training: small gradients are normal there
  rules.onGradients(check, scriptAt(7), out);
  EXPECT_TRUE(out.empty());

  check.computedInHalf = true;
  check.afterScalingMistake = true;  // tiny because clipped while scaled (DL205): a larger scale would not help
  rules.onGradients(check, scriptAt(7), out);
  EXPECT_TRUE(out.empty());

  check.afterScalingMistake = false;
  check.gradients = {gradient("a Half [10] parameter", 10, 0, 10, 10)};  // too few values to say
  rules.onGradients(check, scriptAt(7), out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace dtype_lint
