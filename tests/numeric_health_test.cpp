// What DL301-DL303 share as rules/ decides them from counted values: how often
// values are counted, the options. Each rule's cases are in tests/rules/.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dtype_lint/numeric_health.h"

namespace dtype_lint {
namespace {

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

// The counts cost the hooks their time: values are counted only for the
// rules selected (DTYPE_LINT_CHECKS, from Checks: and --rules).
TEST(NumericHealth, ValuesAreCountedOnlyForTheSelectedRules) {
  std::map<std::string, std::string> env;
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto counts = [&](const char* checks) {
    env = {{"DTYPE_LINT_CHECKS", checks}};
    std::string error;
    NumericHealthRules rules(numericHealthOptionsFrom(getenv, error));
    EXPECT_EQ(error, "") << checks;
    return std::pair{rules.sampleGradients(), rules.sampleCast()};
  };
  EXPECT_EQ(counts("DL3*"), std::pair(true, true));
  EXPECT_EQ(counts("-DL302"), std::pair(true, false));
  EXPECT_EQ(counts("DL1*,DL2*"), std::pair(false, false));
  EXPECT_EQ(counts("-*,DL303"), std::pair(true, false));
  EXPECT_EQ(counts("DL3*,-DL301,-DL303"), std::pair(false, true));

  env = {{"DTYPE_LINT_CHECKS", "DL9*"}};
  std::string error;
  NumericHealthRules rules(numericHealthOptionsFrom(getenv, error));
  EXPECT_EQ(error, "DTYPE_LINT_CHECKS='DL9*': 'DL9*' matches no rule; every rule is checked");
  EXPECT_TRUE(rules.sampleGradients());
  EXPECT_TRUE(rules.sampleCast());
}

}  // namespace
}  // namespace dtype_lint
