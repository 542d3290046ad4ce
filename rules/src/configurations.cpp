#include "dtype_lint/configurations.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace dtype_lint {

namespace {

// Which pairs of values (an earlier setting's, setting k's) the runs cover.
class PairsWithSetting {
 public:
  PairsWithSetting(const std::vector<SettingChoices>& settings, size_t k) : settings_(settings), k_(k), covered_(k) {
    for (size_t j = 0; j < k; ++j) covered_[j].assign(settings[j].choices.size() * settings[k].choices.size(), false);
  }
  bool covered(size_t j, size_t valueOfJ, size_t valueOfK) const { return covered_[j][index(j, valueOfJ, valueOfK)]; }
  // How many uncovered pairs `row` would cover with setting k's value `value`.
  size_t gain(const std::vector<size_t>& row, size_t value) const {
    size_t n = 0;
    for (size_t j = 0; j < k_; ++j) n += !covered(j, row[j], value);
    return n;
  }
  void cover(const std::vector<size_t>& row) {
    for (size_t j = 0; j < k_; ++j) covered_[j][index(j, row[j], row[k_])] = true;
  }
  // The first pair not covered: (setting j, its value, setting k's value).
  std::optional<std::tuple<size_t, size_t, size_t>> uncovered() const {
    for (size_t j = 0; j < k_; ++j)
      for (size_t i = 0; i < covered_[j].size(); ++i)
        if (!covered_[j][i]) return std::tuple{j, i / width(), i % width()};
    return std::nullopt;
  }

 private:
  size_t width() const { return settings_[k_].choices.size(); }
  size_t index(size_t j, size_t valueOfJ, size_t valueOfK) const { return valueOfJ * width() + valueOfK; }

  const std::vector<SettingChoices>& settings_;
  size_t k_;
  std::vector<std::vector<bool>> covered_;  // per earlier setting j: its value × setting k's value
};

}  // namespace

ConfigurationRuns configurationRuns(const std::vector<SettingChoices>& settings, size_t cap) {
  ConfigurationRuns runs{{}};
  bool everyCombination = true;
  for (size_t k = 0; k < settings.size(); ++k) {
    const size_t values = settings[k].choices.size();
    if (everyCombination && runs.size() * values <= cap) {
      // Every earlier combination under each value, the first value first.
      ConfigurationRuns product;
      for (size_t value = 0; value < values; ++value)
        for (std::vector<size_t> run : runs) {
          run.push_back(value);
          product.push_back(std::move(run));
        }
      runs = std::move(product);
      continue;
    }
    everyCombination = false;
    PairsWithSetting pairs(settings, k);
    // Each run so far takes the value that covers the most new pairs (run 0 the default).
    for (size_t r = 0; r < runs.size(); ++r) {
      size_t best = 0;
      for (size_t value = 1; r > 0 && value < values; ++value)
        if (pairs.gain(runs[r], value) > pairs.gain(runs[r], best)) best = value;
      runs[r].push_back(best);
      pairs.cover(runs[r]);
    }
    // A new run for each pair still uncovered; its other settings take values
    // that cover more of setting k's pairs with that value.
    while (const auto pair = pairs.uncovered()) {
      const auto [j, valueOfJ, valueOfK] = *pair;
      std::vector<size_t> run(k + 1, 0);
      run[j] = valueOfJ;
      run[k] = valueOfK;
      for (size_t other = 0; other < k; ++other)
        for (size_t value = 0; other != j && value < settings[other].choices.size(); ++value)
          if (!pairs.covered(other, value, valueOfK)) {
            run[other] = value;
            break;
          }
      pairs.cover(run);
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

std::vector<Finding> mergeConfigurationRuns(const std::vector<SettingChoices>& settings,
                                            const ConfigurationRuns& choices, std::vector<std::vector<Finding>> runs) {
  struct Merged {
    Finding finding;
    std::vector<std::vector<bool>> choicesSeen;  // per setting, per choice
    std::vector<bool> runsSeen;
    bool folded = false;
  };
  std::vector<Merged> merged;
  std::map<std::tuple<std::string, std::string, unsigned, unsigned>, size_t> index;
  for (size_t run = 0; run < runs.size(); ++run) {
    for (Finding& f : runs[run]) {
      const auto key = std::make_tuple(std::string(f.rule->id), f.location.file, f.location.line, f.location.column);
      auto [it, inserted] = index.try_emplace(key, merged.size());
      if (inserted) {
        merged.push_back(Merged{std::move(f), {}});
        for (const SettingChoices& setting : settings)
          merged.back().choicesSeen.emplace_back(setting.choices.size(), false);
        merged.back().runsSeen.assign(runs.size(), false);
      }
      for (size_t i = 0; i < settings.size(); ++i) merged[it->second].choicesSeen[i][choices[run][i]] = true;
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
