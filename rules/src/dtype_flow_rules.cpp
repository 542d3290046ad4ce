#include "dtype_lint/dtype_flow_rules.h"

#include <fmt/format.h>

#include <algorithm>

#include "dtype_lint/source_text.h"

namespace dtype_lint {
namespace {

// Where the operand got its dtype; skipped when that is the finding's own line.
void addOrigin(Finding& f, const Operand& operand) {
  if (!operand.origin || !operand.origin->location.valid()) return;
  const SourceLocation& at = operand.origin->location;
  if (at.file == f.location.file && at.line == f.location.line) return;
  for (const Note& n : f.notes)
    if (n.location.file == at.file && n.location.line == at.line && n.message == operand.origin->message) return;
  f.notes.insert(f.notes.begin(), *operand.origin);
}

// Every operand has one known floating dtype.
bool allSingleFloating(const std::vector<Operand>& operands) {
  for (const Operand& o : operands)
    if (!o.dtype.single() || !o.dtype.allFloating()) return false;
  return !operands.empty();
}

DtypeSet promoteAll(const std::vector<Operand>& operands) {
  DtypeSet out = operands.front().dtype;
  for (size_t i = 1; i < operands.size(); ++i) out = out.promoteWith(operands[i].dtype);
  return out;
}

// The op an out= or in-place variant computes: "addmm" of "addmm_out" and "addmm_".
std::optional<std::string_view> variantBase(std::string_view op) {
  const auto out = outVariantBase(op);
  return out ? out : inPlaceBase(op);
}

// A destination that cannot hold the computed dtype without rounding.
bool narrows(ScalarType destination, ScalarType computed) { return promote(destination, computed) != destination; }

}  // namespace

Tristate DtypeFlowRules::autocastCasts(std::string_view op, const AutocastState& state) const {
  bool unknown = false;
  for (auto [device, autocast] : {std::pair{Device::CPU, &state.cpu}, std::pair{Device::CUDA, &state.cuda}}) {
    if (autocast->enabled == Tristate::Off) continue;
    if (autocast->enabled == Tristate::Unknown) {
      unknown = true;
      continue;
    }
    if (autocastPolicy(op, device, torch_) != AutocastPolicy::None) return Tristate::On;
  }
  return unknown ? Tristate::Unknown : Tristate::Off;
}

void DtypeFlowRules::onOp(const OpEvent& event, std::vector<Finding>& out) const {
  if (event.op == "backward") return checkHalfLossBackward(event, out);
  if (const auto base = variantBase(event.op)) {
    // addmm_/addmm(out=)/baddbmm_...: matrices of different dtypes are
    // DL101; matrices that agree with each other but not with the
    // destination (an in-place op's self, a Float accumulator) are DL102.
    if (isMatmulFamily(*base) && mismatchedOperands(event)) return checkMixedMatmul(event, out);
    return checkOutDtype(event, out);
  }
  if (isMatmulFamily(event.op)) checkMixedMatmul(event, out);
  if (isPrecisionSensitive(event.op)) checkLowPrecisionReduction(event, out);
  checkCastInsideAutocast(event, out);
}

// DL104: an operand cast explicitly inside an autocast region, right before
// an op autocast casts anyway, where the cast does not do what it says: to
// Float before a lower-precision op (autocast undoes it), or to a lower
// precision before an op autocast runs in Float (a lossy round-trip). A cast
// to autocast's own dtype, a no-op, or an upcast before a Float op is not one.
void DtypeFlowRules::checkCastInsideAutocast(const OpEvent& event, std::vector<Finding>& out) const {
  if (event.inCustomBackward) return;
  for (auto [device, autocast] :
       {std::pair{Device::CPU, &event.autocast.cpu}, std::pair{Device::CUDA, &event.autocast.cuda}}) {
    // Autocast's dtype may be unknown (a module's member): it is Half or
    // BFloat16 whenever autocast runs at all, never Float.
    const auto lower = autocast->dtype.single();
    if (autocast->enabled != Tristate::On ||
        (!lower && !autocast->dtype.isUnknown() && !autocast->dtype.allLowPrecisionFloat()))
      continue;
    const std::string_view lowerName = lower ? name(*lower) : std::string_view("its lower precision");
    const AutocastPolicy policy = autocastPolicy(event.op, device, torch_);
    for (const Operand& input : event.inputs) {
      if (!input.castInAutocast) continue;
      const ScalarType to = input.castInAutocast->to;
      const auto from = input.castInAutocast->from.single();
      if (from == to) continue;  // a no-op
      std::string message;
      if (policy == AutocastPolicy::LowerPrecision && to == ScalarType::Float)
        message = fmt::format("{} is cast to Float by hand inside an autocast region, but autocast casts the operands "
                              "of {} to {} anyway: the cast is undone; to run {} in Float, disable autocast around it",
                              input.description, event.op, lowerName, event.op);
      else if (policy == AutocastPolicy::Fp32 && (to == ScalarType::Half || to == ScalarType::BFloat16)) {
        // Values already in low precision lose nothing; of unknown ones, the cast is at best a no-op.
        if (from && from != ScalarType::Float && from != ScalarType::Double) continue;
        message = from ? fmt::format("{} is cast from {} to {} by hand inside an autocast region before {}, which "
                                     "autocast runs in Float: the values lose their precision in the round-trip; "
                                     "remove the cast",
                                     input.description, name(*from), name(to), event.op)
                       : fmt::format("{} is cast to {} by hand inside an autocast region before {}, which autocast "
                                     "runs in Float: the cast is at best a no-op, and Float values lose their "
                                     "precision in the round-trip; remove the cast",
                                     input.description, name(to), event.op);
      }
      if (message.empty()) continue;
      Finding f = makeFinding(RuleId::DL104, std::move(message), input.castInAutocast->at, event.callChain);
      f.notes.push_back({event.location, fmt::format("autocast casts the operands of {} here", event.op)});
      out.push_back(std::move(f));
    }
    return;  // one device's autocast decides
  }
}

std::optional<std::pair<const Operand*, const Operand*>>
DtypeFlowRules::mismatchedOperands(const OpEvent& event) const {
  // The operands the op reads; an in-place op's self is its destination (DL102's).
  for (size_t i = 0; i < event.inputs.size(); ++i)
    for (size_t j = i + 1; j < event.inputs.size(); ++j)
      if (definitelyDifferentFloating(event.inputs[i].dtype, event.inputs[j].dtype))
        return std::pair{&event.inputs[i], &event.inputs[j]};
  return std::nullopt;
}

bool DtypeFlowRules::raises(const OpEvent& event) const {
  return isMatmulFamily(variantBase(event.op).value_or(event.op)) && mismatchedOperands(event) &&
         (event.inCustomBackward || autocastCasts(event.op, event.autocast) == Tristate::Off);
}

namespace {

bool contains(const SourceLocation& range, const SourceLocation& inner) {
  auto before = [](unsigned l1, unsigned c1, unsigned l2, unsigned c2) { return l1 < l2 || (l1 == l2 && c1 <= c2); };
  return range.file == inner.file && before(range.line, range.column, inner.line, inner.column) &&
         before(inner.endLine, inner.endColumn, range.endLine, range.endColumn);
}

// The operand's dtype constant, when the op's own expression casts it (or
// creates it) there: `fc(x.to(torch::kHalf))`.
const SourceLocation* castInTheOp(const OpEvent& event, const Operand& operand) {
  const auto& constant = operand.dtypeConstant;
  if (!constant || !operand.origin || operand.origin->location.line != constant->line ||
      operand.origin->location.column != constant->column || !contains(event.location, *constant))
    return nullptr;
  return &*constant;
}

// DL101's fix, where one operand is cast in the op's own expression: cast it
// to the other operand's dtype instead.
std::optional<FixIt> castFix(const OpEvent& event, const Operand& first, const Operand& second) {
  const SourceLocation* firstCast = castInTheOp(event, first);
  const SourceLocation* secondCast = castInTheOp(event, second);
  if (!firstCast == !secondCast) return std::nullopt;  // neither, or both: which one to change is a choice
  const auto target = (firstCast ? second : first).dtype.single();
  if (!target) return std::nullopt;
  const std::string spelling = fmt::format("torch::k{}", name(*target));
  return FixIt{fmt::format("cast {} to {} instead", (firstCast ? first : second).description, spelling),
               {replace(firstCast ? *firstCast : *secondCast, spelling)}};
}

// DL105's fix: the op computes on its input upcast to Float. Its result is
// cast back to the input's dtype, so that nothing after it changes, unless it
// is a scalar (a loss, a full reduction) that is better kept in Float.
std::optional<FixIt> upcastFix(const OpEvent& event, const Operand& input) {
  const auto dtype = input.dtype.single();
  if (!dtype || !input.expression || !event.writtenInFile) return std::nullopt;
  std::vector<Edit> edits;
  if (const SourceLocation* cast = castInTheOp(event, input)) {
    edits.push_back(replace(*cast, "torch::kFloat"));  // x.to(kHalf) in the op itself: cast to Float instead
  } else {
    if (input.needsParentheses) edits.push_back(insertBefore(*input.expression, "("));
    edits.push_back(
        insertAfter(*input.expression, std::string(input.needsParentheses ? ")" : "") + ".to(torch::kFloat)"));
  }
  const bool scalar = event.reducesAllDims || isLoss(event.op) || event.resultFullyReduced;
  if (!scalar) edits.push_back(insertAfter(event.location, fmt::format(".to(torch::k{})", name(*dtype))));
  return FixIt{fmt::format("compute '{}' on {} upcast to Float{}", event.op, input.description,
                           scalar ? "" : fmt::format(" and cast its result back to {}", name(*dtype))),
               std::move(edits)};
}

}  // namespace

void DtypeFlowRules::checkMixedMatmul(const OpEvent& event, std::vector<Finding>& out) const {
  const auto mismatch = mismatchedOperands(event);
  if (!mismatch) return;
  const auto [first, second] = *mismatch;

  if (event.inCustomBackward) {
    // Backward does not run under the forward's autocast: only under one it
    // turns on itself (Python's custom_bwd re-enters the forward's), which casts.
    if (autocastCasts(event.op, event.autocast) == Tristate::On) return;
    const RuleId rule = event.forwardUnderAutocast ? RuleId::DL103 : RuleId::DL101;
    Finding f =
        makeFinding(rule,
                    fmt::format("'{}' in a custom autograd backward on operands of different dtypes ({}: {}, {}: {}); "
                                "backward does not run under autocast{}",
                                event.op, first->description, first->dtype.toString(), second->description,
                                second->dtype.toString(),
                                event.forwardUnderAutocast ? ", which reconciled these dtypes in forward" : ""),
                    event.location, event.callChain);
    addOrigin(f, *second);
    addOrigin(f, *first);
    if (event.forwardUnderAutocast) f.notes.push_back(*event.forwardUnderAutocast);
    out.push_back(std::move(f));
    return;
  }

  const Tristate casts = autocastCasts(event.op, event.autocast);
  if (casts != Tristate::Off) return;
  std::string where = event.autocast.anyOn()
                          ? fmt::format("inside an autocast region that does not cast '{}'", event.op)
                          : "outside autocast";
  // A user module called with an input of another dtype than its parameters:
  // the call is wrong, not the module's code every caller shares.
  const auto call = event.operandsChosenByCall;
  const bool atCall = call && *call < event.callChain.size();
  std::vector<Note> chain = event.callChain;
  if (atCall) chain.erase(chain.begin() + *call);
  Finding f = makeFinding(RuleId::DL101,
                          fmt::format("'{}'{} on operands of different dtypes {} ({}: {}, {}: {})", event.op,
                                      atCall ? " in the module called here" : "", where, first->description,
                                      first->dtype.toString(), second->description, second->dtype.toString()),
                          atCall ? event.callChain[*call].location : event.location, std::move(chain));
  addOrigin(f, *second);
  addOrigin(f, *first);
  if (atCall)
    f.notes.insert(f.notes.begin(), Note{event.location, fmt::format("'{}' is here, in the module called", event.op)});
  else f.fix = castFix(event, *first, *second);
  out.push_back(std::move(f));
}

void DtypeFlowRules::checkOutDtype(const OpEvent& event, std::vector<Finding>& out) const {
  if (!event.destination || event.inputs.empty()) return;
  const Operand& destination = *event.destination;
  const auto destType = destination.dtype.single();
  const bool isOut = outVariantBase(event.op).has_value();
  const std::string_view base = isOut ? *outVariantBase(event.op) : *inPlaceBase(event.op);
  // index_add_(dim, index, source): the Long index is no operand whose dtype
  // meets self's (the front ends leave self out of such an op's inputs).
  std::vector<Operand> read = event.inputs;
  if (copiesSourceExactly(base))
    std::erase_if(read, [](const Operand& o) { return o.dtype.single() && !isFloating(*o.dtype.single()); });
  if (!destType || !isFloating(*destType) || read.empty() || !allSingleFloating(read)) return;
  const ScalarType computed = *promoteAll(read).single();

  // Matmul-family kernels and index/scatter copies check the destination
  // dtype exactly; elementwise kernels cast into it, which loses information
  // when it narrows, and silently keeps the inputs' precision when an out=
  // arithmetic widens.
  const bool exact = isMatmulFamily(base) || copiesSourceExactly(base);
  const bool widenedTooLate = isOut && computesInInputDtype(base) && computed != *destType;
  if (exact ? computed == *destType : !narrows(*destType, computed) && !widenedTooLate) return;
  if (!isOut && event.issuedByLibraryModule && event.issuedByLibraryModule()) return;

  std::string message;
  if (isOut && !exact && !narrows(*destType, computed))
    message = fmt::format("'{}' computes in {} and only then widens into the {} destination {}: the result has {} "
                          "precision; convert the inputs to {} first",
                          event.op, name(computed), name(*destType), destination.description, name(computed),
                          name(*destType));
  else if (isOut)
    message = fmt::format("'{}' writes a {} result into a {} destination {}; out= variants are never autocast",
                          event.op, name(computed), name(*destType), destination.description);
  else if (copiesSourceExactly(base))
    message = fmt::format("'{}' writes a {} source into {}, which is {}: PyTorch raises unless the source has "
                          "self's dtype; convert the source to {}",
                          event.op, name(computed), destination.description, name(*destType), name(*destType));
  else
    message = fmt::format("in-place '{}' computes {} but its destination {} is {}{}", event.op, name(computed),
                          destination.description, name(*destType),
                          exact ? "; in-place ops are never autocast"
                                : ": the result is rounded to " + std::string(name(*destType)));
  Finding f = makeFinding(RuleId::DL102, std::move(message), event.location, event.callChain);
  for (const Operand& input : read)
    if (input.dtype.single() == computed) {
      addOrigin(f, input);
      break;
    }
  addOrigin(f, destination);
  out.push_back(std::move(f));
}

void DtypeFlowRules::checkLowPrecisionReduction(const OpEvent& event, std::vector<Finding>& out) const {
  if (event.inputs.empty() || event.explicitDtype || !event.autocast.definitelyOff()) return;
  if (needsFullReductionToBeSensitive(event.op) && !event.reducesAllDims) return;
  const Operand& input = event.inputs.front();
  // Half only: BFloat16 has Float's range, so its reductions do not overflow.
  if (input.dtype != DtypeSet(ScalarType::Half)) return;
  // kl_div(log_p, q) with a Float q: type promotion computes it in Float.
  if (std::any_of(event.inputs.begin() + 1, event.inputs.end(), [](const Operand& o) {
        return o.dtype == DtypeSet(ScalarType::Float) || o.dtype == DtypeSet(ScalarType::Double);
      }))
    return;
  Finding f = makeFinding(RuleId::DL105,
                          fmt::format("'{}' computed in {} outside autocast: {} is {} and no dtype= or upcast to "
                                      "Float is given, so the result can overflow to inf/NaN",
                                      event.op, input.dtype.toString(), input.description, input.dtype.toString()),
                          event.location, event.callChain);
  addOrigin(f, input);
  f.fix = upcastFix(event, input);
  out.push_back(std::move(f));
}

void DtypeFlowRules::checkHalfLossBackward(const OpEvent& event, std::vector<Finding>& out) const {
  if (event.inputs.empty()) return;
  const Operand& loss = event.inputs.front();
  if (!loss.dtype.allLowPrecisionFloat()) return;
  Finding f = makeFinding(RuleId::DL106,
                          fmt::format("backward() on a {} loss {}: compute the loss in Float (e.g. {}) before "
                                      "backward()",
                                      loss.dtype.toString(), loss.description,
                                      isPythonFile(event.location.file) ? "loss.float()" : "loss.to(torch::kFloat)"),
                          event.location, event.callChain);
  addOrigin(f, loss);
  out.push_back(std::move(f));
}

void DtypeFlowRules::onOptimizerStep(const OptimizerStepEvent& event, std::vector<Finding>& out) const {
  if (!event.autocastCache.filledAt) return;
  const std::string_view clearCache =
      isPythonFile(event.location.file) ? "torch.clear_autocast_cache()" : "at::autocast::clear_cache()";
  // A region left without clear_cache() is reported where it is left, which
  // is where the fix goes; one kept on across the step, at the step.
  if (!event.autocast.anyOn() && event.autocastCache.regionLeftAt) {
    Finding f = makeFinding(RuleId::DL107,
                            fmt::format("autocast disabled without {}: its cache keeps low-precision copies of the "
                                        "weights, which the optimizer step on {} makes stale, and the next forward "
                                        "under autocast uses them; call {} here",
                                        clearCache, event.optimizer, clearCache),
                            *event.autocastCache.regionLeftAt);
    f.notes.push_back({*event.autocastCache.filledAt, "weights cast under autocast and cached here"});
    f.notes.push_back({event.location, "the optimizer step here"});
    f.notes.insert(f.notes.end(), event.callChain.begin(), event.callChain.end());
    out.push_back(std::move(f));
    return;
  }
  const std::string message =
      event.staleCopyUsedAt
          ? fmt::format("optimizer step on {} inside an autocast region: autocast's cache still holds "
                        "low-precision copies of the old weights, and the next forward in the region uses them; end "
                        "the region before the step (autocast should wrap only the forward pass and the loss)",
                        event.optimizer)
          : fmt::format("optimizer step on {} while autocast's cache still holds low-precision copies of the old "
                        "weights{}: the next forward under autocast uses them; call {} when leaving the autocast "
                        "region",
                        event.optimizer, event.autocast.anyOn() ? " (autocast is still enabled)" : "", clearCache);
  Finding f = makeFinding(RuleId::DL107, message, event.location, event.callChain);
  f.notes.push_back({*event.autocastCache.filledAt, "weights cast under autocast and cached here"});
  if (event.staleCopyUsedAt) f.notes.push_back({*event.staleCopyUsedAt, "a forward in the region uses them here"});
  // Where the region kept on was enabled: the other place its fix can go.
  for (const DeviceAutocast* device : {&event.autocast.cuda, &event.autocast.cpu})
    if (device->enabled != Tristate::Off && device->enabledAt) {
      f.notes.push_back({*device->enabledAt, "autocast enabled here, and still on at the step"});
      break;
    }
  out.push_back(std::move(f));
}

void markRunInCustomBackward(OpEvent& event) {
  event.inCustomBackward = true;
  event.forwardUnderAutocast = Note{SourceLocation{}, "forward ran with these operands reconciled"};
}

bool namesItsOperands(const Finding& finding) { return finding.rule->handle == RuleId::DL101; }

}  // namespace dtype_lint
