// Tensors the adapter hands over to be counted (dtype_lint_tensor_values):
// counted here with kernels/' CPU scan, described for messages.
#pragma once

#include <string>

#include "dtype_lint/numeric_health.h"
#include "dtype_lint_runtime/boundary.h"

namespace dtype_lint::runtime {

// The counts of the tensor's values: counted now when they are on the CPU,
// the adapter's own counts otherwise.
ValueCounts countValues(const dtype_lint_tensor_values& tensor);
// "Float [512, 256]"
std::string dtypeAndShape(const dtype_lint_tensor_values& tensor);

}  // namespace dtype_lint::runtime
