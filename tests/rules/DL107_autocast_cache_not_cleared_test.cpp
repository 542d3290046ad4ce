// DL107 autocast-cache-not-cleared: an optimizer step with autocast's weight cache filled, at the step or where the
// region was left (LibTorch-free).
// Its samples are samples/DL107_autocast_cache_not_cleared/; its analyzer cases are the `dtype-lint-expect: DL107`
// markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_flow_fixture.h"

namespace dtype_lint {
namespace {

TEST(DtypeFlowRules, StepWithAFilledAutocastCacheIsDL107) {
  OptimizerStepEvent step;
  step.location = at(12);
  step.optimizer = "'opt'";
  std::vector<Finding> out;
  DtypeFlowRules({1, 13}).onOptimizerStep(step, out);
  EXPECT_TRUE(out.empty());
  step.autocastCache.filledAt = at(8);
  step.autocast.cuda.enabled = Tristate::On;
  DtypeFlowRules({1, 13}).onOptimizerStep(step, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL107");
  EXPECT_NE(out[0].message.find("still enabled"), std::string::npos);
  EXPECT_EQ(out[0].notes.front().location.line, 8u);
  EXPECT_EQ(out[0].location.line, 12u);
}

TEST(DtypeFlowRules, RegionLeftWithoutClearingIsDL107WhereItWasLeft) {
  OptimizerStepEvent step;
  step.location = at(12);
  step.optimizer = "'opt'";
  step.autocastCache.filledAt = at(8);
  step.autocastCache.regionLeftAt = at(9);
  std::vector<Finding> out;
  DtypeFlowRules({1, 13}).onOptimizerStep(step, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL107");
  EXPECT_EQ(out[0].location.line, 9u);
  EXPECT_NE(out[0].message.find("the optimizer step on 'opt' makes stale"), std::string::npos) << out[0].message;
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[0].location.line, 8u);
  EXPECT_EQ(out[0].notes[1].location.line, 12u);
}

}  // namespace
}  // namespace dtype_lint
