// What the CPU and the CUDA scans' tests share: row-major views, and the
// check that two scans' counts of one tensor agree exactly (the CPU scan, the
// CUDA scan, the scalar reference).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "dtype_lint_kernels/tensor_stats.h"

namespace dtype_lint::kernels {

inline TensorView contiguous(const void* data, ElementType type, const std::vector<int64_t>& sizes) {
  TensorView v;
  v.data = data;
  v.type = type;
  v.dims = static_cast<int32_t>(sizes.size());
  int64_t stride = 1;
  for (int d = v.dims - 1; d >= 0; --d) {
    v.sizes[d] = sizes[d];
    v.strides[d] = stride;
    stride *= sizes[d];
  }
  return v;
}

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
