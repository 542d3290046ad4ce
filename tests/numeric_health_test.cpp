// DL301-DL303 as rules/ decides them from counted values.
#include <gtest/gtest.h>

#include <map>

#include "dtype_lint/numeric_health.h"

namespace dtype_lint {
namespace {

SourceLocation at(unsigned line) { return SourceLocation{"train.py", line, 0, line, 0}; }

GradientCounts gradient(std::string parameter, uint64_t elements, uint64_t nonFinite, uint64_t nonZero = 0,
                        uint64_t subnormal = 0, uint64_t flushed = 0) {
  GradientCounts g{std::move(parameter), {}};
  g.counts.elements = elements;
  g.counts.nonFinite = nonFinite;
  g.counts.nonZero = nonZero;
  g.counts.halfSubnormal = subnormal;
  g.counts.halfFlushed = flushed;
  return g;
}

TEST(NumericHealth, AStepWithInfOrNanGradientsIsReportedAtOnceNamingTheFirst) {
  NumericHealthRules rules;
  std::vector<Finding> out;
  GradientCheck check;
  check.point = GradientPoint::Step;
  check.gradients = {gradient("a Float [4] parameter", 4, 0, 4), gradient("a Float [512, 256] parameter", 131072, 3),
                     gradient("a Float [10] parameter", 10, 10)};
  rules.onGradients(check, at(40), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL301");
  EXPECT_EQ(out[0].location.line, 40u);
  EXPECT_EQ(out[0].message,
            "the optimizer steps with inf/NaN gradients (3 of 131072 values of the gradient of a Float [512, 256] "
            "parameter and 1 more gradient): the update writes them into the weights; skip the step on inf/NaN (a "
            "GradScaler does) or find where they start");
}

TEST(NumericHealth, UnscalesWithInfOrNanAreReportedOnlyWhenTheyPersist) {
  NumericHealthOptions options;
  options.nonFiniteSkippedSteps = 3;
  NumericHealthRules rules(options);
  GradientCheck overflow;
  overflow.point = GradientPoint::Unscale;
  overflow.gradients = {gradient("a Half [8] parameter", 8, 1)};
  GradientCheck clean = overflow;
  clean.gradients = {gradient("a Half [8] parameter", 8, 0, 8)};
  std::vector<Finding> out;
  // What a dynamic scaler absorbs: two overflows, a clean step, two more.
  for (const GradientCheck* c : {&overflow, &overflow, &clean, &overflow, &overflow})
    rules.onGradients(*c, at(12), out);
  EXPECT_TRUE(out.empty());
  rules.onGradients(overflow, at(12), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL301");
  EXPECT_NE(out[0].message.find("at 3 unscales in a row (1 of 8 values of the gradient of a Half [8] parameter"),
            std::string::npos)
      << out[0].message;
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].message, "the first of these unscales");
  rules.onGradients(overflow, at(12), out);  // said once per run of overflows
  EXPECT_EQ(out.size(), 1u);
}

TEST(NumericHealth, HalfGradientsBelowHalfsNormalRangeAboveTheShareNameTheLossScale) {
  NumericHealthRules rules;
  GradientCheck check;
  check.point = GradientPoint::Unscale;
  check.lossScale = 8;
  check.computedInHalf = true;
  check.gradients = {gradient("a Float [100] parameter", 100, 0, 100, 60, 2),
                     gradient("a Float [900] parameter", 900, 0, 900, 200, 0)};
  std::vector<Finding> out;
  rules.onGradients(check, at(7), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL303");
  EXPECT_EQ(out[0].message,
            "26.0% of the nonzero gradient values (260 of 1000) are below Half's normal range (|x| < 6.1e-05), 2 of "
            "them flush to zero in Half (over the 25% threshold): the loss scale (8) is too small");

  out.clear();
  check.gradients[1].counts.halfSubnormal = 180;  // 24%: under the threshold, as correct fp16 runs of real models
  rules.onGradients(check, at(7), out);
  EXPECT_TRUE(out.empty());

  check.gradients[1].counts.halfSubnormal = 500;
  check.computedInHalf = false;  // Float training: small gradients are normal there
  rules.onGradients(check, at(7), out);
  EXPECT_TRUE(out.empty());

  check.computedInHalf = true;
  check.afterScalingMistake = true;  // tiny because clipped while scaled (DL205): a larger scale would not help
  rules.onGradients(check, at(7), out);
  EXPECT_TRUE(out.empty());

  check.afterScalingMistake = false;
  check.gradients = {gradient("a Half [10] parameter", 10, 0, 10, 10)};  // too few values to say
  rules.onGradients(check, at(7), out);
  EXPECT_TRUE(out.empty());
}

TEST(NumericHealth, ACastToHalfOfValuesBeyondItsRangeSaysWhichAndHowLarge) {
  NumericHealthRules rules;
  ValueCounts counts;
  counts.elements = 4096;
  std::vector<Finding> out;
  rules.onHalfCast("to", "'self'", ScalarType::Float, false, counts, at(3), out);
  EXPECT_TRUE(out.empty());
  counts.beyondHalf = 17;
  counts.absMax = 131072;
  rules.onHalfCast("to", "'self'", ScalarType::Float, false, counts, at(3), out);
  rules.onHalfCast("linear", "'input'", ScalarType::Float, true, counts, at(9), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].rule->id, "DL302");
  EXPECT_EQ(out[0].message,
            "a cast of 'self' (Float: 17 of 4096 values beyond +-65504, up to 131072) to Half: they become inf; scale "
            "the values down or keep them in Float/BFloat16");
  EXPECT_EQ(out[1].message,
            "autocast casts 'input' (Float: 17 of 4096 values beyond +-65504, up to 131072) to Half for linear: they "
            "become inf");
}

TEST(NumericHealth, CadenceCountsEveryCastAtFirstThenOneInN) {
  NumericHealthOptions options;
  options.castCheckEvery = 10;
  options.gradientCheckEvery = 2;
  NumericHealthRules rules(options);
  int casts = 0, points = 0;
  for (int i = 0; i < 164; ++i) casts += rules.sampleCast();
  for (int i = 0; i < 10; ++i) points += rules.sampleGradients();
  EXPECT_EQ(casts, 64 + 10);
  EXPECT_EQ(points, 5);
}

TEST(NumericHealth, OptionsComeFromTheEnvironmentAndAMalformedOneIsNamed) {
  std::map<std::string, std::string> env = {{"DTYPE_LINT_NONFINITE_SKIPPED_STEPS", "4"},
                                            {"DTYPE_LINT_UNDERFLOW_SHARE", "0.2"},
                                            {"DTYPE_LINT_CAST_CHECK_EVERY", "many"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::string error;
  const NumericHealthOptions o = numericHealthOptionsFrom(getenv, error);
  EXPECT_EQ(o.nonFiniteSkippedSteps, 4u);
  EXPECT_EQ(o.underflowShare, 0.2);
  EXPECT_EQ(o.castCheckEvery, 16u);
  EXPECT_EQ(o.gradientCheckEvery, 1u);
  EXPECT_EQ(error, "DTYPE_LINT_CAST_CHECK_EVERY='many' is not a positive integer; the default is used");
  env = {{"DTYPE_LINT_UNDERFLOW_SHARE", "1.5"}};
  error.clear();
  numericHealthOptionsFrom(getenv, error);
  EXPECT_EQ(error, "DTYPE_LINT_UNDERFLOW_SHARE='1.5' is not a share between 0 and 1; the default is used");
  env = {{"DTYPE_LINT_UNDERFLOW_SHARE", "nan"}, {"DTYPE_LINT_CAST_CHECK_EVERY", "0"}};  // each one named
  error.clear();
  numericHealthOptionsFrom(getenv, error);
  EXPECT_EQ(error, "DTYPE_LINT_UNDERFLOW_SHARE='nan' is not a share between 0 and 1; the default is used; "
                   "DTYPE_LINT_CAST_CHECK_EVERY='0' is not a positive integer; the default is used");
}

}  // namespace
}  // namespace dtype_lint
