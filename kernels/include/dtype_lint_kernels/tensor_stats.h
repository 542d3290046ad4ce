// Tensor health statistics: for each tensor of a list, how many of its values
// are inf/NaN, beyond Half's range, subnormal or lost in Half, and its absmax.
// One fused read of each tensor; the rules (rules/) decide what is a bug.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dtype_lint::kernels {

enum class ElementType : int32_t { Float, Half, BFloat16, Double };

inline constexpr int kMaxDims = 8;

// A tensor's values: sizes and strides in elements (any strides: transposed,
// expanded with stride 0, overlapping views are read element by element).
struct TensorView {
  const void* data = nullptr;
  ElementType type = ElementType::Float;
  int32_t dims = 0;  // 0: a scalar (one element)
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

// Counts per the classification of element_class.h.
struct TensorStats {
  uint64_t elements = 0;
  uint64_t nonFinite = 0;
  uint64_t beyondHalf = 0;
  uint64_t halfSubnormal = 0;  // includes halfFlushed
  uint64_t halfFlushed = 0;
  uint64_t nonZero = 0;  // finite, not zero
  float absMax = 0;  // over the finite values

  void add(const TensorStats& other);
};

// The CPU path (and the reference of the CUDA one): SIMD on the best
// instruction set this CPU has (Highway's runtime dispatch), threads for
// tensors above `kParallelElements`. `out` has views' size.
void computeTensorStats(const TensorView* views, size_t count, TensorStats* out);

// The scalar reference, element by element through classifyElement.
TensorStats referenceTensorStats(const TensorView& view);

inline constexpr uint64_t kParallelElements = uint64_t{1} << 22;

}  // namespace dtype_lint::kernels
