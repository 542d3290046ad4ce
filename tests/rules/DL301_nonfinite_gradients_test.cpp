// DL301 nonfinite-gradients: a step on inf/NaN gradients at once, unscales with inf/NaN only when they persist beyond
// what a scaler absorbs (LibTorch-free).
// Its samples are samples/DL301_nonfinite_gradients/ and samples/python/DL301_nonfinite_gradients/, run under the
// runtime hooks; it has no analyzer cases (a runtime-only rule).
#include <gtest/gtest.h>

#include "numeric_health_fixture.h"

namespace dtype_lint {
namespace {

TEST(NumericHealth, AStepWithInfOrNanGradientsIsReportedAtOnceNamingTheFirst) {
  NumericHealthRules rules;
  std::vector<Finding> out;
  GradientCheck check;
  check.point = GradientPoint::Step;
  check.gradients = {gradient("a Float [4] parameter", 4, 0, 4), gradient("a Float [512, 256] parameter", 131072, 3),
                     gradient("a Float [10] parameter", 10, 10)};
  rules.onGradients(check, scriptAt(40), out);
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
    rules.onGradients(*c, scriptAt(12), out);
  EXPECT_TRUE(out.empty());
  rules.onGradients(overflow, scriptAt(12), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, "DL301");
  EXPECT_NE(out[0].message.find("at 3 unscales in a row (1 of 8 values of the gradient of a Half [8] parameter"),
            std::string::npos)
      << out[0].message;
  ASSERT_EQ(out[0].notes.size(), 1u);
  EXPECT_EQ(out[0].notes[0].message, "the first of these unscales");
  rules.onGradients(overflow, scriptAt(12), out);  // said once per run of overflows
  EXPECT_EQ(out.size(), 1u);
}

}  // namespace
}  // namespace dtype_lint
