// CUDA tensors counted by kernels/' scan, prebuilt (an image of every
// architecture, beside the preload library) and launched through the CUDA
// driver API the process already loaded: the adapter needs no CUDA compiler
// and no CUDA header where it is built, and adds no second CUDA runtime.
#pragma once

#include <cstddef>
#include <vector>

#include "dtype_lint_kernels/tensor_stats_launch.h"

namespace dtype_lint::runtime {

class CudaScan {
 public:
  explicit CudaScan(size_t capacity) : capacity_(capacity) {}
  // Counts `views` (device pointers, at most the capacity) on `stream` (a
  // cudaStream_t) of the current context; false when it cannot (no driver,
  // no image for this GPU, out of memory).
  bool launch(const std::vector<kernels::TensorView>& views, void* stream);
  bool arrived() const;  // never waits
  bool wait() const;  // false when the counts cannot arrive any more
  std::vector<kernels::TensorStats> read(size_t count) const;

 private:
  size_t capacity_;
  unsigned long long sums_ = 0;  // capacity_ DeviceTensorStats and the ticket, on the device
  kernels::DeviceTensorStats* results_ = nullptr;  // capacity_ in mapped host memory
  unsigned long long resultsOnDevice_ = 0;  // their address on the device
  void* done_ = nullptr;  // the event recorded after the last kernel
};

}  // namespace dtype_lint::runtime
