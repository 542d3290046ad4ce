// DL304 fp16-optimizer-epsilon: which optimizers have an eps, and an eps that is zero or subnormal in the parameters'
// dtype (LibTorch-free).
// Its samples are samples/DL304_fp16_optimizer_epsilon/ and samples/python/DL304_fp16_optimizer_epsilon/; its analyzer
// cases are the `dtype-lint-expect: DL304` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_lint/dl304_optimizer_epsilon.h"
#include "rule_test_support.h"

namespace dtype_lint {
namespace {

TEST(OptimizerEpsilon, AdamAndAdamWHaveAnEpsSGDHasNone) {
  EXPECT_EQ(defaultEpsilon("Adam"), 1e-8);
  EXPECT_EQ(defaultEpsilon("AdamW"), 1e-8);
  EXPECT_FALSE(defaultEpsilon("SGD"));
  EXPECT_FALSE(defaultEpsilon("RMSprop"));

  std::vector<Finding> out;
  checkOptimizerEpsilon("AdamW 'opt'", *defaultEpsilon("AdamW"), DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("is zero in Half"), std::string::npos);
  checkOptimizerEpsilon("AdamW 'opt'", *defaultEpsilon("AdamW"), DtypeSet(ScalarType::Float), std::nullopt, at(1), out);
  EXPECT_EQ(out.size(), 1u);
}

TEST(OptimizerEpsilon, ZeroOrSubnormalInTheParametersDtype) {
  std::vector<Finding> out;
  checkOptimizerEpsilon("Adam 'opt'", 1e-8, DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("is zero in Half"), std::string::npos);
  checkOptimizerEpsilon("Adam 'opt'", 1e-7, DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[1].message.find("subnormal"), std::string::npos);
  checkOptimizerEpsilon("Adam 'opt'", 1e-4, DtypeSet(ScalarType::Half), std::nullopt, at(1), out);
  checkOptimizerEpsilon("Adam 'opt'", 1e-8, DtypeSet(ScalarType::BFloat16), std::nullopt, at(1), out);
  checkOptimizerEpsilon("Adam 'opt'", 1e-8, DtypeSet::unknown(), std::nullopt, at(1), out);
  EXPECT_EQ(out.size(), 2u);
}

}  // namespace
}  // namespace dtype_lint
