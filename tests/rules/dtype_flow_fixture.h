// What the DL1xx rules' unit tests share: hand-made events, run through the
// dtype flow rules of LibTorch 1.13.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dtype_lint/dtype_flow_rules.h"
#include "rule_test_support.h"

namespace dtype_lint {
namespace {

inline Operand operand(std::string name, DtypeSet dtype) { return Operand{std::move(name), dtype, std::nullopt}; }

inline std::vector<Finding> run(const OpEvent& e) {
  std::vector<Finding> out;
  DtypeFlowRules({1, 13}).onOp(e, out);
  return out;
}

inline OpEvent matmul(DtypeSet a, DtypeSet b) {
  OpEvent e;
  e.op = "mm";
  e.location = at(10);
  e.inputs = {operand("'x'", a), operand("'w'", b)};
  return e;
}

}  // namespace
}  // namespace dtype_lint
