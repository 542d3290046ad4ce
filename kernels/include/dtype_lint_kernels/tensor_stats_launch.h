// One launch of the CUDA scan, as data: its arguments, its grid and the
// kernel's name, for the two ways it is launched: the CUDA runtime
// (tensor_stats_cuda.h, programs built with nvcc) and the driver API over the
// prebuilt image (the runtime adapter, built with no CUDA compiler and no CUDA
// header). Plain C++, no CUDA header.
#pragma once

#include <cstddef>
#include <cstring>

#include "dtype_lint_kernels/tensor_stats.h"

namespace dtype_lint::kernels {

inline constexpr size_t kMaxTensorsPerLaunch = 16;
inline constexpr int kScanThreads = 256;
// Elements per chunk: small (64 KiB of Float) so that a tensor of a few MiB
// still spreads over every SM; the grid, not the chunk, bounds the blocks.
inline constexpr long long kChunkElements = 1 << 14;
inline constexpr int kScanBlocksPerSm = 2048 / kScanThreads;  // resident blocks of this size: one wave
// The kernel's unmangled name in the prebuilt image.
inline constexpr const char* kScanKernelName = "dtype_lint_tensor_stats";

// The device-side counts of one tensor (absMax as the bits of a non-negative
// float: their order is the values' order, so atomicMax applies).
struct DeviceTensorStats {
  unsigned long long elements, nonFinite, beyondHalf, halfSubnormal, halfFlushed, nonZero;
  unsigned int absMaxBits;
};

inline TensorStats statsOf(const DeviceTensorStats& d) {
  float absMax;
  std::memcpy(&absMax, &d.absMaxBits, sizeof absMax);
  return TensorStats{d.elements, d.nonFinite, d.beyondHalf, d.halfSubnormal, d.halfFlushed, d.nonZero, absMax};
}

struct LaunchTensor {
  TensorView view;
  long long elements;
  long long firstChunk;  // chunks before this tensor's, in the launch
  bool contiguous;
};

struct LaunchArgs {  // passed by value: 16 tensors, well inside the 4 KiB of kernel parameters
  LaunchTensor tensors[kMaxTensorsPerLaunch];
  int count;
  long long chunks;
};

inline long long elementCount(const TensorView& v) {
  long long n = 1;
  for (int d = 0; d < v.dims; ++d) n *= v.sizes[d] > 0 ? v.sizes[d] : 0;
  return n;
}

inline bool isContiguous(const TensorView& v) {
  long long expected = 1;
  for (int d = v.dims - 1; d >= 0; --d) {
    if (v.sizes[d] != 1 && v.strides[d] != expected) return false;
    expected *= v.sizes[d];
  }
  return true;
}

// The arguments for views[first, first + kMaxTensorsPerLaunch) of `count`.
inline LaunchArgs planLaunch(const TensorView* views, size_t count, size_t first) {
  LaunchArgs args{};
  args.count = static_cast<int>(count - first < kMaxTensorsPerLaunch ? count - first : kMaxTensorsPerLaunch);
  for (int t = 0; t < args.count; ++t) {
    LaunchTensor& tensor = args.tensors[t];
    tensor.view = views[first + t];
    tensor.elements = tensor.view.data ? elementCount(tensor.view) : 0;
    tensor.firstChunk = args.chunks;
    tensor.contiguous = isContiguous(tensor.view);
    args.chunks += (tensor.elements + kChunkElements - 1) / kChunkElements;
  }
  return args;
}

// Blocks for a launch of `chunks` on a device of `sms` SMs: at most one wave.
inline unsigned scanBlocks(long long chunks, int sms) {
  const long long wave = static_cast<long long>(sms > 0 ? sms : 128) * kScanBlocksPerSm;
  return static_cast<unsigned>(chunks < wave ? chunks : wave);
}

}  // namespace dtype_lint::kernels
