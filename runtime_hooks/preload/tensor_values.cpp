#include "tensor_values.h"

#include <fmt/format.h>

#include <algorithm>

#include "dtype_lint_kernels/tensor_stats.h"
#include "dtype_lint_runtime/tensor_view.h"
#include "op_record.h"

namespace dtype_lint::runtime {

ValueCounts countValues(const dtype_lint_tensor_values& tensor) {
  const dtype_lint_value_counts& given = tensor.counts;
  if (!tensor.cpu_data)
    return ValueCounts{given.elements,     given.non_finite, given.beyond_half, given.half_subnormal,
                       given.half_flushed, given.nonzero,    given.absmax};
  const auto view = kernelViewOf(tensor, tensor.cpu_data);
  if (!view) return ValueCounts{};
  kernels::TensorStats s;
  kernels::computeTensorStats(&*view, 1, &s);
  return ValueCounts{s.elements, s.nonFinite, s.beyondHalf, s.halfSubnormal, s.halfFlushed, s.nonZero, s.absMax};
}

std::string dtypeAndShape(const dtype_lint_tensor_values& tensor) {
  const auto dtype = scalarTypeOf(tensor.dtype);
  const int32_t dims = std::clamp<int32_t>(tensor.dims, 0, DTYPE_LINT_MAX_DIMS);
  return fmt::format("{} [{}]", dtype ? std::string(name(*dtype)) : "?",
                     fmt::join(tensor.sizes, tensor.sizes + dims, ", "));
}

}  // namespace dtype_lint::runtime
