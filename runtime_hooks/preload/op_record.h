// The C records the adapter hands over (dtype_lint_runtime/boundary.h), read
// back into the events of rules/.
#pragma once

#include <optional>

#include "dtype_lint/events.h"
#include "dtype_lint/scaler_protocol.h"
#include "dtype_lint_runtime/boundary.h"

namespace dtype_lint::runtime {

std::optional<ScalarType> scalarTypeOf(int32_t dtypeCode);
std::string textOf(const dtype_lint_text& text);
OpEvent opEventOf(const dtype_lint_op_record& record);
AmpBackwardTrace::Loss ampLossOf(int32_t loss);

}  // namespace dtype_lint::runtime
