#include "python_analysis.h"

#include <fmt/format.h>

#include <algorithm>

#include "dtype_lint/configurations.h"
#include "dtype_lint/findings_pipeline.h"
#include "interpreter.h"

namespace dtype_lint::python {

namespace {

// Python users run PyTorch 2.x: its autocast op lists.
constexpr TorchVersion kTorch{2, 0};
// Per program: the settings analyzed per value, and the runs that takes.
constexpr size_t kMaxSettings = 4;
constexpr size_t kMaxConfigurations = 24;

std::string spelled(const Value& value) {
  switch (value.kind) {
  case Value::Kind::String: return "\"" + value.text + "\"";
  case Value::Kind::Bool: return value.flag ? "True" : "False";
  case Value::Kind::Number: return fmt::format("{}", value.number);
  case Value::Kind::None: return "None";
  default: return "another value";
  }
}

}  // namespace

PythonAnalysisResult analyzePythonFiles(const std::vector<std::string>& files) {
  Interpreter byDefault(kTorch);
  byDefault.run(files);
  PythonAnalysisResult result;
  result.lines = byDefault.linesParsed();
  result.toolNotes = std::move(byDefault.toolNotes());
  std::vector<Finding> defaults = std::move(byDefault.findings());
  // Each program again under the values its settings may take, as a build
  // matrix would run it: the settings looked up in a dict (a dtype by name) first.
  for (const std::set<std::string>& program : byDefault.programs()) {
    std::vector<const Setting*> deciding;
    for (const Setting& setting : byDefault.settings())
      if (setting.decides && setting.values.size() > 1 && program.count(setting.program)) deciding.push_back(&setting);
    std::stable_partition(deciding.begin(), deciding.end(), [](const Setting* s) { return s->choosesByLookup; });
    std::vector<const Setting*> chosen;
    std::vector<SettingChoices> choices;
    for (const Setting* setting : deciding) {
      if (std::any_of(chosen.begin(), chosen.end(), [&](const Setting* s) { return s->spelling == setting->spelling; }))
        continue;  // read by two files of the program: one configuration value for both
      if (chosen.size() == kMaxSettings || configurations(choices) * setting->values.size() > kMaxConfigurations) {
        result.toolNotes.push_back(
            Note{setting->at, fmt::format("analyzed under {} configurations of its settings (at "
                                          "most {}); {} and further settings kept their defaults",
                                          configurations(choices), kMaxConfigurations, setting->spelling)});
        break;
      }
      chosen.push_back(setting);
      choices.push_back(SettingChoices{setting->spelling, setting->at, {}});
      for (const Value& value : setting->values) choices.back().choices.push_back(spelled(value));
    }
    auto inProgram = [&](const Finding& f) { return program.count(f.location.file) > 0; };
    std::vector<std::vector<Finding>> runs(1);
    for (Finding& f : defaults)
      if (inProgram(f)) runs[0].push_back(std::move(f));
    std::vector<std::string> programFiles;
    for (const std::string& file : files)
      if (program.count(file)) programFiles.push_back(file);
    for (size_t run = 1; run < configurations(choices) && !programFiles.empty(); ++run) {
      std::map<std::string, Value> configuration;
      const std::vector<size_t> choice = choicesOf(run, choices);
      for (size_t i = 0; i < chosen.size(); ++i) configuration[chosen[i]->spelling] = chosen[i]->values[choice[i]];
      Interpreter configured(kTorch, std::move(configuration));
      configured.run(programFiles);
      runs.push_back(std::move(configured.findings()));
      for (Note& note : configured.toolNotes()) addToolNote(result.toolNotes, std::move(note));
    }
    for (Finding& f : mergeConfigurationRuns(choices, std::move(runs))) result.findings.push_back(std::move(f));
  }
  return result;
}

}  // namespace dtype_lint::python
