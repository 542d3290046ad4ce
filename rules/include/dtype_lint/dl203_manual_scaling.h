// DL203: loss scaling by hand. A loss multiplied before backward() (for
// precision, not as a loss weight), and the gradients divided back by hand,
// with no inf/NaN skip and no dynamic scale.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint {

// A loss factor this large is scaling for precision, never a loss weight; so is a power of two from
// kPowerOfTwoLossScale (a static scale of 32 or 64, which no loss weight is).
inline constexpr double kLargeLossScale = 128;
inline constexpr double kPowerOfTwoLossScale = 32;

// Whether a loss multiplied by `factor` is scaled for precision (either sign).
bool isLossScaleConstant(double factor);

// DL203's facts: a loss multiplied before backward() and the gradients
// divided back by hand.
struct ManualScaling {
  SourceLocation multipliedAt;
  std::string factor;  // "1024" or "'loss_scale'"
  bool largeConstant = false;  // isLossScaleConstant(the constant)
  bool namedAsScale = false;  // a variable whose name says it is a scale ("loss_scale")
  bool fixed = false;  // a constant no code changes: the scale never adapts
};

// What a front end saw of `loss * factor`: the factor's value if it is a
// constant, the name of its variable if it is one, and how to quote it
// ("'cfg.scale'"). The message names the variable, with its value when it is constant.
ManualScaling manualScalingOf(const SourceLocation& multipliedAt, std::optional<double> constant,
                              std::optional<std::string_view> variableName, std::string quotedFactor);
// Whether a variable's name says it holds a loss scale ("loss_scale", "kScale").
bool nameSaysScale(std::string_view variableName);

// skipsNonFinite: the code checks the gradients for inf/NaN itself (then
// only a fixed scale is reported: it never adapts).
void checkManualScalingAtBackward(const ManualScaling& scaling, const SourceLocation& backwardAt,
                                  std::vector<Finding>& out, bool skipsNonFinite = false);
void checkScalingInsideScaler(const ManualScaling& scaling, const SourceLocation& scaleAt, std::vector<Finding>& out);
void reportGradientsDividedBack(const ManualScaling& scaling, const SourceLocation& backwardAt,
                                const SourceLocation& dividedAt, std::vector<Finding>& out);

// DL203 for a front end that follows the factor's variable (the analyzer):
// the backward()s on losses scaled by hand whose gradients may still be
// divided back, by an opaque id of the factor's variable. A value the front
// end joins where control flow merges: a backward is pending after the merge
// only when it is on every path.
class PendingManualScaling {
 public:
  // backward() on a loss scaled by `scaling`; factor: the factor's variable,
  // 0 when it is none. Scaling by hand in a function that also checks for
  // inf/NaN is a hand-written dynamic scaler, unless its scale is fixed: only
  // a fixed scale is reported there, and nothing is remembered.
  void backward(const ManualScaling& scaling, uintptr_t factor, const SourceLocation& at,
                bool functionChecksForNonFinite, std::vector<Finding>& out);
  // scaler.scale(loss * factor): scaled twice when the factor is a scale
  // (checkScalingInsideScaler); a loss weight too when its gradients are then
  // divided back by hand (`loss * kBoost`, then `g.div_(kBoost)`).
  void scaledInsideScaler(const ManualScaling& scaling, uintptr_t factor, const SourceLocation& at,
                          std::vector<Finding>& out);
  // Gradients divided (or multiplied by the reciprocal of) the variable `factor`.
  void gradientsDividedBy(uintptr_t factor, const SourceLocation& at, std::vector<Finding>& out) const;

  void join(const PendingManualScaling& other);
  // The number of pending backward()s: what the front end compares and memoizes by.
  size_t size() const { return backwards_.size(); }

 private:
  struct Backward {
    ManualScaling scaling;
    SourceLocation backwardAt;
  };
  std::map<uintptr_t, Backward> backwards_;
};

// DL203 from the ops a run leaves behind (the runtime front end): backward()
// on a loss multiplied by a constant, then either the gradients divided back
// by the same value or a loss-scale constant (isLossScaleConstant), with no inf/NaN check of any tensor
// before the next backward(). A scaler with such a check is not flagged.
class ManualScalingTrace {
 public:
  // A backward(); lossFactor: the constant the loss was multiplied by, if it was.
  void backward(std::optional<double> lossFactor, const SourceLocation& at, std::vector<Finding>& out);
  // Whether an in-place multiplication of some tensor by `multiplier` undoes
  // the pending backward's factor (the caller then reports where it happened).
  bool undoesPendingFactor(double multiplier) const;
  void gradientsDividedBack(const SourceLocation& at);
  void nonFiniteCheck();
  // The run ends: decide the pending backward.
  void finish(std::vector<Finding>& out);

 private:
  struct Pending {
    double factor;
    SourceLocation backwardAt;
    std::optional<SourceLocation> dividedAt;
    bool checked = false;
  };
  std::optional<Pending> pending_;
};

}  // namespace dtype_lint
