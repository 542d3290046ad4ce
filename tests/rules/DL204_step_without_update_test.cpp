// DL204 step-without-update: a step, or the next unscale, after an iteration that stepped and was left without update()
// (LibTorch-free).
// Its samples are samples/DL204_step_without_update/ and samples/python/DL204_step_without_update/; its analyzer cases
// are the `dtype-lint-expect: DL204` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

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

TEST_F(Protocol, StepAgainWithoutUpdateIsDL204AndNamesTheSkip) {
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.leaveIteration(at(3));
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL204"});
  EXPECT_EQ(out[0].notes.back().location.line, 3u);
}

}  // namespace
}  // namespace dtype_lint
