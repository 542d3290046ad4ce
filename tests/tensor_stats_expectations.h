// Two scans' counts of one tensor must agree exactly (the CPU scan, the CUDA
// scan, the scalar reference).
#pragma once

#include <gtest/gtest.h>

#include "dtype_lint_kernels/tensor_stats.h"

namespace dtype_lint::kernels {

inline void expectSame(const TensorStats& a, const TensorStats& b) {
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.nonFinite, b.nonFinite);
  EXPECT_EQ(a.beyondHalf, b.beyondHalf);
  EXPECT_EQ(a.halfSubnormal, b.halfSubnormal);
  EXPECT_EQ(a.halfFlushed, b.halfFlushed);
  EXPECT_EQ(a.nonZero, b.nonZero);
  EXPECT_EQ(a.absMax, b.absMax);
}

}  // namespace dtype_lint::kernels
