// DL201 double-unscale: a second unscale before update(), also after step()'s implicit one (LibTorch-free).
// Its samples are samples/DL201_double_unscale/ and samples/python/DL201_double_unscale/; its analyzer cases are the
// `dtype-lint-expect: DL201` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

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

}  // namespace
}  // namespace dtype_lint
