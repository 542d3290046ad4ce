// DL301-DL303: what a run's values say. The front end counts tensors at a few
// points (kernels/: a cast to Half, the gradients at an unscale or an
// optimizer's step); these rules decide what the counts mean.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/dtype.h"
#include "dtype_lint/finding.h"

namespace dtype_lint {

// One tensor's values by what Half would make of them (kernels' TensorStats).
struct ValueCounts {
  uint64_t elements = 0;
  uint64_t nonFinite = 0;
  uint64_t beyondHalf = 0;  // finite, |x| > 65504
  uint64_t halfSubnormal = 0;  // finite, 0 < |x| < 2^-14 (halfFlushed included)
  uint64_t halfFlushed = 0;  // finite, 0 < |x| < 2^-24
  uint64_t nonZero = 0;  // finite, not zero
  float absMax = 0;
};

// Cadence and thresholds: the defaults keep a training step's overhead low;
// `dtype-lint run` passes a config's CheckOptions (or the older RuntimeOptions) as these variables.
struct NumericHealthOptions {
  unsigned nonFiniteSkippedSteps = 8;  // DL301: unscales in a row with inf/NaN before a dynamic scaler is given up on
  double underflowShare = 0.25;  // DL303: share of nonzero gradient values below Half's normal range
  unsigned gradientCheckEvery = 1;  // DL301/DL303: count the gradients at one check point in N
  unsigned castCheckEvery = 16;  // DL302: count every cast to Half up to the 64th, then one in N
  // Values are counted only for the rules that use them and are selected:
  // `dtype-lint run` passes the Checks in effect as kChecksVariable.
  bool countGradients = true;  // DL301 or DL303
  bool countCasts = true;  // DL302
};

inline constexpr const char* kChecksVariable = "DTYPE_LINT_CHECKS";  // "DL2*,-DL209", as Checks:

// Each option of NumericHealthOptions, by the names it goes by.
enum class NumericHealthOption { NonFiniteSkippedSteps, UnderflowShare, GradientCheckEvery, CastCheckEvery };
inline constexpr NumericHealthOption kNumericHealthOptions[] = {
    NumericHealthOption::NonFiniteSkippedSteps, NumericHealthOption::UnderflowShare,
    NumericHealthOption::GradientCheckEvery, NumericHealthOption::CastCheckEvery};
const char* environmentVariable(NumericHealthOption option);  // "DTYPE_LINT_UNDERFLOW_SHARE"
const char* configKey(NumericHealthOption option);  // "UnderflowShare", under the older RuntimeOptions
std::string checkOptionKey(NumericHealthOption option);  // "DL303.UnderflowShare", under CheckOptions
const char* expectedValue(NumericHealthOption option);  // "a share between 0 and 1"
// Sets the option from its text; false, and `options` unchanged, when the
// text is not a valid value.
bool setOption(NumericHealthOptions& options, NumericHealthOption option, const char* text);
std::string optionText(const NumericHealthOptions& options, NumericHealthOption option);
// The note said once at the end of a run whose tensors on `device` ("meta",
// "cuda") the checks could not read.
std::string uncountedDeviceNote(const std::string& device);

// The options' environment variables over the defaults, and which counts the
// selected rules need; each malformed value is named in `error` ("; "
// between them) and its default kept.
NumericHealthOptions numericHealthOptionsFrom(const std::function<const char*(const char*)>& getenv,
                                              std::string& error);

// The gradient of one parameter at a check point.
struct GradientCounts {
  std::string parameter;  // "a Float [512, 256] parameter"
  ValueCounts counts;
};

enum class GradientPoint {
  Unscale,  // a scaler's unscale (scaled gradients; a dynamic scaler skips the step on inf/NaN)
  Step,  // an optimizer's parameters updated: the gradients are applied
};

struct GradientCheck {
  GradientPoint point = GradientPoint::Step;
  std::vector<GradientCounts> gradients;
  std::optional<double> lossScale;  // at an unscale, when the scale is known
  bool computedInHalf = false;  // Half gradients, or a backward under Half autocast
  // Clipped while scaled (DL205), or unscaled though never scaled (DL207):
  // tiny for that reason, and a larger scale would not help.
  bool afterScalingMistake = false;
};

class NumericHealthRules {
 public:
  explicit NumericHealthRules(NumericHealthOptions options = {}) : options_(options) {}

  // Whether to count at this check point / this cast (the cadence).
  bool sampleGradients() { return options_.countGradients && gradientPoints_++ % options_.gradientCheckEvery == 0; }
  bool sampleCast() {
    return options_.countCasts && (++casts_ <= kAlwaysCheckedCasts || casts_ % options_.castCheckEvery == 0);
  }

  // DL301 and DL303 at an unscale or a step.
  void onGradients(const GradientCheck& check, const SourceLocation& at, std::vector<Finding>& out);
  // DL302: a cast to Half of `source` (its dtype and its values); byAutocast:
  // autocast casts it for `op`, else `op` is the user's explicit cast.
  void onHalfCast(std::string_view op, std::string_view source, ScalarType sourceDtype, bool byAutocast,
                  const ValueCounts& counts, const SourceLocation& at, std::vector<Finding>& out);

  const NumericHealthOptions& options() const { return options_; }

 private:
  static constexpr uint64_t kAlwaysCheckedCasts = 64;
  NumericHealthOptions options_;
  uint64_t gradientPoints_ = 0;
  uint64_t casts_ = 0;
  unsigned nonFiniteInARow_ = 0;
  SourceLocation firstNonFiniteAt_;
};

}  // namespace dtype_lint
