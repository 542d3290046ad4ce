// A tensor the adapter hands over (dtype_lint_tensor_values) as the view
// kernels/ scans: the preload counts CPU tensors through it, the adapter's
// CUDA path device ones.
#pragma once

#include <algorithm>
#include <optional>

#include "dtype_lint_kernels/tensor_stats.h"
#include "dtype_lint_runtime/boundary.h"

namespace dtype_lint::runtime {

// Its values at `data` as a view; none for a dtype kernels/ does not count.
inline std::optional<kernels::TensorView> kernelViewOf(const dtype_lint_tensor_values& tensor, const void* data) {
  kernels::TensorView view;
  switch (tensor.dtype) {
  case DTYPE_LINT_DTYPE_FLOAT: view.type = kernels::ElementType::Float; break;
  case DTYPE_LINT_DTYPE_HALF: view.type = kernels::ElementType::Half; break;
  case DTYPE_LINT_DTYPE_BFLOAT16: view.type = kernels::ElementType::BFloat16; break;
  case DTYPE_LINT_DTYPE_DOUBLE: view.type = kernels::ElementType::Double; break;
  default: return std::nullopt;
  }
  if (tensor.dims < 0 || tensor.dims > static_cast<int32_t>(DTYPE_LINT_MAX_DIMS)) return std::nullopt;
  view.data = data;
  view.dims = tensor.dims;
  std::copy(tensor.sizes, tensor.sizes + tensor.dims, view.sizes);
  std::copy(tensor.strides, tensor.strides + tensor.dims, view.strides);
  return view;
}

}  // namespace dtype_lint::runtime
