// DL302 fp16-overflow-cast: a cast to Half, by hand or by autocast, of values beyond Half's range (LibTorch-free).
// Its samples are samples/DL302_fp16_overflow_cast/ and samples/python/DL302_fp16_overflow_cast/, run under the runtime
// hooks; it has no analyzer cases (a runtime-only rule).
#include <gtest/gtest.h>

#include "numeric_health_fixture.h"

namespace dtype_lint {
namespace {

TEST(NumericHealth, ACastToHalfOfValuesBeyondItsRangeSaysWhichAndHowLarge) {
  NumericHealthRules rules;
  ValueCounts counts;
  counts.elements = 4096;
  std::vector<Finding> out;
  rules.onHalfCast("to", "'self'", ScalarType::Float, false, counts, scriptAt(3), out);
  EXPECT_TRUE(out.empty());
  counts.beyondHalf = 17;
  counts.absMax = 131072;
  rules.onHalfCast("to", "'self'", ScalarType::Float, false, counts, scriptAt(3), out);
  rules.onHalfCast("linear", "'input'", ScalarType::Float, true, counts, scriptAt(9), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].rule->id, "DL302");
  EXPECT_EQ(out[0].message,
            "a cast of 'self' (Float: 17 of 4096 values beyond +-65504, up to 131072) to Half: they become inf; scale "
            "the values down or keep them in Float/BFloat16");
  EXPECT_EQ(out[1].message,
            "autocast casts 'input' (Float: 17 of 4096 values beyond +-65504, up to 131072) to Half for linear: they "
            "become inf");
}

}  // namespace
}  // namespace dtype_lint
