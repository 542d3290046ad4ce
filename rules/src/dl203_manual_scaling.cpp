#include "dtype_lint/dl203_manual_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

namespace dtype_lint {

bool nameSaysScale(std::string_view variableName) {
  constexpr std::string_view kScale = "scale";
  auto sameLetter = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(variableName.begin(), variableName.end(), kScale.begin(), kScale.end(), sameLetter) !=
         variableName.end();
}

bool isLossScaleConstant(double factor) {
  const double magnitude = std::abs(factor);
  const bool powerOfTwo = magnitude >= 1 && std::exp2(std::round(std::log2(magnitude))) == magnitude;
  return magnitude >= kLargeLossScale || (powerOfTwo && magnitude >= kPowerOfTwoLossScale);
}

ManualScaling manualScalingOf(const SourceLocation& multipliedAt, std::optional<double> constant,
                              std::optional<std::string_view> variableName, std::string quotedFactor) {
  ManualScaling scaling;
  scaling.multipliedAt = multipliedAt;
  scaling.largeConstant = constant && isLossScaleConstant(*constant);
  scaling.namedAsScale = variableName && nameSaysScale(*variableName);
  scaling.factor = !constant       ? std::move(quotedFactor)
                   : !variableName ? fmt::format("{:g}", *constant)
                                   : fmt::format("{} ({:g})", quotedFactor, *constant);
  return scaling;
}

void checkManualScalingAtBackward(const ManualScaling& scaling, const SourceLocation& backwardAt,
                                  std::vector<Finding>& out, bool skipsNonFinite) {
  if (!scaling.largeConstant || (skipsNonFinite && !scaling.fixed)) return;
  Finding f = makeFinding(
      RuleId::DL203,
      skipsNonFinite ? fmt::format("backward() on a loss multiplied by the fixed scale {} by hand: a static loss scale "
                                   "never adapts (after an overflow every step is skipped, and small gradients still "
                                   "underflow); use a GradScaler",
                                   scaling.factor)
                     : fmt::format("backward() on a loss multiplied by {} by hand: manual loss scaling has no inf/NaN "
                                   "skip and no dynamic scale; use a GradScaler",
                                   scaling.factor),
      backwardAt);
  if (scaling.multipliedAt.line != backwardAt.line) f.notes.push_back(Note{scaling.multipliedAt, "loss scaled here"});
  out.push_back(std::move(f));
}

void checkScalingInsideScaler(const ManualScaling& scaling, const SourceLocation& scaleAt, std::vector<Finding>& out) {
  // A loss weight (0.5 * loss, cfg.loss_weight * loss) is not scaling for precision.
  if (!scaling.largeConstant && !scaling.namedAsScale) return;
  // At the multiplication, the line to remove; the scale() a note.
  const SourceLocation& at = scaling.multipliedAt.valid() ? scaling.multipliedAt : scaleAt;
  Finding f = makeFinding(RuleId::DL203,
                          fmt::format("the loss is multiplied by {} inside the scaler's scale(): it is scaled twice, "
                                      "and the scaler's inf/NaN checks see the wrong magnitude",
                                      scaling.factor),
                          at);
  if (at.line != scaleAt.line) f.notes.push_back(Note{scaleAt, "the scaler scales it again here"});
  out.push_back(std::move(f));
}

void reportGradientsDividedBack(const ManualScaling& scaling, const SourceLocation& backwardAt,
                                const SourceLocation& dividedAt, std::vector<Finding>& out) {
  Finding f = makeFinding(RuleId::DL203,
                          fmt::format("backward() on a loss multiplied by {}, and the gradients divided back by hand: "
                                      "manual loss scaling has no inf/NaN skip and no dynamic scale; use a GradScaler",
                                      scaling.factor),
                          backwardAt);
  if (scaling.multipliedAt.line != backwardAt.line) f.notes.push_back(Note{scaling.multipliedAt, "loss scaled here"});
  f.notes.push_back(Note{dividedAt, "gradients divided back here"});
  out.push_back(std::move(f));
}

void ManualScalingTrace::backward(std::optional<double> lossFactor, const SourceLocation& at,
                                  std::vector<Finding>& out) {
  finish(out);
  if (lossFactor && *lossFactor != 1.0 && *lossFactor != 0.0) pending_ = Pending{*lossFactor, at, std::nullopt, false};
}

bool ManualScalingTrace::undoesPendingFactor(double multiplier) const {
  return pending_ && !pending_->dividedAt && std::abs(multiplier * pending_->factor - 1.0) < 1e-6;
}

void ManualScalingTrace::gradientsDividedBack(const SourceLocation& at) {
  if (pending_) pending_->dividedAt = at;
}

void ManualScalingTrace::nonFiniteCheck() {
  if (pending_) pending_->checked = true;
}

void ManualScalingTrace::finish(std::vector<Finding>& out) {
  if (!pending_) return;
  const Pending p = *std::exchange(pending_, std::nullopt);
  if (p.checked) return;
  ManualScaling scaling;
  scaling.multipliedAt = p.backwardAt;
  scaling.factor = fmt::format("{}", p.factor);
  scaling.largeConstant = isLossScaleConstant(p.factor);
  if (p.dividedAt) reportGradientsDividedBack(scaling, p.backwardAt, *p.dividedAt, out);
  else checkManualScalingAtBackward(scaling, p.backwardAt, out);
}

void PendingManualScaling::backward(const ManualScaling& scaling, uintptr_t factor, const SourceLocation& at,
                                    bool functionChecksForNonFinite, std::vector<Finding>& out) {
  if (functionChecksForNonFinite) return checkManualScalingAtBackward(scaling, at, out, true);
  checkManualScalingAtBackward(scaling, at, out);
  if (factor) backwards_[factor] = Backward{scaling, at};
}

void PendingManualScaling::scaledInsideScaler(const ManualScaling& scaling, uintptr_t factor, const SourceLocation& at,
                                              std::vector<Finding>& out) {
  const size_t before = out.size();
  checkScalingInsideScaler(scaling, at, out);
  if (out.size() == before && factor) backwards_[factor] = Backward{scaling, at};
}

void PendingManualScaling::gradientsDividedBy(uintptr_t factor, const SourceLocation& at,
                                              std::vector<Finding>& out) const {
  auto it = factor ? backwards_.find(factor) : backwards_.end();
  if (it == backwards_.end()) return;
  reportGradientsDividedBack(it->second.scaling, it->second.backwardAt, at, out);
}

void PendingManualScaling::join(const PendingManualScaling& other) {
  for (auto it = backwards_.begin(); it != backwards_.end();)
    it = other.backwards_.count(it->first) ? std::next(it) : backwards_.erase(it);
}

}  // namespace dtype_lint
