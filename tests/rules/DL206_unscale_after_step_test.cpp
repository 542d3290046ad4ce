// DL206 unscale-after-step: unscale_() after a step, also one seen only by its parameters' updates (LibTorch-free).
// Its samples are samples/DL206_unscale_after_step/ and samples/python/DL206_unscale_after_step/; its analyzer cases
// are the `dtype-lint-expect: DL206` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

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

}  // namespace
}  // namespace dtype_lint
