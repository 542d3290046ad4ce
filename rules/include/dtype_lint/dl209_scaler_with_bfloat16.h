// DL209: a gradient scaler used with BFloat16 autocast, where loss scaling buys nothing.
#pragma once

#include <optional>
#include <vector>

#include "dtype_lint/events.h"
#include "dtype_lint/finding.h"
#include "dtype_lint/scaler_protocol.h"

namespace dtype_lint {

// Where autocast was enabled when every enabled device autocasts to BFloat16;
// unset when autocast is off, may be off, or some enabled device casts to
// another dtype (Half needs the scaler).
std::optional<SourceLocation> bfloat16AutocastAt(const AutocastState& autocast);

// The finding for a loss scaled under BFloat16 autocast, at its scale()
// (where fresh sets' writers put it), with the step() that uses its
// gradients as a note: where the scaler's work ends, and where CUDA's unscale
// fails.
Finding scalerWithBFloat16Finding(const ObjectRef& scaler, const SourceLocation& at, const SourceLocation& scaledAt,
                                  const SourceLocation& bfloat16AutocastAt);

// Python code makes its scaler with `torch.amp.GradScaler(...)`, where
// `enabled=` limits it to Half: the Python front end moves each DL209 to that
// line, and one at a step() (BFloat16 parameters) where no such note is to
// where the loss is scaled (`scaler.scale(loss).backward()`). Other findings
// stay.
void anchorAtScaler(std::vector<Finding>& findings);

// DL209's flow fact for a front end that follows paths: the BFloat16 region a
// scaled loss comes from. scale() under such a region, or right after one
// closed, scales a loss computed in it; a later scale() with no region
// between scales another loss.
class BFloat16LossSource {
 public:
  // Autocast is about to be turned off (`before` is its state until now), or on.
  void regionLeft(const AutocastState& before) { closedAt_ = bfloat16AutocastAt(before); }
  void regionEntered() { closedAt_.reset(); }
  // scaler.scale(loss), autocast being `now`: where the BFloat16 region the
  // loss was computed in was enabled, if it was computed in one.
  std::optional<SourceLocation> scaled(const AutocastState& now);

  void join(const BFloat16LossSource& other) {
    if (!other.closedAt_) closedAt_.reset();
  }
  bool sameAs(const BFloat16LossSource& o) const { return closedAt_.has_value() == o.closedAt_.has_value(); }
  bool known() const { return closedAt_.has_value(); }

 private:
  std::optional<SourceLocation> closedAt_;  // the last region closed, where it cast to BFloat16 only
};

}  // namespace dtype_lint
