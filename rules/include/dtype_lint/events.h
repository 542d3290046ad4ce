// The events both front ends emit. They say what happened (this op ran on a
// Half and a Float tensor, outside autocast); the rule engines decide what is a bug.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dtype_lint/dtype.h"
#include "dtype_lint/finding.h"

namespace dtype_lint {

enum class Tristate { Off, On, Unknown };

// Autocast state of one device type, as set by set_enabled/set_autocast_enabled.
struct DeviceAutocast {
  Tristate enabled = Tristate::Off;
  DtypeSet dtype;  // the lower-precision dtype autocast casts to
  std::optional<SourceLocation> enabledAt;

  friend bool operator==(const DeviceAutocast& a, const DeviceAutocast& b) {
    return a.enabled == b.enabled && a.dtype == b.dtype;
  }
};

struct AutocastState {
  DeviceAutocast cpu{Tristate::Off, DtypeSet(ScalarType::BFloat16), std::nullopt};
  DeviceAutocast cuda{Tristate::Off, DtypeSet(ScalarType::Half), std::nullopt};

  bool definitelyOff() const { return cpu.enabled == Tristate::Off && cuda.enabled == Tristate::Off; }
  bool anyOn() const { return cpu.enabled == Tristate::On || cuda.enabled == Tristate::On; }
  friend bool operator==(const AutocastState& a, const AutocastState& b) { return a.cpu == b.cpu && a.cuda == b.cuda; }
};

// An explicit cast made while autocast was on (DL104): from what, to what, and where.
struct ExplicitCast {
  DtypeSet from;
  ScalarType to;
  SourceLocation at;
};

// One tensor operand as the front end saw it.
struct Operand {
  std::string description;  // "'x'", "the parameters of 'fc'"
  DtypeSet dtype;
  std::optional<Note> origin;  // where it got that dtype
  std::optional<ExplicitCast> castInAutocast;  // it is the result of such a cast
  // The dtype constant written in the cast or factory call that gave it its
  // dtype (x.to(torch::kHalf)), for a fix; unset when there is none or a macro wrote it.
  std::optional<SourceLocation> dtypeConstant;
  // The operand's own expression, where a fix can edit it; with whether a
  // method call on it needs parentheses around it (a - b).
  std::optional<SourceLocation> expression;
  bool needsParentheses = false;
};

// A tensor op: a call the front end mapped to an ATen op name.
struct OpEvent {
  std::string op;  // ATen name: "mm", "linear", "mm_out", "mul_", "softmax", "backward", ...
  SourceLocation location;
  std::vector<Operand> inputs;  // the operands whose dtypes meet
  std::optional<Operand> destination;  // out= argument, or self of an in-place op
  bool explicitDtype = false;  // a dtype= argument fixes the computation dtype
  bool reducesAllDims = false;  // sum()/mean() with no dim
  bool writtenInFile = false;  // location is the op's own text (no macro): a fix can edit it
  bool resultFullyReduced = false;  // its result goes straight into sum()/mean()/norm() of every dim
  AutocastState autocast;
  // Set inside the backward of a custom autograd Function: where its forward
  // ran under autocast, if it did.
  bool inCustomBackward = false;
  std::optional<Note> forwardUnderAutocast;
  std::vector<Note> callChain;  // outermost last: "called from here"
  // The entry of callChain whose call chose every operand's dtype: a user
  // module called with an input of another dtype than its parameters. A
  // mismatch is that call's, reported there.
  std::optional<size_t> operandsChosenByCall;
  // Asked only where a rule is about to report an in-place op: whether a
  // library module (LibTorch's C++ torch::nn) issued it on a buffer of its
  // own, which is not the user's to fix. A runtime front end walks the stack
  // for it; the analyzer leaves it unset (it sees only the user's code).
  std::function<bool()> issuedByLibraryModule;
};

// DL107's state, kept by a front end's flow analysis: where an op under
// autocast last filled its weight cache with no clear_cache() since, and
// where the region that filled it was left. Reported only when filled on
// every path (precision first): a join keeps what both paths have.
struct AutocastCacheState {
  std::optional<SourceLocation> filledAt;
  std::optional<SourceLocation> regionLeftAt;  // autocast disabled here without clear_cache()

  void join(const AutocastCacheState& other) {
    if (!other.filledAt) filledAt.reset();
    if (!other.regionLeftAt) regionLeftAt.reset();
  }
  bool sameAs(const AutocastCacheState& o) const {
    return filledAt.has_value() == o.filledAt.has_value() && regionLeftAt.has_value() == o.regionLeftAt.has_value();
  }
};

// optimizer.step() or an equivalent parameter update.
struct OptimizerStepEvent {
  SourceLocation location;
  std::string optimizer;  // description: "'opt'"
  AutocastState autocast;
  AutocastCacheState autocastCache;
  std::vector<Note> callChain;
  // A step inside a Python `with` region (or decorated function), whose end
  // clears the cache: the forward after it in the region that uses the stale copies.
  std::optional<SourceLocation> staleCopyUsedAt;
};

}  // namespace dtype_lint
