// `dtype-lint merge REPORT... [-o FILE]`: one report from the JSON and SARIF
// reports of CI shards, or of the nodes of a distributed run: each finding
// once, with the ranks of every report that made it, kept by the config's
// policy with the command line's (--rules, --warnings-as-errors) on top.
#pragma once

#include <string>
#include <vector>

#include "dtype_lint/findings_pipeline.h"
#include "report_output.h"

namespace dtype_lint::cli {

int mergeReports(const std::vector<std::string>& reports, const FindingPolicy& config, const FindingPolicy& commandLine,
                 const OutputOptions& output);

}  // namespace dtype_lint::cli
