#include "dtype_lint/numeric_health.h"

#include <fmt/format.h>

#include <cstdlib>

#include "dtype_lint/findings_pipeline.h"

namespace dtype_lint {
namespace {

// A count of a tensor's values: "3 of 131072 values".
std::string valuesOf(uint64_t count, uint64_t elements) { return fmt::format("{} of {} values", count, elements); }

bool parseOption(const char* text, double& value) {  // a share: 0 < value < 1
  char* end = nullptr;
  const double parsed = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(parsed > 0 && parsed < 1)) return false;
  value = parsed;
  return true;
}

bool parseOption(const char* text, unsigned& value) {  // a positive integer
  char* end = nullptr;
  const unsigned long parsed = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || *text == '-' || parsed == 0 || parsed > 1000000) return false;
  value = static_cast<unsigned>(parsed);
  return true;
}

}  // namespace

const char* environmentVariable(NumericHealthOption option) {
  switch (option) {
  case NumericHealthOption::NonFiniteSkippedSteps: return "DTYPE_LINT_NONFINITE_SKIPPED_STEPS";
  case NumericHealthOption::UnderflowShare: return "DTYPE_LINT_UNDERFLOW_SHARE";
  case NumericHealthOption::GradientCheckEvery: return "DTYPE_LINT_GRADIENT_CHECK_EVERY";
  case NumericHealthOption::CastCheckEvery: return "DTYPE_LINT_CAST_CHECK_EVERY";
  }
  return "";
}

const char* configKey(NumericHealthOption option) {
  switch (option) {
  case NumericHealthOption::NonFiniteSkippedSteps: return "NonFiniteSkippedSteps";
  case NumericHealthOption::UnderflowShare: return "UnderflowShare";
  case NumericHealthOption::GradientCheckEvery: return "GradientCheckEvery";
  case NumericHealthOption::CastCheckEvery: return "CastCheckEvery";
  }
  return "";
}

std::string checkOptionKey(NumericHealthOption option) {
  // The rule whose findings the option shapes; GradientCheckEvery paces DL303's counts too.
  const RuleId rule = option == NumericHealthOption::UnderflowShare   ? RuleId::DL303
                      : option == NumericHealthOption::CastCheckEvery ? RuleId::DL302
                                                                      : RuleId::DL301;
  return fmt::format("{}.{}", ruleInfo(rule).id, configKey(option));
}

std::string uncountedDeviceNote(const std::string& device) {
  return fmt::format("dtype-lint: note: tensors on {} were not counted: {}-{} read CPU tensors, and CUDA tensors where "
                     "the adapter was built with its CUDA path",
                     device, ruleInfo(RuleId::DL301).id, ruleInfo(RuleId::DL303).id);
}

std::string optionText(const NumericHealthOptions& options, NumericHealthOption option) {
  switch (option) {
  case NumericHealthOption::NonFiniteSkippedSteps: return std::to_string(options.nonFiniteSkippedSteps);
  case NumericHealthOption::UnderflowShare: return fmt::format("{}", options.underflowShare);
  case NumericHealthOption::GradientCheckEvery: return std::to_string(options.gradientCheckEvery);
  case NumericHealthOption::CastCheckEvery: return std::to_string(options.castCheckEvery);
  }
  return "";
}

const char* expectedValue(NumericHealthOption option) {
  return option == NumericHealthOption::UnderflowShare ? "a share between 0 and 1" : "a positive integer";
}

bool setOption(NumericHealthOptions& options, NumericHealthOption option, const char* text) {
  switch (option) {
  case NumericHealthOption::NonFiniteSkippedSteps: return parseOption(text, options.nonFiniteSkippedSteps);
  case NumericHealthOption::UnderflowShare: return parseOption(text, options.underflowShare);
  case NumericHealthOption::GradientCheckEvery: return parseOption(text, options.gradientCheckEvery);
  case NumericHealthOption::CastCheckEvery: return parseOption(text, options.castCheckEvery);
  }
  return false;
}

NumericHealthOptions numericHealthOptionsFrom(const std::function<const char*(const char*)>& getenv,
                                              std::string& error) {
  NumericHealthOptions o;
  for (NumericHealthOption option : kNumericHealthOptions) {
    const char* text = getenv(environmentVariable(option));
    if (text && *text && !setOption(o, option, text))
      error += fmt::format("{}{}='{}' is not {}; the default is used", error.empty() ? "" : "; ",
                           environmentVariable(option), text, expectedValue(option));
  }
  if (const char* checks = getenv(kChecksVariable); checks && *checks) {
    const RuleSelection selection = RuleSelection::parse(checks);
    if (auto glob = selection.unmatchedGlob()) {
      error += fmt::format("{}{}='{}': '{}' matches no rule; every rule is checked", error.empty() ? "" : "; ",
                           kChecksVariable, checks, *glob);
    } else {
      o.countGradients = selection.selects(ruleInfo(RuleId::DL301)) || selection.selects(ruleInfo(RuleId::DL303));
      o.countCasts = selection.selects(ruleInfo(RuleId::DL302));
    }
  }
  return o;
}

void NumericHealthRules::onGradients(const GradientCheck& check, const SourceLocation& at, std::vector<Finding>& out) {
  const GradientCounts* firstNonFinite = nullptr;
  size_t nonFiniteGradients = 0;
  uint64_t nonZero = 0, subnormal = 0, flushed = 0;
  for (const GradientCounts& g : check.gradients) {
    if (g.counts.nonFinite > 0 && !firstNonFinite) firstNonFinite = &g;
    nonFiniteGradients += g.counts.nonFinite > 0;
    nonZero += g.counts.nonZero;
    subnormal += g.counts.halfSubnormal;
    flushed += g.counts.halfFlushed;
  }
  const std::string others = nonFiniteGradients > 1 ? fmt::format(" and {} more gradient{}", nonFiniteGradients - 1,
                                                                  nonFiniteGradients > 2 ? "s" : "")
                                                    : "";
  if (check.point == GradientPoint::Step && firstNonFinite) {
    out.push_back(makeFinding(
        RuleId::DL301,
        fmt::format("the optimizer steps with inf/NaN gradients ({} of the gradient of {}{}): the update writes them "
                    "into the weights; skip the step on inf/NaN (a GradScaler does) or find where they start",
                    valuesOf(firstNonFinite->counts.nonFinite, firstNonFinite->counts.elements),
                    firstNonFinite->parameter, others),
        at));
  } else if (check.point == GradientPoint::Unscale) {
    if (!firstNonFinite) {
      nonFiniteInARow_ = 0;
    } else if (++nonFiniteInARow_ == 1) {
      firstNonFiniteAt_ = at;
    } else if (nonFiniteInARow_ == options_.nonFiniteSkippedSteps) {
      std::vector<Note> notes;
      if (firstNonFiniteAt_.valid()) notes.push_back(Note{firstNonFiniteAt_, "the first of these unscales"});
      out.push_back(makeFinding(
          RuleId::DL301,
          fmt::format("the gradients held inf/NaN at {} unscales in a row ({} of the gradient of {}{} this time): a "
                      "dynamic scaler skips each step and lowers the scale, so this is not an overflow it can absorb",
                      nonFiniteInARow_, valuesOf(firstNonFinite->counts.nonFinite, firstNonFinite->counts.elements),
                      firstNonFinite->parameter, others),
          at, std::move(notes)));
    }
  }
  // Too few values say nothing about a share.
  constexpr uint64_t kFewestValues = 64;
  if (!check.computedInHalf || check.afterScalingMistake || nonZero < kFewestValues) return;
  const double share = static_cast<double>(subnormal) / static_cast<double>(nonZero);
  if (share <= options_.underflowShare) return;
  const std::string cause = check.lossScale
                                ? fmt::format("the loss scale ({:g}) is too small", *check.lossScale)
                                : std::string("scale the loss (a GradScaler) or keep these gradients in Float");
  out.push_back(makeFinding(
      RuleId::DL303,
      fmt::format("{:.1f}% of the nonzero gradient values ({} of {}) are below Half's normal range (|x| < 6.1e-05){} "
                  "(over the {:g}% threshold): {}",
                  share * 100, subnormal, nonZero,
                  flushed ? fmt::format(", {} of them flush to zero in Half", flushed) : std::string(),
                  options_.underflowShare * 100, cause),
      at));
}

void NumericHealthRules::onHalfCast(std::string_view op, std::string_view source, ScalarType sourceDtype,
                                    bool byAutocast, const ValueCounts& counts, const SourceLocation& at,
                                    std::vector<Finding>& out) {
  if (counts.beyondHalf == 0) return;
  const std::string values = fmt::format("{} beyond +-65504, up to {:g}", valuesOf(counts.beyondHalf, counts.elements),
                                         static_cast<double>(counts.absMax));
  out.push_back(makeFinding(
      RuleId::DL302,
      byAutocast ? fmt::format("autocast casts {} ({}: {}) to Half for {}: they become inf", source, name(sourceDtype),
                               values, op)
                 : fmt::format("a cast of {} ({}: {}) to Half: they become inf; scale the values down or keep them in "
                               "Float/BFloat16",
                               source, name(sourceDtype), values),
      at));
}

}  // namespace dtype_lint
