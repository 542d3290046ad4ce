#include "flow/abstract_values.h"

#include <fmt/format.h>

namespace dtype_lint::analyzer::flow {

TensorFact joinFacts(const TensorFact& a, const TensorFact& b) {
  TensorFact out = a;
  out.dtype = a.dtype.join(b.dtype);
  if (a.dtype != b.dtype) out.origin.reset();
  if (!b.scaledBy || b.scaledBy->id != (a.scaledBy ? a.scaledBy->id : 0)) out.scaledBy.reset();
  if (!b.manualScaling || a.scalingFactor != b.scalingFactor) {
    out.manualScaling.reset();
    out.scalingFactor = nullptr;
  }
  out.isGradient = a.isGradient && b.isGradient;
  return out;
}

void ProcessState::join(const ProcessState& other) {
  for (auto [mine, theirs] : {std::pair{&autocast.cpu, &other.autocast.cpu}, std::pair{&autocast.cuda, &other.autocast.cuda}}) {
    if (mine->enabled != theirs->enabled) mine->enabled = Tristate::Unknown;
    mine->dtype = mine->dtype.join(theirs->dtype);
    if (!mine->enabledAt) mine->enabledAt = theirs->enabledAt;
  }
  // The cache is reported only when it is filled on every path (precision first).
  if (!other.cacheFilledAt) cacheFilledAt.reset();
  if (!other.regionLeftAt) regionLeftAt.reset();
  protocol.join(other.protocol);
  manualScaling.join(other.manualScaling);
}

bool ProcessState::sameAs(const ProcessState& o) const {
  return autocast == o.autocast && cacheFilledAt.has_value() == o.cacheFilledAt.has_value() &&
         regionLeftAt.has_value() == o.regionLeftAt.has_value() && protocol == o.protocol &&
         manualScaling.size() == o.manualScaling.size();
}

std::string ProcessState::key() const {
  return fmt::format("{}{}{}{}|{}{}|{}|{}", int(autocast.cpu.enabled), autocast.cpu.dtype.toString(),
                     int(autocast.cuda.enabled), autocast.cuda.dtype.toString(), cacheFilledAt.has_value(),
                     regionLeftAt.has_value(), protocol.key(), manualScaling.size());
}

void FlowState::join(const FlowState& other) {
  if (!other.reached) return;
  if (!reached) {
    *this = other;
    return;
  }
  joinMap(tensors, other.tensors, joinFacts);
  joinMap(modules, other.modules, joinFacts);
  joinMap(structs, other.structs, [](const FieldFacts& a, const FieldFacts& b) {
    FieldFacts out = a;
    joinMap(out, b, joinFacts);
    return out;
  });
  joinMap(lists, other.lists, [](const ListFact& a, const ListFact& b) {
    ListFact out;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(joinFacts(a[i], b[i]));
    return out;
  });
  process.join(other.process);
}

bool FlowState::sameAs(const FlowState& o) const {
  return reached == o.reached && tensors == o.tensors && modules == o.modules && lists == o.lists &&
         structs == o.structs && process.sameAs(o.process);
}

std::string CallContext::key(const clang::FunctionDecl* fn) const {
  std::string k =
      fmt::format("{}|{}|{}{}|", static_cast<const void*>(fn), process.key(), inCustomBackward, guardedByScalerState);
  if (thisModule) k += fmt::format("m{}", thisModule->dtype.toString());
  if (thisObject) k += fmt::format("t{:x}", thisObject->id);
  for (const Value& v : args) {
    k += fmt::format("{}:{}:{}:{:x};", int(v.kind), v.fact.dtype.toString(), v.list.size(), v.object.id);
    for (const auto& [field, fact] : v.fields) k += fmt::format("{}={},", static_cast<const void*>(field), fact.dtype.toString());
  }
  for (const TensorFact& s : savedVariables) k += s.dtype.toString() + ",";
  return k;
}

}  // namespace dtype_lint::analyzer::flow
