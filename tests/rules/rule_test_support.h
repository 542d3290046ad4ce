// What the rule core's unit tests share: short names of the dtypes, a line of a
// C++ training file, the rules that findings name.
#pragma once

#include <string>
#include <vector>

#include "dtype_lint/dtype.h"
#include "dtype_lint/finding.h"

// In an unnamed namespace, as the helpers of each test file are (the numeric
// health tests' at() is another).
namespace dtype_lint {
namespace {

constexpr ScalarType Half = ScalarType::Half, BF16 = ScalarType::BFloat16, F32 = ScalarType::Float,
                     F64 = ScalarType::Double, I64 = ScalarType::Int64;

inline SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 3, line, 10}; }

inline std::vector<std::string> rules(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const Finding& f : findings) out.emplace_back(f.rule->id);
  return out;
}

}  // namespace
}  // namespace dtype_lint
