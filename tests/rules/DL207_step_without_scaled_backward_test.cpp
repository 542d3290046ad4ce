// DL207 step-without-scaled-backward: a scaler's step after a backward on the unscaled loss, in the protocol and in the
// raw AMP ops' trace (LibTorch-free).
// Its samples are samples/DL207_step_without_scaled_backward/ and samples/python/DL207_step_without_scaled_backward/;
// its analyzer cases are the `dtype-lint-expect: DL207` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

TEST_F(Protocol, StepOnUnscaledBackwardIsDL207) {
  p.unscaledBackward(at(1));
  p.step(kScaler, kOpt, at(2), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL207"});
}

TEST(AmpBackwardTrace, AStepWhenNoBackwardSinceTheUpdateWasOnTheScaledLossIsDL207) {
  const ObjectRef optimizer{2, "the optimizer"};
  AmpBackwardTrace trace;
  std::vector<Finding> out;
  trace.backward(AmpBackwardTrace::Loss::Unscaled, at(1));
  trace.step(optimizer, at(2), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL207"});
  EXPECT_EQ(out[0].location.line, 2u);
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].location.line, 1u);
  EXPECT_EQ(out[0].notes[0].message, "backward() on the unscaled loss here");
}

TEST(AmpBackwardTrace, AScaledOrUnknownBackwardSinceTheUpdateKeepsItSilent) {
  const ObjectRef optimizer{2, "the optimizer"};
  std::vector<Finding> out;
  for (const auto other : {AmpBackwardTrace::Loss::Scaled, AmpBackwardTrace::Loss::Unknown}) {
    AmpBackwardTrace trace;
    trace.backward(AmpBackwardTrace::Loss::Unscaled, at(1));  // an auxiliary loss
    trace.backward(other, at(2));
    trace.step(optimizer, at(3), out);
    trace.update();
    trace.step(optimizer, at(4), out);  // no backward at all since the update
  }
  EXPECT_TRUE(out.empty()) << rules(out).size();
}

}  // namespace
}  // namespace dtype_lint
