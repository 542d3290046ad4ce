#include "dtype_lint/scaler_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "dtype_lint/dl209_scaler_with_bfloat16.h"

namespace dtype_lint {

LossScalingFact LossScalingFact::joinedWith(const LossScalingFact& other) const {
  LossScalingFact out = *this;
  if (!other.scaledBy || other.scaledBy->id != (scaledBy ? scaledBy->id : 0)) out.scaledBy.reset();
  if (!out.scaledBy || !other.scaledAt || !scaledAt || scaledAt->line != other.scaledAt->line) out.scaledAt.reset();
  // Multiplied by hand on one path only (`if (static_scale != 1.0) loss = loss * static_scale;`): that
  // path's backward is manual scaling.
  if (!manual) {
    out.manual = other.manual;
    out.factor = other.factor;
  } else if (other.manual && factor != other.factor) {
    out.manual.reset();
    out.factor = 0;
  }
  out.isGradient = isGradient && other.isGradient;
  return out;
}

namespace {

// The scaler unscaled the gradients (unscale_() or step()).
void unscaledByScaler(OptimizerFacts& facts) {
  facts.grads = kUnscaledGrads;
  facts.plainBackwardAt.reset();
  facts.branchPlainBackwardAt.reset();
}

template <typename T>
void keepFirst(std::optional<T>& into, const std::optional<T>& other) {
  if (!into) into = other;
}

void addNote(Finding& f, const std::optional<SourceLocation>& at, std::string message) {
  if (at && at->valid()) f.notes.push_back(Note{*at, std::move(message)});
}

// Gradients scaled on some path and unscaled on none. A path with none (an
// accumulation loop run zero times) steps or clips nothing, so what runs at
// all runs on scaled gradients.
bool onlyScaledGrads(uint8_t grads) { return (grads & kScaledGrads) && !(grads & kUnscaledGrads); }

}  // namespace

void ScalerProtocol::declareScaler(const ObjectRef& scaler, bool mayBeDisabled, bool disabled,
                                   std::optional<SourceLocation> madeAt) {
  forgotten_.erase(scaler.id);
  ScalerFacts facts{scaler.name, true, std::nullopt};
  facts.mayBeDisabled = mayBeDisabled || disabled;
  facts.disabled = disabled;
  if (auto known = scalers_.find(scaler.id); !madeAt && known != scalers_.end()) madeAt = known->second.madeAt;
  facts.madeAt = madeAt;
  scalers_[scaler.id] = std::move(facts);
  erasePairsOf(scaler.id);
}

void ScalerProtocol::addScalerMadeNote(Finding& f, uintptr_t scaler) const {
  if (auto known = scalers_.find(scaler); known != scalers_.end())
    addNote(f, known->second.madeAt, std::string(kScalerMadeHere));
}

void ScalerProtocol::erasePairsOf(uintptr_t scaler) {
  for (auto it = pairs_.begin(); it != pairs_.end();) it = it->first.first == scaler ? pairs_.erase(it) : std::next(it);
}

void ScalerProtocol::declareOptimizer(const ObjectRef& optimizer, DtypeSet parameterDtype, std::optional<Note> origin,
                                      uintptr_t module) {
  OptimizerFacts facts;
  facts.name = optimizer.name;
  facts.parameterDtype = parameterDtype;
  facts.parametersOrigin = std::move(origin);
  facts.module = module;
  optimizers_[optimizer.id] = std::move(facts);
}

void ScalerProtocol::parametersBecame(const ObjectRef& optimizer, DtypeSet parameterDtype, std::optional<Note> origin) {
  auto it = optimizers_.find(optimizer.id);
  if (it == optimizers_.end()) return declareOptimizer(optimizer, parameterDtype, std::move(origin), 0);
  it->second.parameterDtype = parameterDtype;
  it->second.parametersOrigin = std::move(origin);
}

void ScalerProtocol::adoptDeclarations(const ScalerProtocol& other) {
  // Whether a step happened since the last update is unknown there, as for a scaler not seen before.
  for (const auto& [id, facts] : other.scalers_) {
    ScalerFacts adopted{facts.name, false, std::nullopt};
    adopted.mayBeDisabled = facts.mayBeDisabled;  // how it was made still holds
    adopted.disabled = facts.disabled;
    scalers_.try_emplace(id, std::move(adopted));
  }
  for (const auto& [id, facts] : other.optimizers_) {
    auto [it, inserted] = optimizers_.try_emplace(id, facts);
    if (!inserted) continue;
    it->second.grads = kNoGrads | kScaledGrads | kUnscaledGrads;
    it->second.scaledBackwardAt.reset();
    it->second.scaledAt.reset();
    it->second.unscaledBackwardAt.reset();
    it->second.plainBackwardAt.reset();
    it->second.branchPlainBackwardAt.reset();
    it->second.steppedByScalerAt.reset();
  }
}

const OptimizerFacts* ScalerProtocol::optimizer(uintptr_t id) const {
  auto it = optimizers_.find(id);
  return it == optimizers_.end() ? nullptr : &it->second;
}

PairFacts& ScalerProtocol::pair(uintptr_t scaler, uintptr_t optimizer) {
  forgotten_.erase(scaler);  // every caller makes a transition
  auto [it, inserted] = pairs_.try_emplace({scaler, optimizer});
  // A pair starts READY when its scaler's state is known; otherwise unknown (0).
  if (inserted) it->second.stages = scalers_.count(scaler) ? kReady : 0;
  return it->second;
}

ScalerFacts& ScalerProtocol::scalerFacts(const ObjectRef& scaler) {
  forgotten_.erase(scaler.id);  // every caller makes a transition
  return scalers_.try_emplace(scaler.id, ScalerFacts{scaler.name, false, std::nullopt}).first->second;
}

bool isCallOrderFinding(const Finding& finding) {
  static constexpr RuleId kOrderRules[] = {RuleId::DL201, RuleId::DL204, RuleId::DL205,
                                           RuleId::DL206, RuleId::DL207, RuleId::DL208};
  return finding.rule &&
         std::find(std::begin(kOrderRules), std::end(kOrderRules), finding.rule->handle) != std::end(kOrderRules);
}

bool leavesGradientsMisscaled(const Finding& finding) {
  return finding.rule && (finding.rule->handle == RuleId::DL205 || finding.rule->handle == RuleId::DL207);
}

void ScalerProtocol::backwardSeen() {
  for (auto& [id, facts] : scalers_) {
    facts.mayHaveNoBackward = facts.mayHaveStaleStep = false;
    facts.mayHaveBackward = true;
  }
}

void ScalerProtocol::scaledBackward(const ObjectRef& scaler, const SourceLocation& at, const SourceLocation& scaledAt) {
  for (auto& [id, facts] : optimizers_) {
    facts.grads = kScaledGrads;
    facts.plainBackwardAt.reset();
    facts.branchPlainBackwardAt.reset();
    facts.scaledBackwardAt = at;
    facts.scaledAt = scaledAt;
    facts.dtypeReported = false;
    facts.scaledBy = scaler.id;
    facts.steppedByScalerAt.reset();
  }
  (void)scaler;
  backwardSeen();
}

void ScalerProtocol::unscaledBackward(const SourceLocation& at) {
  for (auto& [id, facts] : optimizers_) {
    facts.grads = kUnscaledGrads;
    facts.unscaledBackwardAt = facts.plainBackwardAt = at;
    facts.branchPlainBackwardAt.reset();
    facts.steppedByScalerAt.reset();
  }
  backwardSeen();
}

void ScalerProtocol::scaledUnderBFloat16(const ObjectRef& scaler, const SourceLocation& scaledAt,
                                         const SourceLocation& autocastAt) {
  if (!mayBeDisabled(scaler.id)) bfloat16Losses_.insert_or_assign(scaler.id, BFloat16ScaledLoss{scaledAt, autocastAt});
}

void ScalerProtocol::reportBFloat16Loss(const ObjectRef& scaler, const ObjectRef* optimizer, const SourceLocation& at,
                                        const std::optional<SourceLocation>& unscaledAt, std::vector<Finding>& out) {
  const auto waiting = bfloat16Losses_.find(scaler.id);
  if (waiting == bfloat16Losses_.end()) return;
  Finding f = scalerWithBFloat16Finding(scaler, at, waiting->second.scaledAt, waiting->second.autocastAt);
  addNote(f, unscaledAt, "gradients unscaled here");
  addScalerMadeNote(f, scaler.id);
  out.push_back(std::move(f));
  bfloat16Losses_.erase(waiting);
  if (auto o = optimizer ? optimizers_.find(optimizer->id) : optimizers_.end(); o != optimizers_.end())
    o->second.dtypeReported = true;
}

// DL202 where PyTorch raises, at the unscale (an explicit unscale_() or
// step()'s own); DL209 once the step() uses the gradients (where CUDA's
// unscale kernel fails), reported at the scale() of their loss with that
// step() and an explicit unscale_() as notes. Once for the gradients of a
// scaled backward.
void ScalerProtocol::checkParameterDtype(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                                         ParameterCheck check, std::vector<Finding>& out) {
  const auto found = optimizers_.find(optimizer.id);
  if (found == optimizers_.end()) return;
  OptimizerFacts& facts = found->second;
  const auto dtype = facts.parameterDtype.single();
  if (dtype != ScalarType::Half && dtype != ScalarType::BFloat16) return;
  const bool half = dtype == ScalarType::Half;
  if (facts.dtypeReported || (!half && mayBeDisabled(scaler.id))) return;
  if (half ? !check.unscales : !check.steps) return;
  Finding f = makeFinding(
      half ? RuleId::DL202 : RuleId::DL209,
      half ? fmt::format("{} unscales the gradients of {}, whose parameters are Half: PyTorch raises 'Attempting to "
                         "unscale FP16 gradients.'; keep Float master parameters and use autocast instead of "
                         "converting the model",
                         scaler.name, optimizer.name)
           : fmt::format("{} unscales the gradients of {}, whose parameters are BFloat16: BFloat16 has Float's range "
                         "and needs no loss scaling (on CUDA the unscale kernel rejects BFloat16 gradients)",
                         scaler.name, optimizer.name),
      at);
  // BFloat16 gradients make CUDA's unscale kernel raise: more than advice.
  if (!half) f.severity = Severity::Warning;
  if (facts.parametersOrigin) f.notes.push_back(*facts.parametersOrigin);
  // As the BFloat16-autocast form: at the scale() of the loss, the step a note.
  if (!half && facts.scaledAt) {
    f.notes.push_back(Note{at, std::string(kStepsHere)});
    f.location = *facts.scaledAt;
  }
  if (!half) addNote(f, check.unscaledAt, "gradients unscaled here");
  if (!half) addScalerMadeNote(f, scaler.id);
  facts.dtypeReported = true;
  out.push_back(std::move(f));
}

void ScalerProtocol::unscale(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                             std::vector<Finding>& out, bool onceInItsLoop) {
  PairFacts& p = pair(scaler.id, optimizer.id);
  const bool sameUnscaleNextPass = onceInItsLoop && p.unscaledAt && p.unscaledAt->sameStart(at);
  if ((p.stages & kUnscaled) && !sameUnscaleNextPass) {
    Finding f = makeFinding(RuleId::DL201,
                            fmt::format("gradients of {} unscaled again before {}.update(): they are divided by the "
                                        "scale twice (PyTorch raises 'unscale_() has already been called on this "
                                        "optimizer since the last update()')",
                                        optimizer.name, scaler.name),
                            at);
    addNote(f, p.unscaledAt, "first unscale here");
    out.push_back(std::move(f));
  } else if ((p.stages & kStepped) && p.updateSkippedAt) {
    // The step of an iteration that left without update(): the cause is that
    // step's, not this unscale's.
    Finding f = makeFinding(RuleId::DL204,
                            fmt::format("{}.step({}) without {}.update() before the next iteration's unscale_(): the "
                                        "scale never adapts, and PyTorch raises 'unscale_() is being called after "
                                        "step().'",
                                        scaler.name, optimizer.name, scaler.name),
                            p.steppedAt.value_or(at));
    addNote(f, p.updateSkippedAt, "update() not reached on this path: control leaves the iteration here");
    addNote(f, at, "the next unscale_() here");
    out.push_back(std::move(f));
  } else if (p.stages & kStepped) {
    Finding f = makeFinding(RuleId::DL206,
                            fmt::format("unscale_() of {} after {}.step() and before update(): PyTorch raises "
                                        "'unscale_() is being called after step().'",
                                        optimizer.name, scaler.name),
                            at);
    addNote(f, p.steppedAt, "step() here");
    out.push_back(std::move(f));
  }
  checkParameterDtype(scaler, optimizer, at, ParameterCheck{.unscales = true}, out);
  if (auto known = scalers_.find(scaler.id); known != scalers_.end()) known->second.recordInfCheck();
  // No scaled backward since the last update, and an unscaled one: step() will use gradients divided by the scale.
  const OptimizerFacts* facts = this->optimizer(optimizer.id);
  const bool unscaledLoss = p.stages == kReady && facts && facts->grads == kUnscaledGrads &&
                            facts->unscaledBackwardAt && !mayBeDisabled(scaler.id);
  p.unscaledLossBackwardAt = unscaledLoss ? facts->unscaledBackwardAt : std::nullopt;
  p.stages = kUnscaled;
  p.unscaledAt = at;
  p.updateSkippedAt.reset();
  if (auto it = optimizers_.find(optimizer.id); it != optimizers_.end()) unscaledByScaler(it->second);
}

void ScalerProtocol::unscaleUnlessDone(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                                       std::vector<Finding>& out) {
  if (pair(scaler.id, optimizer.id).stages & (kUnscaled | kStepped)) return;
  unscale(scaler, optimizer, at, out);
}

void ScalerProtocol::step(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                          std::vector<Finding>& out, const std::optional<SourceLocation>& enclosingBranch) {
  PairFacts& p = pair(scaler.id, optimizer.id);
  const OptimizerFacts* facts = this->optimizer(optimizer.id);
  // A branch chose the backward on the unscaled loss, and this step follows it on every path.
  const std::optional<SourceLocation> branchChosePlain =
      facts && facts->grads == (kScaledGrads | kUnscaledGrads) && facts->branchPlainBackwardAt &&
              (!enclosingBranch || enclosingBranch->contains(*facts->branchPlainBackwardAt))
          ? facts->branchPlainBackwardAt
          : std::nullopt;
  // A backward on the unscaled loss right before is this step's cause, even
  // where an earlier iteration may have stepped without update().
  const bool unscaledBackward = facts && facts->grads == kUnscaledGrads && facts->unscaledBackwardAt;
  if ((p.stages & kStepped) && !((p.stages & kReady) && unscaledBackward)) {
    Finding f = makeFinding(RuleId::DL204,
                            fmt::format("{}.step({}) reached again without {}.update() since the previous step(): the "
                                        "scale never adapts, and after one overflow every step is skipped",
                                        scaler.name, optimizer.name, scaler.name),
                            at);
    addNote(f, p.steppedAt, "previous step() here");
    addNote(f, p.updateSkippedAt, "update() not reached on this path: control leaves the iteration here");
    out.push_back(std::move(f));
  } else if (const bool unscaledEarlier = p.stages == kUnscaled && p.unscaledLossBackwardAt;
             unscaledEarlier || (p.stages == kReady && branchChosePlain) ||
             ((p.stages & kReady) && !(p.stages & kUnscaled) && facts && facts->grads == kUnscaledGrads &&
              (p.stages == kReady || unscaledBackward))) {
    Finding f = makeFinding(
        RuleId::DL207,
        fmt::format("{}.step({}) but {}backward() ran on the unscaled loss: {} the "
                    "gradients by the scale (updates ~65536x too small); call "
                    "{}.scale(loss).backward()",
                    scaler.name, optimizer.name,
                    branchChosePlain && !unscaledEarlier ? "on one branch of this iteration " : "this iteration's ",
                    unscaledEarlier ? "its unscale_() divided" : "step() divides", scaler.name),
        at);
    addNote(f,
            unscaledEarlier    ? p.unscaledLossBackwardAt
            : branchChosePlain ? branchChosePlain
                               : facts->unscaledBackwardAt,
            "backward() on the unscaled loss here");
    if (unscaledEarlier) addNote(f, p.unscaledAt, "gradients unscaled here");
    out.push_back(std::move(f));
  }
  const std::optional<SourceLocation> unscaledAt = p.stages & kUnscaled ? p.unscaledAt : std::nullopt;
  reportBFloat16Loss(scaler, &optimizer, at, unscaledAt, out);
  // step() unscales a READY optimizer's gradients itself.
  checkParameterDtype(scaler, optimizer, at, ParameterCheck{p.stages == kReady, true, unscaledAt}, out);
  p.stages = kStepped;
  p.steppedAt = at;
  p.updateSkippedAt.reset();
  markStepped(scaler);
  if (auto o = optimizers_.find(optimizer.id); o != optimizers_.end()) unscaledByScaler(o->second);
}

void ScalerProtocol::optimizerSteppedByScaler(const ObjectRef& optimizer, const SourceLocation& at) {
  if (auto o = optimizers_.find(optimizer.id); o != optimizers_.end()) o->second.steppedByScalerAt = at;
}

void ScalerProtocol::stepWithoutGradients(const ObjectRef& scaler, const ObjectRef& optimizer, const SourceLocation& at,
                                          std::vector<Finding>& out, const std::optional<SourceLocation>& frozenAt) {
  out.push_back(makeFinding(RuleId::DL207,
                            fmt::format("{}.step({}) but none of the parameters of {} has a gradient: this "
                                        "iteration's backward did not reach them, and PyTorch raises 'No inf checks "
                                        "were recorded for this optimizer.'; step only the optimizers the scaled "
                                        "loss reaches",
                                        scaler.name, optimizer.name, optimizer.name),
                            at));
  if (frozenAt) out.back().notes.push_back(Note{*frozenAt, "its parameters were frozen here, so none gets a gradient"});
  // No gradient, nothing unscaled: not DL202 or DL209 for their dtype.
  if (auto o = optimizers_.find(optimizer.id); o != optimizers_.end()) o->second.dtypeReported = true;
}

void ScalerProtocol::parametersFrozen(const ObjectRef& optimizer, const SourceLocation& at) {
  if (auto o = optimizers_.find(optimizer.id); o != optimizers_.end()) o->second.frozenAt = at;
}

void ScalerProtocol::markStepped(const ObjectRef& scaler) { scalerFacts(scaler).recordInfCheck(); }

void ScalerProtocol::stepUnidentifiedOptimizer(const ObjectRef& scaler, const SourceLocation& at,
                                               std::vector<Finding>& out) {
  reportBFloat16Loss(scaler, nullptr, at, std::nullopt, out);
  markStepped(scaler);
}

void ScalerProtocol::unscaleUnidentifiedOptimizer(const ObjectRef& scaler, const SourceLocation& at,
                                                  std::vector<Finding>& out) {
  reportBFloat16Loss(scaler, nullptr, at, std::nullopt, out);  // no step() of it to wait for
  ScalerFacts& checked = scalerFacts(scaler);
  checked.mayHaveCheckedUnidentified = true;
  checked.recordInfCheck();
  // The gradients it may have unscaled (`for (auto* o : optimizers) scaler.unscale_(*o);`) may hold either.
  for (auto& [id, facts] : optimizers_)
    if ((facts.grads & kScaledGrads) && (!facts.scaledBy || facts.scaledBy == scaler.id)) facts.grads |= kUnscaledGrads;
}

void ScalerProtocol::stepSeenByParameterUpdate(const ObjectRef& scaler, const ObjectRef& optimizer,
                                               const SourceLocation& at) {
  PairFacts& p = pair(scaler.id, optimizer.id);
  p.stages = kStepped;
  p.steppedAt = at;
  markStepped(scaler);
}

void ScalerProtocol::beginPass(size_t level) {
  for (auto& [id, facts] : scalers_)
    if (facts.updatedInPassOf && *facts.updatedInPassOf >= level) {
      facts.updatedInPassOf.reset();
      facts.passUpdateAt.reset();
    }
}

void ScalerProtocol::update(const ObjectRef& scaler, const SourceLocation& at, std::vector<Finding>& out,
                            std::optional<size_t> passLevel) {
  // An unknown scaler may have stepped: nothing to report about it. An
  // unscale_() records inf checks as step() does: update() after one, with
  // the optimizer stepped directly (DL208), raises nothing. One path without
  // either is enough: an update() outside the `if` that steps every N-th
  // micro-batch raises on the first one that does not.
  ScalerFacts& facts = scalerFacts(scaler);
  const bool noInfCheckReported = facts.mayHaveNoInfCheck;
  auto report = [&](std::string message, const std::optional<SourceLocation>& earlier, std::string note) {
    Finding f = makeFinding(RuleId::DL210, std::move(message), at);
    addNote(f, earlier, std::move(note));
    out.push_back(std::move(f));
  };
  if (facts.mayHaveNoInfCheck) {
    report(fmt::format("{}.update() with no step() since {}: PyTorch raises 'No inf checks were recorded prior to "
                       "update.'",
                       scaler.name, facts.lastUpdateAt ? "the last update()" : "the scaler was created"),
           facts.lastUpdateAt, "last update() here");
  } else if (facts.lastUpdateAt && facts.mayHaveStaleStep && facts.backwardBeforeLastUpdate &&
             !facts.lastUpdateReported) {
    // `for (opt : optimizers) { scaler.step(opt); scaler.update(); }`
    report(fmt::format("{}.update() a second time in one iteration: no backward() since the last update(), so the "
                       "step() between unscaled gradients the old scale multiplied; step every optimizer, then "
                       "update() once",
                       scaler.name),
           facts.lastUpdateAt, "last update() here");
  } else if (passLevel && facts.updatedInPassOf == passLevel && facts.passUpdateAt) {
    // A GAN's d_step() and g_step() each ending in update(), called in one iteration.
    report(fmt::format("{}.update() a second time in one iteration: the scale is updated once per optimizer instead "
                       "of once per iteration, and one optimizer's inf backs it off again; step every optimizer, "
                       "then update() once",
                       scaler.name),
           facts.passUpdateAt, "first update() of this iteration here");
  }
  if (passLevel) {
    facts.updatedInPassOf = passLevel;
    facts.passUpdateAt = at;
  }
  // unscale_(), then the optimizer's own step(), then update(): the step
  // used gradients an inf/NaN may be in, which update() now finds.
  for (const auto& [key, p] : pairs_) {
    if (key.first != scaler.id || p.stages != kUnscaled || !p.steppedDirectlyAt) continue;
    const OptimizerFacts* stepped = optimizer(key.second);
    const std::string name = stepped ? stepped->name : "the optimizer";
    Finding f = makeFinding(RuleId::DL208,
                            fmt::format("{}.step() called directly after {}.unscale_({}) and before {}.update(): an "
                                        "inf/NaN in the gradients is stepped with instead of skipped; call {}.step({})",
                                        name, scaler.name, name, scaler.name, scaler.name, name),
                            *p.steppedDirectlyAt);
    addNote(f, p.unscaledAt, "unscale_() here");
    out.push_back(std::move(f));
  }
  bfloat16Losses_.erase(scaler.id);  // its gradients were not unscaled on this path: the scaler did no work on them
  facts.mayHaveNoInfCheck = true;
  facts.mayHaveInfCheck = false;
  facts.lastUpdateReported = noInfCheckReported;
  facts.backwardBeforeLastUpdate = facts.mayHaveBackward;
  facts.mayHaveNoBackward = true;
  facts.mayHaveBackward = facts.mayHaveStaleStep = false;
  facts.lastUpdateAt = at;
  for (auto& [key, p] : pairs_)
    if (key.first == scaler.id) p = PairFacts{};
}

void ScalerProtocol::updateFromInfChecks(const ObjectRef& scaler, const SourceLocation& at, std::vector<Finding>& out) {
  const auto known = scalers_.find(scaler.id);
  const bool unscaled = std::any_of(pairs_.begin(), pairs_.end(), [&](const auto& entry) {
    return entry.first.first == scaler.id && entry.second.unscaledAt.has_value();
  });
  // An inf check on every path since the last update: a path with none (the overflow branch that already
  // updated, then the unconditional update) backs the scale off twice on one found_inf.
  if (known != scalers_.end() && known->second.lastUpdateAt &&
      (known->second.mayHaveNoInfCheck || !(unscaled || known->second.mayHaveCheckedUnidentified))) {
    Finding f = makeFinding(RuleId::DL210,
                            fmt::format("{} updated with no inf check (unscale) since its last update on a path: "
                                        "the same found_inf is applied again, so the scale backs off (or grows) twice "
                                        "for one step",
                                        scaler.name),
                            at);
    addNote(f, known->second.lastUpdateAt, "last update here");
    out.push_back(std::move(f));
  }
  // Forgetting the pairs (a fresh pair is READY) also bounds their number when
  // the front end knows optimizers by gradients that are new every step.
  declareScaler(scaler);
  scalers_[scaler.id].lastUpdateAt = at;  // and no inf check since (declareScaler's facts)
}

void ScalerProtocol::optimizerStep(const ObjectRef& optimizer, const SourceLocation& at, std::vector<Finding>& out) {
  const OptimizerFacts* facts = this->optimizer(optimizer.id);
  if (!facts) return;
  if (facts->steppedByScalerAt) {
    Finding f = makeFinding(RuleId::DL208,
                            fmt::format("{}.step() called again after the scaler stepped {} on the same gradients: "
                                        "the parameters are updated twice, and on the steps the scaler skips "
                                        "(inf/NaN gradients) this one applies them; remove it",
                                        optimizer.name, optimizer.name),
                            at);
    addNote(f, facts->steppedByScalerAt, "scaler's step() here");
    out.push_back(std::move(f));
    return;
  }
  // Unscaled by a scaler that expects its step(): decided at its update(),
  // which uses the inf check this step ignored.
  if (facts->grads == kUnscaledGrads)
    for (auto& [key, p] : pairs_)
      if (key.second == optimizer.id && p.stages == kUnscaled && p.unscaledAt && !p.steppedDirectlyAt)
        p.steppedDirectlyAt = at;
  if (!onlyScaledGrads(facts->grads)) return;
  Finding f = makeFinding(RuleId::DL208,
                          fmt::format("{}.step() called directly on gradients of a scaled loss: it steps with "
                                      "gradients multiplied by the scale and skips the inf/NaN check; call "
                                      "scaler.step({}) and scaler.update()",
                                      optimizer.name, optimizer.name),
                          at);
  addNote(f, facts->scaledBackwardAt, "scaled backward() here");
  out.push_back(std::move(f));
}

namespace {

// DL205's fix: the one optimizer's gradients unscaled by the scaler that
// scaled them, before the clip: the block's own later unscale moved up, or a
// new one (never a second unscale: DL201).
std::optional<FixIt> unscaleFix(const UnscaleSpelling& spelling, uintptr_t optimizerId, const OptimizerFacts& facts) {
  if (!facts.scaledBy || !optimizerId) return std::nullopt;
  for (const LaterUnscale& later : spelling.laterUnscales)
    if (later.scaler == facts.scaledBy && later.optimizer == optimizerId) {
      SourceLocation lineStart = spelling.statement;
      lineStart.column = 1;
      return FixIt{"move the unscale on line " + std::to_string(later.lines.line) + " before the clip",
                   {insertBefore(lineStart, later.text), replace(later.lines, "")}};
    }
  if (spelling.scalerPassedOn) return std::nullopt;
  const auto scaler = spelling.scalerCall(facts.scaledBy);
  const auto optimizer = spelling.optimizer(optimizerId);
  if (!scaler || !optimizer) return std::nullopt;
  const std::string call = fmt::format("{}{}({});", *scaler, spelling.unscaleMethod, *optimizer);
  return FixIt{fmt::format("insert '{}' before the clip", call),
               {insertBefore(spelling.statement, call + "\n" + spelling.indentation)}};
}

}  // namespace

void ScalerProtocol::clip(const ObjectRef* optimizer, uintptr_t module, const SourceLocation& at,
                          std::vector<Finding>& out, const UnscaleSpelling* spelling) {
  std::vector<std::pair<uintptr_t, const OptimizerFacts*>> candidates;
  if (optimizer) {
    if (const OptimizerFacts* facts = this->optimizer(optimizer->id)) candidates.emplace_back(optimizer->id, facts);
  } else {
    for (const auto& [id, facts] : optimizers_)
      if (module && facts.module == module) candidates.emplace_back(id, &facts);
    if (candidates.empty()) {
      // Whose gradients these are is not known: an optimizer the front end
      // could not follow (one passed into a trainer) may hold them, unscaled.
      for (const auto& [key, p] : pairs_)
        if ((p.stages & kUnscaled) && !optimizers_.count(key.second)) return;
      for (const auto& [id, facts] : optimizers_) candidates.emplace_back(id, &facts);
    }
  }
  if (candidates.empty()) return;
  // Reported when every path that made gradients made scaled ones: a path
  // with none since zero_grad() (an accumulation loop run zero times) clips nothing.
  for (const auto& [id, facts] : candidates)
    if (!onlyScaledGrads(facts->grads)) return;
  Finding f = makeFinding(RuleId::DL205,
                          "gradients clipped while they hold the scaled loss's gradients: the threshold applies to "
                          "gradients multiplied by the scale; call scaler.unscale_(optimizer) before clipping",
                          at);
  addNote(f, candidates.front().second->scaledBackwardAt, "scaled backward() here");
  if (spelling && candidates.size() == 1)
    f.fix = unscaleFix(*spelling, candidates.front().first, *candidates.front().second);
  out.push_back(std::move(f));
}

void ScalerProtocol::zeroGrad(const ObjectRef& optimizer) {
  if (auto it = optimizers_.find(optimizer.id); it != optimizers_.end()) {
    it->second.grads = kNoGrads;
    it->second.plainBackwardAt.reset();
    it->second.branchPlainBackwardAt.reset();
    it->second.steppedByScalerAt.reset();
  }
}

void ScalerProtocol::leaveLoop() {
  for (auto& [id, facts] : scalers_)
    if (facts.mayHaveInfCheck) facts.mayHaveNoInfCheck = false;
}

void ScalerProtocol::leaveIteration(const SourceLocation& at) {
  for (auto& [key, p] : pairs_)
    if (p.stages & kStepped) p.updateSkippedAt = at;
}

void ScalerProtocol::forgetScaler(uintptr_t scaler) {
  forgotten_.insert(scaler);
  scalers_.erase(scaler);
  erasePairsOf(scaler);
}

void ScalerProtocol::mayHaveBeenUnscaledElsewhere(const ObjectRef& optimizer) {
  if (auto o = optimizers_.find(optimizer.id); o != optimizers_.end()) o->second.dtypeReported = true;
}

void ScalerProtocol::forgetDestroyed(uintptr_t object) {
  scalers_.erase(object);
  optimizers_.erase(object);
  for (auto it = pairs_.begin(); it != pairs_.end();)
    it = it->first.first == object || it->first.second == object ? pairs_.erase(it) : std::next(it);
}

void ScalerProtocol::forgetAll() {
  for (const auto& [id, facts] : scalers_) forgotten_.insert(id);
  for (const auto& [key, pair] : pairs_) forgotten_.insert(key.first);
  scalers_.clear();
  pairs_.clear();
  for (auto& [id, facts] : optimizers_) {
    facts.grads = kNoGrads | kScaledGrads | kUnscaledGrads;
    facts.scaledBackwardAt.reset();
    facts.scaledAt.reset();
    facts.unscaledBackwardAt.reset();
    facts.plainBackwardAt.reset();
    facts.branchPlainBackwardAt.reset();
    facts.steppedByScalerAt.reset();
  }
}

void ScalerProtocol::join(const ScalerProtocol& other) {
  for (const auto& [id, theirs] : other.scalers_) {
    auto [it, inserted] = scalers_.try_emplace(id, theirs);
    if (inserted) continue;
    it->second.mayHaveNoInfCheck |= theirs.mayHaveNoInfCheck;
    it->second.mayHaveInfCheck |= theirs.mayHaveInfCheck;
    it->second.mayHaveNoBackward |= theirs.mayHaveNoBackward;
    it->second.mayHaveStaleStep |= theirs.mayHaveStaleStep;
    it->second.mayHaveBackward |= theirs.mayHaveBackward;
    it->second.backwardBeforeLastUpdate |= theirs.backwardBeforeLastUpdate;
    it->second.lastUpdateReported |= theirs.lastUpdateReported;
    keepFirst(it->second.lastUpdateAt, theirs.lastUpdateAt);
    it->second.mayHaveCheckedUnidentified |= theirs.mayHaveCheckedUnidentified;
    it->second.mayBeDisabled |= theirs.mayBeDisabled;
    it->second.disabled &= theirs.disabled;
    // Updated on every path of this pass only where both paths updated.
    if (it->second.updatedInPassOf != theirs.updatedInPassOf) {
      it->second.updatedInPassOf.reset();
      it->second.passUpdateAt.reset();
    }
  }
  for (const auto& [id, theirs] : other.optimizers_) {
    auto [it, inserted] = optimizers_.try_emplace(id, theirs);
    if (inserted) continue;
    OptimizerFacts& mine = it->second;
    // One path's backward scaled the loss, the other's did not.
    if (mine.grads == kScaledGrads && theirs.grads == kUnscaledGrads && theirs.plainBackwardAt)
      mine.branchPlainBackwardAt = theirs.plainBackwardAt;
    else if (mine.grads == kUnscaledGrads && theirs.grads == kScaledGrads && mine.plainBackwardAt)
      mine.branchPlainBackwardAt = mine.plainBackwardAt;
    else keepFirst(mine.branchPlainBackwardAt, theirs.branchPlainBackwardAt);
    if (!theirs.plainBackwardAt) mine.plainBackwardAt.reset();  // on every path
    mine.grads |= theirs.grads;
    keepFirst(mine.scaledBackwardAt, theirs.scaledBackwardAt);
    keepFirst(mine.scaledAt, theirs.scaledAt);
    keepFirst(mine.unscaledBackwardAt, theirs.unscaledBackwardAt);
    mine.parameterDtype = mine.parameterDtype.join(theirs.parameterDtype);
    keepFirst(mine.parametersOrigin, theirs.parametersOrigin);
    if (!theirs.steppedByScalerAt) mine.steppedByScalerAt.reset();  // reported only where every path stepped
    if (!theirs.frozenAt) mine.frozenAt.reset();  // likewise
  }
  // A pair missing on one side is at that side's default: READY for a known
  // scaler, nothing known (0) otherwise. Stages are the possibilities of
  // either side, so "unknown" adds none.
  auto defaultStages = [](const ScalerProtocol& side, uintptr_t scaler) -> uint8_t {
    return side.scalers_.count(scaler) ? kReady : 0;
  };
  std::map<std::pair<uintptr_t, uintptr_t>, PairFacts> joined;
  for (const auto& [key, mine] : pairs_) {
    PairFacts p = mine;
    auto it = other.pairs_.find(key);
    p.stages |= it != other.pairs_.end() ? it->second.stages : defaultStages(other, key.first);
    if (it != other.pairs_.end()) {
      keepFirst(p.unscaledAt, it->second.unscaledAt);
      keepFirst(p.steppedAt, it->second.steppedAt);
      keepFirst(p.updateSkippedAt, it->second.updateSkippedAt);
      // Reported only where every path stepped the optimizer directly.
      if (!it->second.steppedDirectlyAt) p.steppedDirectlyAt.reset();
      if (!it->second.unscaledLossBackwardAt) p.unscaledLossBackwardAt.reset();
    } else {
      p.steppedDirectlyAt.reset();
      p.unscaledLossBackwardAt.reset();
    }
    joined[key] = p;
  }
  for (const auto& [key, theirs] : other.pairs_) {
    if (pairs_.count(key)) continue;
    PairFacts p = theirs;
    p.stages |= defaultStages(*this, key.first);
    p.steppedDirectlyAt.reset();
    p.unscaledLossBackwardAt.reset();
    joined[key] = p;
  }
  pairs_ = std::move(joined);
  bfloat16Losses_.insert(other.bfloat16Losses_.begin(), other.bfloat16Losses_.end());
  forgotten_.insert(other.forgotten_.begin(), other.forgotten_.end());
  for (uintptr_t scaler : std::set<uintptr_t>(forgotten_)) forgetScaler(scaler);
}

bool ScalerProtocol::mayBeDisabled(uintptr_t scaler) const {
  const auto it = scalers_.find(scaler);
  return it != scalers_.end() && it->second.mayBeDisabled;
}

bool ScalerProtocol::disabled(uintptr_t scaler) const {
  const auto it = scalers_.find(scaler);
  return it != scalers_.end() && it->second.disabled;
}

bool ScalerProtocol::operator==(const ScalerProtocol& other) const { return key() == other.key(); }

std::string ScalerProtocol::key() const {
  std::string k;
  for (const auto& [id, s] : scalers_)
    k += fmt::format("s{:x}:{}{}{}{}{}{}{}{}{}{}{}{};", id, s.mayHaveNoInfCheck, s.mayHaveInfCheck, s.mayHaveNoBackward,
                     s.mayHaveStaleStep, s.lastUpdateReported, s.mayHaveBackward, s.backwardBeforeLastUpdate,
                     s.lastUpdateAt.has_value(), s.mayHaveCheckedUnidentified, s.mayBeDisabled, s.disabled,
                     s.updatedInPassOf ? int(*s.updatedInPassOf) : -1);
  for (const auto& [id, o] : optimizers_)
    k += fmt::format("o{:x}:{}{}{}{};", id, int(o.grads), o.parameterDtype.toString(), o.steppedByScalerAt.has_value(),
                     o.frozenAt.has_value());
  for (const auto& [key, p] : pairs_)
    k += fmt::format("p{:x}.{:x}:{}{}{};", key.first, key.second, int(p.stages), p.updateSkippedAt.has_value(),
                     p.steppedDirectlyAt.has_value());
  for (uintptr_t id : forgotten_) k += fmt::format("f{:x};", id);
  for (const auto& [id, loss] : bfloat16Losses_) k += fmt::format("b{:x};", id);
  return k;
}

void AmpBackwardTrace::backward(Loss loss, const SourceLocation& at) {
  if (loss == Loss::Unscaled) unscaledBackwardAt_ = at;
  else scaledOrUnknownSinceUpdate_ = true;
}

void AmpBackwardTrace::update() {
  scaledOrUnknownSinceUpdate_ = false;
  unscaledBackwardAt_.reset();
}

void AmpBackwardTrace::step(const ObjectRef& optimizer, const SourceLocation& at, std::vector<Finding>& out) {
  if (scaledOrUnknownSinceUpdate_ || !unscaledBackwardAt_) return;
  Finding f = makeFinding(RuleId::DL207,
                          fmt::format("step of {} after an unscale, but no backward() since the last scale update "
                                      "ran on a loss multiplied by the scale: the unscale divided unscaled "
                                      "gradients by the scale (updates ~65536x too small); backward() on loss * scale",
                                      optimizer.name),
                          at);
  addNote(f, unscaledBackwardAt_, "backward() on the unscaled loss here");
  out.push_back(std::move(f));
}

std::optional<DtypeSet> parameterDtypeFromUnscaledGradients(ScalarType gradients) {
  if (gradients == ScalarType::Half) return DtypeSet(ScalarType::Half);
  return std::nullopt;
}

}  // namespace dtype_lint
