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
constexpr size_t kMaxSettings = 8;
constexpr size_t kMaxConfigurations = 24;  // every combination of the leading settings, pairs of the rest

// --fp16, --amp-dtype, $MIXED_PRECISION, bf16 in conf.yaml: a setting named for the precision it chooses.
bool namesPrecision(std::string spelling) {
  std::transform(spelling.begin(), spelling.end(), spelling.begin(), ::tolower);
  static constexpr std::string_view kWords[] = {"fp16", "bf16", "half", "amp", "precision", "dtype", "float", "mixed"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](std::string_view word) { return spelling.find(word) != std::string::npos; });
}

// `byDefault` tells what an unknown value stands for: "given" of a None default, another string.
std::string spelled(const Value& value, const Value& byDefault) {
  switch (value.kind) {
  case Value::Kind::String: return "\"" + value.text + "\"";
  case Value::Kind::Bool: return value.flag ? "True" : "False";
  case Value::Kind::Number: return fmt::format("{}", value.number);
  case Value::Kind::None: return "None";
  case Value::Kind::Unknown: return byDefault.is(Value::Kind::String) ? "another value" : "given";
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
    auto inProgram = [&](const Finding& f) { return program.count(f.location.file) > 0; };
    std::vector<Finding> programDefaults;
    for (Finding& f : defaults)
      if (inProgram(f)) programDefaults.push_back(std::move(f));
    std::vector<std::string> programFiles;
    for (const std::string& file : files)
      if (program.count(file)) programFiles.push_back(file);
    std::vector<Setting> deciding;
    // The settings looked up in a dict (a dtype by name) or named for precision first, those only
    // tested for None (an optional path, a checkpoint) last; those found later
    // after the earlier ones, which keep their places.
    auto addDeciding = [&](const std::vector<Setting>& settings) {
      const size_t before = deciding.size();
      for (const Setting& setting : settings)
        if (setting.decides && setting.values.size() > 1 && program.count(setting.program) &&
            std::none_of(deciding.begin(), deciding.end(),
                         [&](const Setting& s) { return s.spelling == setting.spelling; })) {
          deciding.push_back(setting);
        }
      auto rank = [](const Setting& s) {
        return s.choosesDtype || namesPrecision(s.spelling) ? 0 : s.values.front().is(Value::Kind::None) ? 2 : 1;
      };
      std::stable_sort(deciding.begin() + before, deciding.end(),
                       [&](const Setting& a, const Setting& b) { return rank(a) < rank(b); });
      return deciding.size() > before;
    };
    addDeciding(byDefault.settings());
    // A setting tested only on another setting's path (`if args.clip_grad is
    // not None` under `if scaler is not None`) is found in the configured
    // runs: they run once more with it.
    for (int round = 0;; ++round) {
      std::vector<const Setting*> chosen;
      std::vector<SettingChoices> choices;
      // A setting with too many values to fit keeps its default; later ones with fewer may still fit.
      const Setting* firstSkipped = nullptr;
      for (const Setting& setting : deciding) {
        const bool full = chosen.size() == kMaxSettings;
        if (!full) {
          choices.push_back(SettingChoices{setting.spelling, setting.at, {}});
          for (const Value& value : setting.values)
            choices.back().choices.push_back(spelled(value, setting.values.front()));
          if (configurationRuns(choices, kMaxConfigurations).size() <= kMaxConfigurations) {
            chosen.push_back(&setting);
            continue;
          }
          choices.pop_back();
        }
        if (!firstSkipped) firstSkipped = &setting;
        if (full) break;
      }
      const ConfigurationRuns runChoices = configurationRuns(choices, kMaxConfigurations);
      std::vector<std::vector<Finding>> runs{programDefaults};
      std::vector<Note> notes;
      if (firstSkipped)
        notes.push_back(
            Note{firstSkipped->at, fmt::format("analyzed under {} configurations of its settings (at most {}); {} and "
                                               "the settings that did not fit with it kept their defaults",
                                               runChoices.size(), kMaxConfigurations, firstSkipped->spelling)});
      std::vector<Setting> found;
      for (size_t run = 1; run < runChoices.size() && !programFiles.empty(); ++run) {
        std::map<std::string, Value> configuration;
        for (size_t i = 0; i < chosen.size(); ++i)
          configuration[chosen[i]->spelling] = chosen[i]->values[runChoices[run][i]];
        Interpreter configured(kTorch, std::move(configuration));
        configured.run(programFiles);
        runs.push_back(std::move(configured.findings()));
        for (Note& note : configured.toolNotes()) notes.push_back(std::move(note));
        found.insert(found.end(), configured.settings().begin(), configured.settings().end());
      }
      if (round == 0 && chosen.size() == deciding.size() && addDeciding(found)) continue;
      for (Note& note : notes) addToolNote(result.toolNotes, std::move(note));
      for (Finding& f : mergeConfigurationRuns(choices, runChoices, std::move(runs)))
        result.findings.push_back(std::move(f));
      break;
    }
  }
  return result;
}

}  // namespace dtype_lint::python
