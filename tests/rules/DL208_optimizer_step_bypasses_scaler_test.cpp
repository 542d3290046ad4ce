// DL208 optimizer-step-bypasses-scaler: the optimizer's own step on scaled gradients, between unscale_() and update(),
// or after the scaler's step on the same gradients (LibTorch-free).
// Its samples are samples/DL208_optimizer_step_bypasses_scaler/ and
// samples/python/DL208_optimizer_step_bypasses_scaler/; its analyzer cases are the `dtype-lint-expect: DL208` markers
// in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

// In the iteration after one that stepped on an unscaled backward (DL207).
TEST_F(Protocol, DirectStepOnScaledIsDL208) {
  p.unscaledBackward(at(1));
  p.step(kScaler, kOpt, at(2), out);
  out.clear();  // DL207: Protocol.StepOnUnscaledBackwardIsDL207
  p.update(kScaler, at(3), out);
  p.scaledBackward(kScaler, at(4));
  p.optimizerStep(kOpt, at(5), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL208"});
}

// unscale_(), then the optimizer's own step(), then update(): the step used
// gradients whose inf check it ignored. Reported at that step once update()
// shows the scaler expected its own; without an update() it is left alone.
TEST_F(Protocol, ADirectStepBetweenUnscaleAndUpdateIsDL208AtTheStep) {
  p.scaledBackward(kScaler, at(1));
  p.unscale(kScaler, kOpt, at(2), out);
  p.optimizerStep(kOpt, at(3), out);
  EXPECT_TRUE(out.empty());
  p.update(kScaler, at(4), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL208"}) << "and no DL210: unscale_() recorded the inf checks";
  EXPECT_EQ(out[0].location.line, 3u);
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].message, "unscale_() here");
  EXPECT_EQ(out[0].notes[0].location.line, 2u);
  out.clear();
  p.update(kScaler, at(5), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"}) << "a second update() has no inf checks left";
}

// A leftover optimizer.step() after scaler.step(optimizer): a second update,
// which also applies the inf gradients of the steps the scaler skipped. Not
// after the next backward, nor where only one path stepped through the scaler.
TEST_F(Protocol, AnOptimizerStepAfterTheScalersStepOnTheSameGradientsIsDL208) {
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.optimizerStep(kOpt, at(2), out);  // an annotated scaler's step() makes the optimizer's itself
  EXPECT_TRUE(out.empty()) << rules(out).front();
  p.optimizerSteppedByScaler(kOpt, at(2));  // torch.amp.GradScaler's did
  p.update(kScaler, at(3), out);
  p.optimizerStep(kOpt, at(4), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL208"});
  EXPECT_EQ(out[0].location.line, 4u);
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].location.line, 2u);
  EXPECT_NE(out[0].message.find("updated twice"), std::string::npos) << out[0].message;
  out.clear();
  p.unscaledBackward(at(5));  // a new backward: a plain optimizer's step now
  p.optimizerStep(kOpt, at(6), out);
  p.scaledBackward(kScaler, at(7));
  ScalerProtocol skipped = p;  // a path that leaves the iteration before the scaler's step
  p.step(kScaler, kOpt, at(8), out);
  p.optimizerSteppedByScaler(kOpt, at(8));
  p.update(kScaler, at(9), out);
  p.join(skipped);
  p.optimizerStep(kOpt, at(10), out);
  EXPECT_TRUE(out.empty()) << rules(out).front();
}

}  // namespace
}  // namespace dtype_lint
