// The gradient-scaler protocol (DL2xx) as a state machine, per (scaler,
// optimizer) pair, mirroring PyTorch's GradScaler: READY -(unscale_)->
// UNSCALED -(step)-> STEPPED, update() puts every optimizer of the scaler back
// to READY, step() on a READY optimizer unscales implicitly. The linter adds
// its own fact per optimizer: do the gradients hold a scaled backward?
//
// The state is a value: front ends that merge control flow (the analyzer)
// join states, so every fact is a set of possibilities. A finding is made
// when a violation is possible on some path reaching the call (the protocol
// is about call order, which the paths show), except where the rule says
// "on every path".
//
// The scaler rules that are no call-order protocol have their own files:
// dl203_manual_scaling.h, dl209_scaler_with_bfloat16.h (and DL304,
// dl304_optimizer_epsilon.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/dl203_manual_scaling.h"
#include "dtype_lint/dtype.h"
#include "dtype_lint/finding.h"

namespace dtype_lint {

// An object the protocol follows (a scaler or an optimizer): a stable id
// from the front end and how to name it in messages ("'scaler'").
struct ObjectRef {
  uintptr_t id = 0;
  std::string name;
};

// What a tensor carries for the loss-scaling rules (the scaler's protocol and
// DL203), kept per tensor by a front end's flow analysis. Where paths meet, a
// fact survives only where both paths agree on it; a loss scaled by hand on
// one path only stays scaled.
struct LossScalingFact {
  std::optional<ObjectRef> scaledBy;  // the result of scaler.scale(loss)
  std::optional<SourceLocation> scaledAt;  // that scale() call
  std::optional<ManualScaling> manual;  // loss * K
  uintptr_t factor = 0;  // K's variable, by the front end's identity, when K is one
  bool isGradient = false;  // p.grad(), p.mutable_grad(): what clipping and dividing back act on

  LossScalingFact joinedWith(const LossScalingFact& other) const;
  // The same facts present (for the flow's fixpoint).
  bool sameAs(const LossScalingFact& o) const {
    return scaledBy.has_value() == o.scaledBy.has_value() && manual.has_value() == o.manual.has_value() &&
           isGradient == o.isGradient;
  }
};

enum Stage : uint8_t { kReady = 1, kUnscaled = 2, kStepped = 4 };
// What the gradients of an optimizer hold.
enum Grads : uint8_t { kNoGrads = 1, kScaledGrads = 2, kUnscaledGrads = 4 };

struct PairFacts {
  uint8_t stages = kReady;
  std::optional<SourceLocation> unscaledAt, steppedAt;
  std::optional<SourceLocation> updateSkippedAt;  // a `continue`/`return` that left STEPPED behind
  std::optional<SourceLocation> steppedDirectlyAt;  // the optimizer's own step() after this unscale
  // This unscale divided the gradients of a backward on the unscaled loss (held on every path).
  std::optional<SourceLocation> unscaledLossBackwardAt;
};

struct OptimizerFacts {
  std::string name;
  uint8_t grads = kNoGrads;
  std::optional<SourceLocation> scaledBackwardAt, unscaledBackwardAt;
  // The gradients are those of the backward on the unscaled loss here, on every path.
  std::optional<SourceLocation> plainBackwardAt;
  // The gradients come from a scaled backward on one path and from the backward on the
  // unscaled loss here on another (`if (step < warmup) loss.backward(); else ...`).
  std::optional<SourceLocation> branchPlainBackwardAt;
  std::optional<SourceLocation> scaledAt;  // the scale() of the last scaled backward's loss
  DtypeSet parameterDtype = DtypeSet::unknown();
  std::optional<Note> parametersOrigin;  // "the parameters of 'model' became Half here"
  uintptr_t module = 0;  // the module whose parameters it updates, if known
  std::optional<SourceLocation> frozenAt;  // its parameters were all frozen when it was built, here
  uintptr_t scaledBy = 0;  // the scaler of the last scaled backward, if known
  std::optional<SourceLocation> steppedByScalerAt;  // the scaler's step() stepped it since its last backward
  // DL202 or DL209 was reported for the gradients of its last scaled backward:
  // the first unscale raises, or does the needless work, for all that follow.
  bool dtypeReported = false;
};

// An unscale written after a clip in the same block, on lines of its own.
struct LaterUnscale {
  uintptr_t scaler = 0, optimizer = 0;
  SourceLocation lines;  // its whole lines, their newline included
  std::string text;  // those lines as written
};

// What DL205's fix needs from the front end at a clip: an unscale of the same
// scaler and optimizer written later in the block is moved before the clip;
// else one is inserted, named as the scaler and the optimizer are there (unset
// where they are not in scope), before the statement, with its indentation.
struct UnscaleSpelling {
  std::function<std::optional<std::string>(uintptr_t id)> scalerCall;  // "scaler." or "scaler->"
  std::function<std::optional<std::string>(uintptr_t id)> optimizer;  // "optimizer" or "*optimizer"
  std::string unscaleMethod;  // "unscale_"
  SourceLocation statement;
  std::string indentation;
  std::vector<LaterUnscale> laterUnscales;
  bool scalerPassedOn = false;  // the block later hands a scaler to other code, which may unscale
};

struct ScalerFacts {
  std::string name;
  // A path since the last update() (or since creation) with neither a step()
  // nor an unscale_(): update() there raises. False where nothing is known.
  bool mayHaveNoInfCheck = true;
  std::optional<SourceLocation> lastUpdateAt;
  // A path since the last update() with a step() or an unscale_().
  bool mayHaveInfCheck = false;
  // A path since the last update() with no backward() (false where not
  // known), one with a step() or unscale_() there, and a path with a
  // backward() before the last update(): an update() after steps of no new
  // backward is the iteration's second.
  bool mayHaveNoBackward = false;
  bool mayHaveStaleStep = false;
  bool mayHaveBackward = false;
  bool backwardBeforeLastUpdate = false;
  bool lastUpdateReported = false;  // an update() with no step() (DL210): what follows is its consequence
  // An inf check (unscale) of gradients whose optimizer the front end could
  // not identify, since the last update.
  bool mayHaveCheckedUnidentified = false;
  // Made with its `enabled` flag chosen at run time (`GradScaler(..., use_fp16)`):
  // off for BFloat16 on the paths that use it, so DL209 does not apply.
  bool mayBeDisabled = false;
  // Made with `enabled` false on every path here: its calls do nothing (step() is the optimizer's).
  bool disabled = false;
  std::optional<SourceLocation> madeAt;  // its construction: where DL209's fix goes
  // An update() on every path of this pass of the loop at this level
  // (ScalerProtocol::beginPass), and where: a second one is the iteration's second.
  std::optional<size_t> updatedInPassOf;
  std::optional<SourceLocation> passUpdateAt;

  void recordInfCheck() {
    mayHaveNoInfCheck = false;
    mayHaveInfCheck = true;
    mayHaveStaleStep |= mayHaveNoBackward;
  }
};

// DL209's note at the scale() of the loss whose gradients the scaler unscales.
inline constexpr std::string_view kLossScaledHere = "loss scaled here";
// DL209's note at the step() with the gradients of a loss it reports at its scale().
inline constexpr std::string_view kStepsHere = "the scaler unscales and steps with its gradients here";
inline constexpr std::string_view kScalerMadeHere = "the scaler is made here: enable it only for Half";

// A loss scaled under BFloat16 autocast (DL209), until its gradients are unscaled.
struct BFloat16ScaledLoss {
  SourceLocation scaledAt, autocastAt;
};

class ScalerProtocol {
 public:
  // Facts start unknown for objects the protocol has not seen: nothing is
  // reported about them until a transition makes their state known.
  // `madeAt`: its construction, where known (kept when a scaler is declared again).
  void declareScaler(const ObjectRef& scaler, bool mayBeDisabled = false, bool disabled = false,
                     std::optional<SourceLocation> madeAt = std::nullopt);
  void declareOptimizer(const ObjectRef& optimizer, DtypeSet parameterDtype, std::optional<Note> origin,
                        uintptr_t module);
  // The parameters of a known optimizer changed dtype (a model converted
  // after its optimizer was made); its other facts stay.
  void parametersBecame(const ObjectRef& optimizer, DtypeSet parameterDtype, std::optional<Note> origin);

  void scaledBackward(const ObjectRef& scaler, const SourceLocation& at) { scaledBackward(scaler, at, at); }
  // A front end that sees where the loss was scaled (`auto scaled = scaler.scale(loss);`).
  void scaledBackward(const ObjectRef& scaler, const SourceLocation& at, const SourceLocation& scaledAt);
  void unscaledBackward(const SourceLocation& at);
  // scaler.scale(loss) of a loss computed under BFloat16 autocast (enabled at
  // `autocastAt`): DL209 at the scaler's next step() (none where update()
  // comes first: the scaler did no work on it). Nothing for a
  // scaler that may be disabled (`enabled=false` makes it a no-op).
  void scaledUnderBFloat16(const ObjectRef& scaler, const SourceLocation& scaledAt, const SourceLocation& autocastAt);
  // `onceInItsLoop`: a static front end found the unscale on at most one
  // pass of the loop around it (`if (micro + 1 == accum)`), so the same unscale
  // met again on the loop's next pass is a path no run takes.
  void unscale(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at, std::vector<Finding>& out,
               bool onceInItsLoop = false);
  // An unscale a scaler guards with its own state (step()'s implicit unscale
  // in a C++ port): it happens only where the pair is surely READY.
  void unscaleUnlessDone(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                         std::vector<Finding>& out);
  // `enclosingBranch`: the innermost if/switch/conditional around the step in
  // its function, where a static front end found one. A branch that chose a
  // backward on the unscaled loss is reported where the step follows it on
  // every path: no branch around the step, or one around that backward too.
  void step(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at, std::vector<Finding>& out,
            const std::optional<SourceLocation>& enclosingBranch = std::nullopt);
  // After a step(), from a front end that knows the scaler's step() makes
  // the optimizer's own (torch.amp.GradScaler): a later direct step of the
  // same gradients is a second update (DL208). An annotated or a C++ scaler
  // may call the optimizer's step() itself after announcing its own.
  void optimizerSteppedByScaler(const ObjectRef& optimizer, const SourceLocation& at);
  // Before a step(), from a front end that sees the gradients: none of the
  // optimizer's parameters has one (DL207; PyTorch asserts). `frozenAt`:
  // where they were all frozen, if that is why.
  void stepWithoutGradients(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                            std::vector<Finding>& out, const std::optional<SourceLocation>& frozenAt = std::nullopt);
  // The optimizer was built from parameters all frozen (requires_grad_(false)) at `at`.
  void parametersFrozen(const ObjectRef& optimizer, const SourceLocation& at);
  // passLevel: how many loops enclose the update() (the front end's count, across calls), where known.
  void update(const ObjectRef& scaler, const SourceLocation& at, std::vector<Finding>& out,
              std::optional<size_t> passLevel = std::nullopt);
  // A pass of the loop `level` loops deep starts: the updates of earlier passes, of it and of loops inside it, are
  // other iterations'.
  void beginPass(size_t level);
  // update() seen by a front end that cannot see step() but sees the inf
  // checks (the raw ATen AMP ops at runtime): DL210 when no unscale recorded
  // one since the last update; every optimizer of the scaler starts over.
  void updateFromInfChecks(const ObjectRef& scaler, const SourceLocation& at, std::vector<Finding>& out);
  // step() of an optimizer the front end cannot identify: only the scaler's
  // "stepped since update()" fact changes.
  void stepUnidentifiedOptimizer(const ObjectRef& scaler, const SourceLocation& at, std::vector<Finding>& out);
  // unscale of gradients whose optimizer the front end cannot identify: the
  // inf check it records is known (for updateFromInfChecks), and the scaled
  // gradients of this scaler may now be unscaled (no DL205 after it).
  void unscaleUnidentifiedOptimizer(const ObjectRef& scaler, const SourceLocation& at, std::vector<Finding>& out);
  // step() seen by its effect (the runtime: the first in-place update of a
  // parameter whose gradient an unscale listed): the pair moves to STEPPED, so
  // a later unscale is DL206. Nothing is reported here: the effect repeats per
  // parameter and is no call of the user's that could be out of order.
  void stepSeenByParameterUpdate(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at);
  void optimizerStep(const ObjectRef& optimizer, const SourceLocation& at, std::vector<Finding>& out);
  // Clipping the gradients of an optimizer, or of a module's parameters (module != 0).
  void clip(const ObjectRef* optimizer, uintptr_t module, const SourceLocation& at, std::vector<Finding>& out,
            const UnscaleSpelling* spelling = nullptr);
  void zeroGrad(const ObjectRef& optimizer);
  // A loop is left: a step() its iterations make on some path (every N-th
  // micro-batch) is taken to have run, since the guards' counts are not
  // followed; an update() after the loop has its inf checks.
  void leaveLoop();
  // Control leaves the iteration (continue/return) at `at`: remembered on
  // pairs that may be STEPPED, for DL204's note.
  void leaveIteration(const SourceLocation& at);
  // Code the front end cannot follow may have driven this scaler (it was
  // passed to a function without a body): its state is unknown again, and
  // stays so where this path joins others, until its next transition.
  void forgetScaler(uintptr_t scaler);
  // Handed with a scaler to code a front end cannot see, which may have
  // unscaled its gradients and reported their dtype there (DL202/DL209).
  void mayHaveBeenUnscaledElsewhere(const ObjectRef& optimizer);
  // A scaler or an optimizer that no longer exists (a local of a function
  // that returned): nothing it held can be clipped or stepped again.
  void forgetDestroyed(uintptr_t object);
  // ... or every scaler and optimizer (a callable whose target is unknown:
  // a hook from a list of std::function).
  void forgetAll();

  // The scalers and optimizers `other` declared that this state does not
  // know, with their gradients unknown: an object's members (a Trainer's
  // scaler and optimizer) seen in a method whose caller is not seen.
  void adoptDeclarations(const ScalerProtocol& other);

  void join(const ScalerProtocol& other);
  bool operator==(const ScalerProtocol& other) const;
  // A compact description of the state, for memoizing analyses by it.
  std::string key() const;
  bool knows(uintptr_t id) const { return scalers_.count(id) || optimizers_.count(id); }

  const OptimizerFacts* optimizer(uintptr_t id) const;
  bool mayBeDisabled(uintptr_t scaler) const;
  bool disabled(uintptr_t scaler) const;

 private:
  PairFacts& pair(uintptr_t scaler, uintptr_t optimizer);
  void erasePairsOf(uintptr_t scaler);
  // DL209: a note at the scaler's construction, where its fix goes.
  void addScalerMadeNote(Finding& f, uintptr_t scaler) const;
  // The scaler's facts; a scaler not seen before may or may not have stepped.
  ScalerFacts& scalerFacts(const ObjectRef& scaler);
  struct ParameterCheck {
    bool unscales = false;  // the call unscales the gradients: DL202
    bool steps = false;  // the call steps with them: DL209
    std::optional<SourceLocation> unscaledAt;  // an explicit unscale_() before the step
  };
  void checkParameterDtype(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                           ParameterCheck check, std::vector<Finding>& out);
  // DL209 at the step() with the scaler's gradients, where a loss scaled
  // under BFloat16 waits; the optimizer's BFloat16 parameters go with it.
  void reportBFloat16Loss(const ObjectRef& scaler, const ObjectRef* optimizer, const SourceLocation& at,
                          const std::optional<SourceLocation>& unscaledAt, std::vector<Finding>& out);
  // The scaler's "stepped since update()" fact.
  void markStepped(const ObjectRef& scaler);
  // A backward() of any loss: every scaler's "backward since update()" facts.
  void backwardSeen();

  std::map<uintptr_t, ScalerFacts> scalers_;
  std::map<uintptr_t, OptimizerFacts> optimizers_;
  std::map<std::pair<uintptr_t, uintptr_t>, PairFacts> pairs_;
  std::map<uintptr_t, BFloat16ScaledLoss> bfloat16Losses_;  // by scaler
  // Scalers forgotten since their last transition: unknown on a path makes
  // them unknown after a join with any other path.
  std::set<uintptr_t> forgotten_;
};

// DL202 from an unscale's gradients where the parameters are not seen (the
// raw AMP ops at runtime): Half gradients are Half parameters'. BFloat16 ones
// would be DL209's, which the runtime does not report yet.
std::optional<DtypeSet> parameterDtypeFromUnscaledGradients(ScalarType gradients);

// A finding about the order of the protocol's calls (unscaled twice, clipped
// before the unscale, stepped around the scaler...), whose notes are the
// earlier calls: where they all happened before the helper was called, the
// call of the helper is what is out of order (a logging helper that unscales,
// called after the step). Not one about dtypes (DL202, DL209), nor an update()
// with no step since the last (an epoch hook's update() is wrong in itself).
bool isCallOrderFinding(const Finding& finding);

// Whether a finding says the gradients a step used still hold the scale
// (clipped before the unscale, DL205; stepped without a scaled backward,
// DL207): until the next backward, their size is that mistake's, which the
// numeric checks must not report again.
bool leavesGradientsMisscaled(const Finding& finding);

// DL207 from the ops a run leaves behind (the runtime front end, raw ATen AMP
// ops): each backward() classified by whether its loss's graph multiplies by
// the scale tensor; a step after an unscale when no backward since the last
// update did is DL207. Losses multiplied by a large number (the scale read as
// a number) are neither: they keep it silent.
class AmpBackwardTrace {
 public:
  enum class Loss { Scaled, Unscaled, Unknown };
  void backward(Loss loss, const SourceLocation& at);
  void update();
  void step(const ObjectRef& optimizer, const SourceLocation& at, std::vector<Finding>& out);

 private:
  bool scaledOrUnknownSinceUpdate_ = false;
  std::optional<SourceLocation> unscaledBackwardAt_;  // the last one since the update
};

}  // namespace dtype_lint
