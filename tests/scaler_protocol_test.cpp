// The scaler protocol state machine alone, as both front ends drive it: what no
// one rule decides (several optimizers, joins, forgotten and unknown scalers).
// Each rule's cases are in tests/rules/.
#include <gtest/gtest.h>

#include "rules/protocol_fixture.h"

namespace dtype_lint {
namespace {

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
