// Tensor health statistics on the GPU: many tensors per launch (one launch per
// kMaxTensorsPerLaunch), 16-byte vector loads, counts accumulated on the
// device and copied back asynchronously into pinned memory. Nothing here
// synchronizes the host or allocates after the workspace is made, so a launch
// can be captured into a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include "dtype_lint_kernels/tensor_stats_launch.h"

namespace dtype_lint::kernels {

// Made once per device, outside any capture; `capacity` tensors per batch.
struct CudaStatsWorkspace {
  DeviceTensorStats* device = nullptr;
  DeviceTensorStats* pinned = nullptr;
  cudaEvent_t copied = nullptr;
  size_t capacity = 0;
};

cudaError_t createCudaStatsWorkspace(CudaStatsWorkspace& workspace, size_t capacity);
void destroyCudaStatsWorkspace(CudaStatsWorkspace& workspace);

// Counts `count` (<= capacity) device tensors on `stream`: zeroes the counts,
// launches, copies them to the pinned buffer and records `copied`.
cudaError_t launchTensorStats(const TensorView* views, size_t count, cudaStream_t stream,
                              CudaStatsWorkspace& workspace);

// Whether the last launch's counts have arrived (never waits), and the counts.
bool tensorStatsReady(const CudaStatsWorkspace& workspace);
void readTensorStats(const CudaStatsWorkspace& workspace, TensorStats* out, size_t count);

}  // namespace dtype_lint::kernels
