// DL210 double-update: an update() with no inf check since the last one, where an unscale of an unidentified optimizer
// counts as one (LibTorch-free).
// Its samples are samples/DL210_double_update/ and samples/python/DL210_double_update/; its analyzer cases are the
// `dtype-lint-expect: DL210` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

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
  p.unscaleUnidentifiedOptimizer(kScaler, at(2), out);
  p.updateFromInfChecks(kScaler, at(2), out);
  EXPECT_TRUE(out.empty());
  p.updateFromInfChecks(kScaler, at(3), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"});
}

// `for (...) { if (i % accum == 0) scaler.step(opt); } scaler.update();`:
// the step some iteration's path makes ran by the loop's end; inside the
// loop, an update() on the path that skipped the step raises.
TEST_F(Protocol, AStepOnSomeIterationsPathRanWhenTheLoopIsLeft) {
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(1), out);
  p.update(kScaler, at(1), out);
  ScalerProtocol skipped = p;
  p.scaledBackward(kScaler, at(2));
  p.step(kScaler, kOpt, at(2), out);
  p.join(skipped);
  ScalerProtocol inside = p;
  inside.update(kScaler, at(3), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"});
  out.clear();
  p.leaveLoop();
  p.update(kScaler, at(4), out);
  EXPECT_TRUE(out.empty()) << rules(out).front();
  skipped.leaveLoop();  // no step on any path: still raises
  skipped.update(kScaler, at(5), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"});
}

// `for (opt : optimizers) { scaler.step(opt); scaler.update(); }`: the
// second update() has steps since the first but no backward: the second in
// one iteration. Where no backward was seen before the first (one in code
// not followed), nothing is said.
TEST_F(Protocol, AnUpdateWithNoBackwardSinceTheLastIsTheIterationsSecond) {
  const ObjectRef other{3, "'other'"};
  p.declareOptimizer(other, DtypeSet(ScalarType::Float), std::nullopt, 0);
  ScalerProtocol unseen = p;
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.update(kScaler, at(3), out);
  p.step(kScaler, other, at(4), out);
  p.update(kScaler, at(5), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL210"});
  EXPECT_EQ(out[0].location.line, 5u);
  EXPECT_EQ(out[0].notes.at(0).location.line, 3u);
  EXPECT_NE(out[0].message.find("second time in one iteration"), std::string::npos) << out[0].message;

  // An update() already reported (inside the accumulation loop, before any
  // step): the update() after the step is its consequence, not a second finding.
  out.clear();
  ScalerProtocol misplaced;
  misplaced.declareScaler(kScaler);
  misplaced.declareOptimizer(kOpt, DtypeSet(ScalarType::Float), std::nullopt, 0);
  misplaced.scaledBackward(kScaler, at(1));
  misplaced.update(kScaler, at(2), out);
  misplaced.step(kScaler, kOpt, at(3), out);
  misplaced.update(kScaler, at(4), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL210"});
  EXPECT_EQ(out[0].location.line, 2u);

  out.clear();
  unseen.stepUnidentifiedOptimizer(kScaler, at(2), out);
  unseen.update(kScaler, at(3), out);
  unseen.stepUnidentifiedOptimizer(kScaler, at(4), out);
  unseen.update(kScaler, at(5), out);
  EXPECT_TRUE(out.empty()) << rules(out).front();
}

}  // namespace
}  // namespace dtype_lint
