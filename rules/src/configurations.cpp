#include "dtype_lint/configurations.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <tuple>

namespace dtype_lint {

namespace {

// Which pairs of values (an earlier setting's, setting k's) the runs cover,
// under each value of the first setting: the precision a program runs at
// decides most findings (whether a scaler scales at all), so what needs two
// later settings is analyzed under each precision.
class PairsWithSetting {
 public:
  PairsWithSetting(const std::vector<SettingChoices>& settings, size_t k) : settings_(settings), k_(k), covered_(k) {
    for (size_t j = 0; j < k; ++j) covered_[j].assign(firsts(j) * values(j) * values(k), false);
  }
  bool covered(size_t first, size_t j, size_t valueOfJ, size_t valueOfK) const {
    return covered_[j][index(first, j, valueOfJ, valueOfK)];
  }
  // How many uncovered pairs `run` would cover with setting k's value `value`.
  size_t gain(const std::vector<size_t>& run, size_t value) const {
    size_t n = 0;
    for (size_t j = 0; j < k_; ++j) n += !covered(run[0], j, run[j], value);
    return n;
  }
  void cover(const std::vector<size_t>& run) {
    for (size_t j = 0; j < k_; ++j) covered_[j][index(run[0], j, run[j], run[k_])] = true;
  }
  // The first pair not covered: the first setting's value, the earlier
  // setting j, its value and setting k's value.
  std::optional<std::array<size_t, 4>> uncovered() const {
    for (size_t j = 0; j < k_; ++j)
      for (size_t i = 0; i < covered_[j].size(); ++i)
        if (!covered_[j][i]) {
          const size_t valueOfJ = i / values(k_) % values(j);
          return std::array{j == 0 ? valueOfJ : i / (values(j) * values(k_)), j, valueOfJ, i % values(k_)};
        }
    return std::nullopt;
  }

 private:
  size_t values(size_t setting) const { return settings_[setting].choices.size(); }
  size_t firsts(size_t j) const { return j == 0 ? 1 : values(0); }  // the first setting's own pairs are plain
  size_t index(size_t first, size_t j, size_t valueOfJ, size_t valueOfK) const {
    return ((j == 0 ? 0 : first) * values(j) + valueOfJ) * values(k_) + valueOfK;
  }

  const std::vector<SettingChoices>& settings_;
  size_t k_;
  std::vector<std::vector<bool>> covered_;  // per earlier setting j: first setting's value × j's value × k's value
};

}  // namespace

ConfigurationRuns configurationRuns(const std::vector<SettingChoices>& settings, size_t cap) {
  ConfigurationRuns runs{{}};
  bool everyCombination = true;
  for (size_t k = 0; k < settings.size(); ++k) {
    const size_t values = settings[k].choices.size();
    if (everyCombination && (k == 0 || runs.size() * values <= cap)) {
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
      const auto [first, j, valueOfJ, valueOfK] = *pair;
      std::vector<size_t> run(k + 1, 0);
      run[0] = first;
      run[j] = valueOfJ;
      run[k] = valueOfK;
      for (size_t other = 1; other < k; ++other)
        for (size_t value = 0; other != j && value < settings[other].choices.size(); ++value)
          if (!pairs.covered(first, other, value, valueOfK)) {
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
  auto fold = [&](Merged& from, Merged& into) {
    for (size_t i = 0; i < settings.size(); ++i)
      for (size_t choice = 0; choice < from.choicesSeen[i].size(); ++choice)
        if (from.choicesSeen[i][choice]) into.choicesSeen[i][choice] = true;
    for (size_t run = 0; run < runs.size(); ++run)
      if (from.runsSeen[run]) into.runsSeen[run] = true;
    from.folded = true;
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
      fold(inner, outer);
      break;
    }
  // One error raised at the first place a configuration reaches: `scaler.unscale_`
  // of Half gradients when clipping is on, `scaler.step` when it is off. Where
  // no run made both, the same rule in the same file from the same origin (the
  // first note: where the parameters became Half) is one bug; the finding of
  // the earlier run stands.
  auto firstRun = [](const Merged& m) {
    return std::find(m.runsSeen.begin(), m.runsSeen.end(), true) - m.runsSeen.begin();
  };
  for (Merged& later : merged)
    for (Merged& earlier : merged) {
      const Finding& a = later.finding;
      const Finding& b = earlier.finding;
      if (&later == &earlier || later.folded || earlier.folded || a.rule != b.rule ||
          a.rule->severity != Severity::Error || a.location.file != b.location.file || a.notes.empty() ||
          b.notes.empty() || firstRun(earlier) >= firstRun(later) || !disjoint(later, earlier))
        continue;
      const SourceLocation& origin = a.notes.front().location;
      const SourceLocation& otherOrigin = b.notes.front().location;
      if (origin.file != otherOrigin.file || origin.line != otherOrigin.line || origin.column != otherOrigin.column)
        continue;
      fold(later, earlier);
      break;
    }
  std::vector<Finding> out;
  for (Merged& m : merged) {
    if (m.folded) continue;
    // The settings a finding needs: of those whose runs did not all make it,
    // the fewest (the most important on a tie) whose values no run that missed
    // the finding took. Runs that pair settings rather than combine them all
    // leave a finding's runs with values of settings it does not need.
    std::vector<size_t> candidates;
    for (size_t i = 0; i < settings.size(); ++i)
      if (!std::all_of(m.choicesSeen[i].begin(), m.choicesSeen[i].end(), [](bool s) { return s; }))
        candidates.push_back(i);
    auto explains = [&](const std::vector<bool>& needed) {
      for (size_t run = 0; run < runs.size(); ++run) {
        if (m.runsSeen[run]) continue;
        bool matches = true;
        for (size_t i = 0; i < settings.size() && matches; ++i)
          matches = !needed[i] || m.choicesSeen[i][choices[run][i]];
        if (matches) return false;
      }
      return true;
    };
    std::vector<bool> needed(settings.size(), false);
    for (size_t i : candidates) needed[i] = true;
    for (size_t size = 0; size < candidates.size(); ++size) {
      // Subsets of `size` candidates, the earliest first.
      std::vector<bool> chosen(candidates.size(), false);
      std::fill(chosen.begin(), chosen.begin() + size, true);
      bool found = false;
      do {
        std::vector<bool> subset(settings.size(), false);
        for (size_t c = 0; c < candidates.size(); ++c) subset[candidates[c]] = chosen[c];
        if ((found = explains(subset))) needed = std::move(subset);
      } while (!found && std::prev_permutation(chosen.begin(), chosen.end()));
      if (found) break;
    }
    for (size_t i = 0; i < settings.size(); ++i) {
      if (!needed[i]) continue;
      const std::vector<bool>& seen = m.choicesSeen[i];
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
