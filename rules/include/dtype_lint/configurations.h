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

// How many runs the settings' configurations take, and the choice of each
// setting in run `run` (mixed radix, settings[0] first).
size_t configurations(const std::vector<SettingChoices>& settings);
std::vector<size_t> choicesOf(size_t run, const std::vector<SettingChoices>& settings);

// One finding per place and rule from `runs` (run i under choicesOf(i)):
// every value a program accepts is a configuration a user runs.
std::vector<Finding> mergeConfigurationRuns(const std::vector<SettingChoices>& settings,
                                            std::vector<std::vector<Finding>> runs);

}  // namespace dtype_lint
