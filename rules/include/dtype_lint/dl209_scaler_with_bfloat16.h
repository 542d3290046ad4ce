// DL209: a gradient scaler used with BFloat16 autocast, where loss scaling buys nothing.
#pragma once

#include <optional>
#include <vector>

#include "dtype_lint/events.h"
#include "dtype_lint/finding.h"
#include "dtype_lint/scaler_protocol.h"

namespace dtype_lint {

// Where autocast was enabled when every enabled device autocasts to BFloat16;
// unset when autocast is off, may be off, or some enabled device casts to
// another dtype (Half needs the scaler).
std::optional<SourceLocation> bfloat16AutocastAt(const AutocastState& autocast);

void checkScalerWithBFloat16(const ObjectRef& scaler, const SourceLocation& at,
                             const std::optional<SourceLocation>& bfloat16AutocastAt, std::vector<Finding>& out);

}  // namespace dtype_lint
