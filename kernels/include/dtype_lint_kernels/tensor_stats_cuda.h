// Tensor health statistics on the GPU: many tensors per launch (one kernel
// per kMaxTensorsPerLaunch), 16-byte vector loads, counts summed on the
// device and written by the kernel's last block into mapped host memory.
// Nothing here synchronizes the host or allocates after the workspace is
// made, so a launch can be captured into a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include "dtype_lint_kernels/tensor_stats_launch.h"

namespace dtype_lint::kernels {

// Made once per device, outside any capture; `capacity` tensors per batch.
struct CudaStatsWorkspace {
  DeviceTensorStats* sums = nullptr;  // zero between launches (the kernel leaves them so)
  unsigned* ticket = nullptr;  // blocks of the running launch that finished
  DeviceTensorStats* results = nullptr;  // mapped host memory
  DeviceTensorStats* resultsOnDevice = nullptr;
  cudaEvent_t done = nullptr;  // recorded after the last kernel
  size_t capacity = 0;
};

cudaError_t createCudaStatsWorkspace(CudaStatsWorkspace& workspace, size_t capacity);
void destroyCudaStatsWorkspace(CudaStatsWorkspace& workspace);

// Counts `count` (<= capacity) device tensors on `stream`: launches, and records `done`.
cudaError_t launchTensorStats(const TensorView* views, size_t count, cudaStream_t stream,
                              CudaStatsWorkspace& workspace);

// Whether the last launch's counts have arrived (never waits), and the counts.
bool tensorStatsReady(const CudaStatsWorkspace& workspace);
void readTensorStats(const CudaStatsWorkspace& workspace, TensorStats* out, size_t count);

}  // namespace dtype_lint::kernels
