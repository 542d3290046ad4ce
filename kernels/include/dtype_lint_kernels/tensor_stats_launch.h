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
// Resident blocks per SM (the kernel's launch bounds hold it to 64 registers
// a thread, so four blocks fit an SM's 64K registers): the grid is one wave.
inline constexpr int kScanBlocksPerSm = 4;
// Elements per chunk, chosen per launch: a power of two such that one wave of
// blocks covers the launch, so that a tensor of a few MiB spreads over every
// SM and a large one is not cut finer than it needs; at least four 16-byte
// loads per thread of Half, at most 256 KiB of Float per chunk.
inline constexpr long long kMinChunkElements = 1 << 13;
inline constexpr long long kMaxChunkElements = 1 << 16;
// The kernel's unmangled name in the prebuilt image.
inline constexpr const char* kScanKernelName = "dtype_lint_tensor_stats";

// The device-side counts of one tensor (absMax as the bits of a non-negative
// float: their order is the values' order, so atomicMax applies): the sums a
// launch's blocks add into, and the results the launch hands to the host.
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
  long long chunkElements;
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

inline long long waveBlocks(int sms) { return static_cast<long long>(sms > 0 ? sms : 128) * kScanBlocksPerSm; }

// The arguments for views[first, first + kMaxTensorsPerLaunch) of `count`, on
// a device of `sms` SMs.
inline LaunchArgs planLaunch(const TensorView* views, size_t count, size_t first, int sms) {
  LaunchArgs args{};
  args.count = static_cast<int>(count - first < kMaxTensorsPerLaunch ? count - first : kMaxTensorsPerLaunch);
  long long total = 0;
  for (int t = 0; t < args.count; ++t) {
    LaunchTensor& tensor = args.tensors[t];
    tensor.view = views[first + t];
    tensor.elements = tensor.view.data ? elementCount(tensor.view) : 0;
    tensor.contiguous = isContiguous(tensor.view);
    total += tensor.elements;
  }
  args.chunkElements = kMinChunkElements;
  while (args.chunkElements < kMaxChunkElements && args.chunkElements * waveBlocks(sms) < total)
    args.chunkElements *= 2;
  for (int t = 0; t < args.count; ++t) {
    args.tensors[t].firstChunk = args.chunks;
    args.chunks += (args.tensors[t].elements + args.chunkElements - 1) / args.chunkElements;
  }
  return args;
}

// Blocks for a launch of `chunks`: at most one wave, and at least one (which
// hands over the zero counts of a launch of empty tensors).
inline unsigned scanBlocks(long long chunks, int sms) {
  const long long wave = waveBlocks(sms);
  return static_cast<unsigned>(chunks < 1 ? 1 : chunks < wave ? chunks : wave);
}

}  // namespace dtype_lint::kernels
