// Settings a program chooses at run time (a precision string, an AMP flag),
// analyzed once per value the way a build matrix runs the program. Both front
// ends run their analysis under each configuration and merge the findings
// here: a finding that not every value made notes the values it needs.
#pragma once

#include <string>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint {

struct SettingChoices {
  std::string spelling;  // as the program spells the setting: 'cfg.precision', '--precision'
  SourceLocation at;  // where a note about its value points: its first test, its declaration
  std::vector<std::string> choices;  // each value as a note spells it: "fp16" (quoted), true
};

// The choice of each setting in each run, run 0 every setting's first value
// (its default). The leading settings, as many as fit in `cap` runs, take
// every combination; each later one pairs every value of its own with every
// value of each earlier setting (a covering array, built the way IPOG builds
// one), which finds what needs the values of two settings at a time without
// the runs a full product would take. Settings come most important first.
// The runs may be more than `cap` when the settings do not fit: the caller
// leaves the last ones out.
using ConfigurationRuns = std::vector<std::vector<size_t>>;
ConfigurationRuns configurationRuns(const std::vector<SettingChoices>& settings, size_t cap);

// One finding per place and rule from `runs` (run i under choices[i]):
// every value a program accepts is a configuration a user runs.
std::vector<Finding> mergeConfigurationRuns(const std::vector<SettingChoices>& settings,
                                            const ConfigurationRuns& choices, std::vector<std::vector<Finding>> runs);

}  // namespace dtype_lint
