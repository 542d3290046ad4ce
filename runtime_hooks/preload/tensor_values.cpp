#include "tensor_values.h"

#include <fmt/format.h>

#include <algorithm>

#include "dtype_lint_kernels/tensor_stats.h"
#include "op_record.h"

namespace dtype_lint::runtime {
namespace {

std::optional<kernels::ElementType> elementTypeOf(int32_t dtype) {
  switch (dtype) {
    case DTYPE_LINT_DTYPE_FLOAT: return kernels::ElementType::Float;
    case DTYPE_LINT_DTYPE_HALF: return kernels::ElementType::Half;
    case DTYPE_LINT_DTYPE_BFLOAT16: return kernels::ElementType::BFloat16;
    case DTYPE_LINT_DTYPE_DOUBLE: return kernels::ElementType::Double;
    default: return std::nullopt;
  }
}

}  // namespace

ValueCounts countValues(const dtype_lint_tensor_values& tensor) {
  const dtype_lint_value_counts& given = tensor.counts;
  if (!tensor.cpu_data)
    return ValueCounts{given.elements, given.non_finite, given.beyond_half, given.half_subnormal, given.half_flushed,
                       given.nonzero, given.absmax};
  const auto type = elementTypeOf(tensor.dtype);
  if (!type || tensor.dims < 0 || tensor.dims > static_cast<int32_t>(DTYPE_LINT_MAX_DIMS)) return ValueCounts{};
  kernels::TensorView view;
  view.data = tensor.cpu_data;
  view.type = *type;
  view.dims = tensor.dims;
  std::copy(tensor.sizes, tensor.sizes + tensor.dims, view.sizes);
  std::copy(tensor.strides, tensor.strides + tensor.dims, view.strides);
  kernels::TensorStats s;
  kernels::computeTensorStats(&view, 1, &s);
  return ValueCounts{s.elements, s.nonFinite, s.beyondHalf, s.halfSubnormal, s.halfFlushed, s.nonZero, s.absMax};
}

std::string dtypeAndShape(const dtype_lint_tensor_values& tensor) {
  const auto dtype = scalarTypeOf(tensor.dtype);
  const int32_t dims = std::clamp<int32_t>(tensor.dims, 0, DTYPE_LINT_MAX_DIMS);
  return fmt::format("{} [{}]", dtype ? std::string(name(*dtype)) : "?",
                     fmt::join(tensor.sizes, tensor.sizes + dims, ", "));
}

}  // namespace dtype_lint::runtime
