// The rules' docs pages (docs/rules/DLnnn.md), embedded at build time for --explain.
#pragma once

#include <string_view>

namespace dtype_lint::cli {

// The page of a rule ID ("DL101"); empty when there is none.
std::string_view rulePage(std::string_view id);

}  // namespace dtype_lint::cli
