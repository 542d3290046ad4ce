// What the scaler protocol's tests share: a protocol that knows a scaler and an
// optimizer of Float parameters, and another optimizer it does not know yet.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "dtype_lint/scaler_protocol.h"
#include "rule_test_support.h"

// Not in an unnamed namespace: googletest wants one fixture class for all the
// test files of the suite.
namespace dtype_lint {

inline const ObjectRef kScaler{1, "'scaler'"};
inline const ObjectRef kOpt{2, "'opt'"};
inline const ObjectRef kOther{3, "'other'"};

class Protocol : public ::testing::Test {
 protected:
  void SetUp() override {
    p.declareScaler(kScaler);
    p.declareOptimizer(kOpt, DtypeSet(ScalarType::Float), std::nullopt, 0);
  }
  ScalerProtocol p;
  std::vector<Finding> out;
};

}  // namespace dtype_lint
