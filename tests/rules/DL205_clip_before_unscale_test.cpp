// DL205 clip-before-unscale: clipping on gradients scaled on some path; none where a path ran an unscaled backward
// or after an unscale of an unidentified optimizer (LibTorch-free).
// Its samples are samples/DL205_clip_before_unscale/ and samples/python/DL205_clip_before_unscale/; its analyzer cases
// are the `dtype-lint-expect: DL205` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

TEST_F(Protocol, ClipOnScaledGradientsIsDL205) {
  p.scaledBackward(kScaler, at(1));
  p.clip(nullptr, 0, at(2), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL205"});
}

TEST_F(Protocol, ClipAfterAnAccumulationLoopThatMayNotHaveRunIsDL205) {
  p.zeroGrad(kOpt);
  ScalerProtocol noIteration = p;
  p.scaledBackward(kScaler, at(1));
  p.join(noIteration);
  p.clip(&kOpt, 0, at(2), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL205"});
}

TEST_F(Protocol, ClipWhereAPathRanAnUnscaledBackwardIsSilent) {
  p.zeroGrad(kOpt);
  ScalerProtocol unscaledPath = p;
  unscaledPath.unscaledBackward(at(1));
  p.scaledBackward(kScaler, at(2));
  p.join(unscaledPath);
  p.clip(&kOpt, 0, at(3), out);
  EXPECT_TRUE(out.empty()) << rules(out).front();
}

// `for (auto* o : optimizers) scaler.unscale_(*o);`: which gradients it
// unscaled is not known, so a clip after it is not reported.
TEST_F(Protocol, ClipAfterAnUnscaleOfAnUnidentifiedOptimizerIsSilent) {
  p.zeroGrad(kOpt);
  p.scaledBackward(kScaler, at(1));
  p.unscaleUnidentifiedOptimizer(kScaler, at(2), out);
  p.clip(&kOpt, 0, at(2), out);
  EXPECT_TRUE(out.empty()) << rules(out).front();
}

}  // namespace
}  // namespace dtype_lint
