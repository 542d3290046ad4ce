// `dtype-lint merge REPORT... [-o FILE]`: one report from the JSON and SARIF
// reports of CI shards, or of the nodes of a distributed run: each finding
// once, with the ranks of every report that made it.
#pragma once

#include <string>
#include <vector>

#include "report_output.h"

namespace dtype_lint::cli {

int mergeReports(const std::vector<std::string>& reports, const OutputOptions& output);

}  // namespace dtype_lint::cli
