#include "dtype_lint/configurations.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace dtype_lint {

size_t configurations(const std::vector<SettingChoices>& settings) {
  size_t n = 1;
  for (const SettingChoices& setting : settings) n *= setting.choices.size();
  return n;
}

std::vector<size_t> choicesOf(size_t run, const std::vector<SettingChoices>& settings) {
  std::vector<size_t> choices;
  for (const SettingChoices& setting : settings) {
    choices.push_back(run % setting.choices.size());
    run /= setting.choices.size();
  }
  return choices;
}

std::vector<Finding> mergeConfigurationRuns(const std::vector<SettingChoices>& settings,
                                            std::vector<std::vector<Finding>> runs) {
  struct Merged {
    Finding finding;
    std::vector<std::vector<bool>> choicesSeen;  // per setting, per choice
    std::vector<bool> runsSeen;
    bool folded = false;
  };
  std::vector<Merged> merged;
  std::map<std::tuple<std::string, std::string, unsigned, unsigned>, size_t> index;
  for (size_t run = 0; run < runs.size(); ++run) {
    const std::vector<size_t> choices = choicesOf(run, settings);
    for (Finding& f : runs[run]) {
      const auto key = std::make_tuple(std::string(f.rule->id), f.location.file, f.location.line, f.location.column);
      auto [it, inserted] = index.try_emplace(key, merged.size());
      if (inserted) {
        merged.push_back(Merged{std::move(f), {}});
        for (const SettingChoices& setting : settings)
          merged.back().choicesSeen.emplace_back(setting.choices.size(), false);
        merged.back().runsSeen.assign(runs.size(), false);
      }
      for (size_t i = 0; i < settings.size(); ++i) merged[it->second].choicesSeen[i][choices[i]] = true;
      merged[it->second].runsSeen[run] = true;
    }
  }
  // One bug seen at two places: `teacher(images)` raises DL101 at the call
  // where the teacher is a library module, inside its forward (the call a
  // note) where it is one of the program's. Where no run made both, the
  // finding whose note names the other's line folds into it.
  auto disjoint = [](const Merged& a, const Merged& b) {
    for (size_t run = 0; run < a.runsSeen.size(); ++run)
      if (a.runsSeen[run] && b.runsSeen[run]) return false;
    return true;
  };
  for (Merged& inner : merged)
    for (Merged& outer : merged) {
      if (&inner == &outer || outer.folded || inner.finding.rule != outer.finding.rule || !disjoint(inner, outer))
        continue;
      const SourceLocation& place = outer.finding.location;
      if (std::none_of(inner.finding.notes.begin(), inner.finding.notes.end(), [&](const Note& note) {
            return note.location.file == place.file && note.location.line == place.line;
          }))
        continue;
      for (size_t i = 0; i < settings.size(); ++i)
        for (size_t choice = 0; choice < inner.choicesSeen[i].size(); ++choice)
          if (inner.choicesSeen[i][choice]) outer.choicesSeen[i][choice] = true;
      for (size_t run = 0; run < runs.size(); ++run)
        if (inner.runsSeen[run]) outer.runsSeen[run] = true;
      inner.folded = true;
      break;
    }
  std::vector<Finding> out;
  for (Merged& m : merged) {
    if (m.folded) continue;
    for (size_t i = 0; i < settings.size(); ++i) {
      const std::vector<bool>& seen = m.choicesSeen[i];
      if (std::all_of(seen.begin(), seen.end(), [](bool s) { return s; })) continue;
      std::string values;
      for (size_t choice = 0; choice < seen.size(); ++choice)
        if (seen[choice]) values += (values.empty() ? "" : " or ") + settings[i].choices[choice];
      m.finding.notes.push_back(Note{settings[i].at, fmt::format("assuming {} is {}", settings[i].spelling, values)});
    }
    out.push_back(std::move(m.finding));
  }
  return out;
}

}  // namespace dtype_lint
