// Where dtype-lint keeps what it computes once per machine (the analyzer's
// preambles and results, the runtime adapters built on first use). Shared
// by both front ends: one rule for where the cache is.
#pragma once

#include <string>

namespace dtype_lint {

// $DTYPE_LINT_CACHE_DIR, else $XDG_CACHE_HOME/dtype-lint, else
// ~/.cache/dtype-lint; empty when none of them is set.
std::string defaultCacheDirectory();

}  // namespace dtype_lint
