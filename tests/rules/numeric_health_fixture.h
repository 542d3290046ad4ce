// What the unit tests of DL301-DL303 share: a line of a Python training script,
// the counts of one gradient.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "dtype_lint/numeric_health.h"

namespace dtype_lint {
namespace {

inline SourceLocation scriptAt(unsigned line) { return SourceLocation{"train.py", line, 0, line, 0}; }

inline GradientCounts gradient(std::string parameter, uint64_t elements, uint64_t nonFinite, uint64_t nonZero = 0,
                               uint64_t subnormal = 0, uint64_t flushed = 0) {
  GradientCounts g{std::move(parameter), {}};
  g.counts.elements = elements;
  g.counts.nonFinite = nonFinite;
  g.counts.nonZero = nonZero;
  g.counts.halfSubnormal = subnormal;
  g.counts.halfFlushed = flushed;
  return g;
}

}  // namespace
}  // namespace dtype_lint
