// DL304 fp16-optimizer-epsilon: which optimizers have an eps (LibTorch-free).
#include <gtest/gtest.h>

#include "dtype_lint/dl304_optimizer_epsilon.h"

namespace dtype_lint {
namespace {

SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 3, line, 10}; }

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

}  // namespace
}  // namespace dtype_lint
