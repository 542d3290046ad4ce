// clang-tidy style suppressions in the source: NOLINT, NOLINT(DL101),
// NOLINTNEXTLINE(...), NOLINTBEGIN(...) / NOLINTEND(...).
#pragma once

#include "dtype_lint/finding.h"
#include "dtype_lint/source_text.h"

namespace dtype_lint {

bool isSuppressed(const Finding& finding, SourceText& source);

}  // namespace dtype_lint
