// The scaler protocol state machine alone, as both front ends drive it.
#include <gtest/gtest.h>

#include "dtype_lint/dl203_manual_scaling.h"
#include "dtype_lint/dl304_optimizer_epsilon.h"
#include "dtype_lint/scaler_protocol.h"

namespace dtype_lint {
namespace {

const ObjectRef kScaler{1, "'scaler'"};
const ObjectRef kOpt{2, "'opt'"};
const ObjectRef kOther{3, "'other'"};

SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 3, line, 10}; }

std::vector<std::string> rules(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const Finding& f : findings) out.emplace_back(f.rule->id);
  return out;
}

class Protocol : public ::testing::Test {
 protected:
  void SetUp() override {
    p.declareScaler(kScaler);
    p.declareOptimizer(kOpt, DtypeSet(ScalarType::Float), std::nullopt, 0);
  }
  ScalerProtocol p;
  std::vector<Finding> out;
};

TEST_F(Protocol, ACorrectIterationIsSilent) {
  for (unsigned i = 0; i < 3; ++i) {
    p.zeroGrad(kOpt);
    p.scaledBackward(kScaler, at(1));
    p.unscale(kScaler, kOpt, at(2), out);
    p.clip(&kOpt, 0, at(3), out);
    p.step(kScaler, kOpt, at(4), out);
    p.update(kScaler, at(5), out);
  }
  EXPECT_TRUE(out.empty()) << rules(out).size();
}

TEST_F(Protocol, SecondUnscaleBeforeUpdateIsDL201WithANoteAtTheFirst) {
  p.scaledBackward(kScaler, at(1));
  p.unscale(kScaler, kOpt, at(2), out);
  p.unscale(kScaler, kOpt, at(3), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL201"});
  EXPECT_EQ(out[0].location.line, 3u);
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].location.line, 2u);
  EXPECT_EQ(out[0].notes[0].message, "first unscale here");
}

// An iteration that steps and leaves by `continue` without update(): the next
// iteration's unscale_() is the consequence; the finding is DL204 at that step.
TEST_F(Protocol, UnscaleAfterAnIterationLeftWithoutUpdateIsDL204AtItsStep) {
  p.unscale(kScaler, kOpt, at(2), out);
  p.step(kScaler, kOpt, at(3), out);
  p.leaveIteration(at(4));
  p.unscale(kScaler, kOpt, at(2), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL204"});
  EXPECT_EQ(out[0].location.line, 3u);
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[0].location.line, 4u);
  EXPECT_EQ(out[0].notes[1].message, "the next unscale_() here");
}

// A path through code the front end cannot follow (a hook that may update the
// scaler) leaves the scaler unknown, also where it joins a path that did not
// run it (a list of hooks that may be empty): nothing is reported until the
// next transition makes its state known again.
TEST_F(Protocol, AForgottenScalerStaysUnknownThroughAJoinUntilItsNextTransition) {
  p.unscale(kScaler, kOpt, at(2), out);
  p.step(kScaler, kOpt, at(3), out);
  ScalerProtocol hooked = p;
  hooked.forgetAll();
  p.join(hooked);
  p.unscale(kScaler, kOpt, at(2), out);
  EXPECT_TRUE(out.empty()) << rules(out)[0];
  p.unscale(kScaler, kOpt, at(5), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL201"});
}

TEST_F(Protocol, ForgettingOneScalerKeepsTheOthers) {
  const ObjectRef second{4, "'second'"};
  p.declareScaler(second);
  p.unscale(kScaler, kOpt, at(2), out);
  p.unscale(second, kOpt, at(3), out);
  p.forgetScaler(second.id);
  p.unscale(second, kOpt, at(4), out);
  EXPECT_TRUE(out.empty());
  p.unscale(kScaler, kOpt, at(5), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL201"});
}

TEST_F(Protocol, EachOptimizerOfAScalerIsUnscaledOnce) {
  p.declareOptimizer(kOther, DtypeSet(ScalarType::Float), std::nullopt, 0);
  p.scaledBackward(kScaler, at(1));
  p.unscale(kScaler, kOpt, at(2), out);
  p.unscale(kScaler, kOther, at(3), out);
  p.step(kScaler, kOpt, at(4), out);
  p.step(kScaler, kOther, at(5), out);
  p.update(kScaler, at(6), out);
  EXPECT_TRUE(out.empty());
}

TEST_F(Protocol, AnUpdateFromInfChecksStartsOverEveryOptimizer) {
  for (unsigned i = 0; i < 3; ++i) {
    p.unscale(kScaler, kOpt, at(1), out);
    p.updateFromInfChecks(kScaler, at(2), out);
  }
  EXPECT_TRUE(out.empty()) << rules(out).size();
  p.unscale(kScaler, kOpt, at(3), out);
  p.unscale(kScaler, kOpt, at(4), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL201"});
}

TEST_F(Protocol, AnUpdateWithNoInfCheckSinceTheLastUpdateIsDL210) {
  p.updateFromInfChecks(kScaler, at(1), out);  // the first update seen: nothing known before it
  EXPECT_TRUE(out.empty());
  p.unscale(kScaler, kOpt, at(2), out);
  p.updateFromInfChecks(kScaler, at(3), out);
  EXPECT_TRUE(out.empty());
  p.updateFromInfChecks(kScaler, at(4), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL210"});
  EXPECT_EQ(out[0].location.line, 4u);
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].location.line, 3u);
  EXPECT_NE(out[0].message.find("no inf check"), std::string::npos) << out[0].message;
}

TEST_F(Protocol, AnInfCheckOfAnUnidentifiedOptimizerCountsForTheUpdate) {
  p.updateFromInfChecks(kScaler, at(1), out);
  p.unscaleUnidentifiedOptimizer(kScaler);
  p.updateFromInfChecks(kScaler, at(2), out);
  EXPECT_TRUE(out.empty());
  p.updateFromInfChecks(kScaler, at(3), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"});
}

TEST_F(Protocol, UnscaleAfterStepIsDL206) {
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.unscale(kScaler, kOpt, at(3), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL206"});
}

TEST_F(Protocol, AStepSeenByItsParameterUpdatesMakesTheNextUnscaleDL206NotDL201) {
  p.updateFromInfChecks(kScaler, at(1), out);
  p.unscale(kScaler, kOpt, at(2), out);
  p.stepSeenByParameterUpdate(kScaler, kOpt, at(3));
  p.stepSeenByParameterUpdate(kScaler, kOpt, at(3));  // every parameter shows it: no DL204
  p.unscale(kScaler, kOpt, at(4), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL206"});
  EXPECT_EQ(out[0].location.line, 4u);
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].location.line, 3u);
  out.clear();
  p.updateFromInfChecks(kScaler, at(5), out);
  EXPECT_TRUE(out.empty()) << "the step counts for the update";
}

TEST_F(Protocol, AnUnscaleGuardedByTheScalersStateHappensOnlyFromReady) {
  p.updateFromInfChecks(kScaler, at(1), out);
  p.unscale(kScaler, kOpt, at(2), out);
  p.unscaleUnlessDone(kScaler, kOpt, at(3), out);  // step()'s implicit unscale, skipped
  EXPECT_TRUE(out.empty());
  p.updateFromInfChecks(kScaler, at(4), out);
  p.unscaleUnlessDone(kScaler, kOpt, at(5), out);  // the implicit unscale does happen
  p.unscale(kScaler, kOpt, at(6), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL201"});
  EXPECT_EQ(out[0].notes[0].location.line, 5u);
}

TEST_F(Protocol, StepAgainWithoutUpdateIsDL204AndNamesTheSkip) {
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.leaveIteration(at(3));
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL204"});
  EXPECT_EQ(out[0].notes.back().location.line, 3u);
}

TEST_F(Protocol, JoinKeepsEveryPossibleStage) {
  ScalerProtocol skipped = p;
  p.scaledBackward(kScaler, at(1));
  p.unscale(kScaler, kOpt, at(2), out);
  p.join(skipped);  // one path unscaled, one not: a later unscale may be the second
  p.unscale(kScaler, kOpt, at(3), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL201"});
}

TEST_F(Protocol, UnknownScalersReportNothingUntilATransitionMakesThemKnown) {
  ScalerProtocol fresh;
  fresh.unscale(kScaler, kOpt, at(1), out);  // an unknown pair: could be READY
  fresh.update(kScaler, at(2), out);  // may have stepped
  EXPECT_TRUE(out.empty());
  fresh.update(kScaler, at(3), out);  // now known: no step since the last update
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"});
}

TEST_F(Protocol, StepOnUnscaledBackwardIsDL207AndDirectStepOnScaledIsDL208) {
  p.unscaledBackward(at(1));
  p.step(kScaler, kOpt, at(2), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL207"});
  out.clear();
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
  p.unscaleUnidentifiedOptimizer(kScaler);
  p.clip(&kOpt, 0, at(2), out);
  EXPECT_TRUE(out.empty()) << rules(out).front();
}

TEST_F(Protocol, HalfParametersAreDL202AndBFloat16IsDL209) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::Half), Note{at(9), "became Half here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL202"});
  EXPECT_EQ(out[0].notes.front().location.line, 9u);
  out.clear();
  p.update(kScaler, at(3), out);
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::BFloat16), std::nullopt, 0);
  p.unscale(kScaler, kOpt, at(4), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL209"});
}

// DL209 names the backward of the loss the scaler scaled (where the scaler
// was put to use), once for its gradients, with the unscale as a note.
TEST_F(Protocol, BFloat16ParametersAreReportedOnceAtTheScaledBackward) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::BFloat16), Note{at(9), "became BFloat16 here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.unscale(kScaler, kOpt, at(3), out);
  ASSERT_EQ(rules(out), (std::vector<std::string>{"DL209", "DL206"}));
  EXPECT_EQ(out[0].location.line, 1u);
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[1].location.line, 2u);
  EXPECT_EQ(out[0].notes[1].message, "its gradients unscaled here");
}

TEST(ManualScaling, OnlyScalingForPrecisionIsReported) {
  std::vector<Finding> out;
  ManualScaling weight{at(1), "0.5", false, false};
  checkManualScalingAtBackward(weight, at(2), out);
  checkScalingInsideScaler(weight, at(2), out);
  EXPECT_TRUE(out.empty());
  ManualScaling named{at(1), "'loss_scale'", false, true};
  checkScalingInsideScaler(named, at(2), out);
  ManualScaling large{at(1), "1024", true, false};
  checkManualScalingAtBackward(large, at(2), out);
  EXPECT_EQ(rules(out), (std::vector<std::string>{"DL203", "DL203"}));
}

TEST(ManualScaling, AWeightInsideTheScalerDividedBackByHandIsReportedOnce) {
  constexpr uintptr_t kBoost = 7;
  std::vector<Finding> out;
  PendingManualScaling pending;
  ManualScaling boost{at(1), "'kBoost' (16)", false, false};
  pending.scaledInsideScaler(boost, kBoost, at(1), out);
  EXPECT_TRUE(out.empty());  // a weight, so far
  pending.gradientsDividedBy(kBoost, at(3), out);
  ASSERT_EQ(rules(out), (std::vector<std::string>{"DL203"}));
  EXPECT_EQ(out[0].location.line, 1u);
  EXPECT_EQ(out[0].notes.back().message, "gradients divided back here");
  out.clear();
  PendingManualScaling twice;
  ManualScaling scale{at(1), "1024", true, false};
  twice.scaledInsideScaler(scale, kBoost, at(1), out);
  twice.gradientsDividedBy(kBoost, at(3), out);
  EXPECT_EQ(rules(out), (std::vector<std::string>{"DL203"}));  // scaled twice, said once
}

TEST(ManualScalingTrace, ScalingUndoneWithoutACheckIsReportedAtTheBackward) {
  std::vector<Finding> out;
  ManualScalingTrace trace;
  trace.backward(512.0, at(10), out);
  EXPECT_FALSE(trace.undoesPendingFactor(1.0 / 256));
  ASSERT_TRUE(trace.undoesPendingFactor(1.0 / 512));
  trace.gradientsDividedBack(at(11));
  trace.backward(std::nullopt, at(20), out);  // the next backward decides the previous one
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL203"});
  EXPECT_EQ(out[0].location.line, 10u);
  EXPECT_NE(out[0].message.find("512"), std::string::npos) << out[0].message;
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes.back().location.line, 11u);
}

TEST(ManualScalingTrace, AnInfCheckOrASmallUndividedWeightIsSilent) {
  std::vector<Finding> out;
  ManualScalingTrace trace;
  trace.backward(1024.0, at(1), out);
  trace.gradientsDividedBack(at(2));
  trace.nonFiniteCheck();
  trace.backward(0.5, at(3), out);
  trace.finish(out);
  EXPECT_TRUE(out.empty());
  trace.backward(65536.0, at(4), out);  // large, not divided back, no check
  trace.finish(out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL203"});
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

TEST(OptimizerEpsilon, ZeroOrSubnormalInTheParametersDtype) {
  std::vector<Finding> out;
  checkOptimizerEpsilon("Adam 'opt'", 1e-8, DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("is zero in Half"), std::string::npos);
  checkOptimizerEpsilon("Adam 'opt'", 1e-7, DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[1].message.find("subnormal"), std::string::npos);
  checkOptimizerEpsilon("Adam 'opt'", 1e-4, DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  checkOptimizerEpsilon("Adam 'opt'", 1e-8, DtypeSet(ScalarType::BFloat16), std::nullopt, at(1), out);
  checkOptimizerEpsilon("Adam 'opt'", 1e-8, DtypeSet::unknown(), std::nullopt, at(1), out);
  EXPECT_EQ(out.size(), 2u);
}

// A method starts from the declarations its class's constructors made: a
// scaler made with `enabled` chosen at run time stays one that may be off.
TEST(ScalerDeclarations, AdoptedScalersKeepWhetherTheyMayBeDisabled) {
  ScalerProtocol constructed;
  constructed.declareScaler(kScaler, /*mayBeDisabled=*/true);
  ScalerProtocol method;
  method.adoptDeclarations(constructed);
  EXPECT_TRUE(method.mayBeDisabled(kScaler.id));
}

}  // namespace
}  // namespace dtype_lint
