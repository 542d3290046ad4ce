#include "values.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace dtype_lint::python {

std::optional<bool> Value::truth() const {
  switch (kind) {
  case Kind::Bool: return flag;
  case Kind::Number: return number != 0;
  case Kind::String: return !text.empty();
  case Kind::None: return false;
  case Kind::Dtype:  // `amp_dtype or torch.float32`
  case Kind::Object:
  case Kind::Function:
  case Kind::Class: return true;
  case Kind::Unknown: return knownTruth;
  case Kind::Dict:  // `yaml.safe_load(f) or {}`: a config file that has keys
    if (fromConfigFile && !keys.empty()) return true;
    return std::nullopt;
  default: return std::nullopt;
  }
}

bool Value::sameConstant(const Value& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
  case Kind::None: return true;
  case Kind::Bool: return flag == o.flag;
  case Kind::Number: return number == o.number;
  case Kind::String:
  case Kind::File:
  case Kind::Name: return text == o.text;
  case Kind::Dtype: return dtype == o.dtype;
  case Kind::Object: return object == o.object;  // one object: an enum's member as a dict key
  default: return false;
  }
}

ObjectId gatheredParameters(const Value& list) {
  if (!list.is(Value::Kind::List) || list.items.empty()) return 0;
  const ObjectId module = list.items.front().parameterOf;
  for (const Value& item : list.items)
    if (!item.is(Value::Kind::Tensor) || item.parameterOf != module) return 0;
  return module;
}

Value joinValues(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  // An object or a tensor on one path and None on the other (`GradScaler() if
  // amp else None`): its uses are guarded; on the paths that use it, it is that.
  if (a.is(Kind::None) && (b.is(Kind::Object) || b.is(Kind::Tensor))) return b;
  if (b.is(Kind::None) && (a.is(Kind::Object) || a.is(Kind::Tensor))) return a;
  if (a.kind != b.kind) return Value::unknown();
  Value v = a;
  // A setting's value on one path, the same constant written on the other
  // (a field overwritten from the environment only when the variable is set).
  if (a.setting != b.setting) v.setting = a.setting == 0 ? b.setting : b.setting == 0 ? a.setting : 0;
  v.setByProgram = a.setByProgram || b.setByProgram;
  switch (a.kind) {
  case Kind::Unknown:
    if (a.knownTruth != b.knownTruth) v.knownTruth.reset();
    v.knownNotNone = a.knownNotNone && b.knownNotNone;
    return v;
  case Kind::None:
  case Kind::Bool:
  case Kind::Number:
  case Kind::String:
  case Kind::File:
  case Kind::Name: return a.sameConstant(b) ? v : Value::unknown();
  case Kind::Dtype: v.dtype = a.dtype.join(b.dtype); return v;
  case Kind::Tensor:
    v.dtype = a.dtype.join(b.dtype);
    if (!b.origin || (a.origin && a.origin->location.line != b.origin->location.line && v.dtype != a.dtype))
      v.origin.reset();
    if (!b.castInAutocast) v.castInAutocast.reset();
    // Scaled by hand on one path only (`elif self.static_scale != 1.0: loss = loss * self.static_scale`):
    // that path's backward is manual scaling.
    if (!a.manual) v.manual = b.manual, v.factor = b.factor;
    else if (b.manual && a.factor != b.factor) v.manual.reset();
    v.isGradient = a.isGradient && b.isGradient;
    if (a.parameterOf != b.parameterOf) v.parameterOf = 0;
    if (a.handedIntoModule != b.handedIntoModule) v.handedIntoModule = 0;
    if (a.description != b.description) v.description.clear();
    return v;
  case Kind::Object:
  case Kind::Parameters:
  case Kind::ScaledLoss: return a.object == b.object ? v : Value::unknown();
  case Kind::Autocast:
    // `autocast(...) if amp else nullcontext()`: the region, maybe not entered.
    if (!a.flag || !b.flag) {
      v = a.flag ? a : b;
      if (a.flag != b.flag || a.enabled != b.enabled) v.enabled = Tristate::Unknown;
      return v;
    }
    if (a.text != b.text) return Value::unknown();
    if (a.enabled != b.enabled) v.enabled = Tristate::Unknown;
    v.dtype = a.dtype.join(b.dtype);
    return v;
  case Kind::Function:
  case Kind::Method: return a.function == b.function && a.object == b.object ? v : Value::unknown();
  case Kind::Class: return a.cls == b.cls ? v : Value::unknown();
  case Kind::List:
  case Kind::Dict:
  case Kind::Partial:
    // Parameters gathered on some paths only (decay.append(p) under an if):
    // parameters of that module either way.
    if (a.is(Kind::List) && a.items.size() != b.items.size()) {
      const ObjectId module = gatheredParameters(a.items.empty() ? b : a);
      if (module && (a.items.empty() || b.items.empty() || gatheredParameters(b) == module)) {
        Value longer = a.items.size() > b.items.size() ? a : b;
        longer.itemsStandForMore = true;
        return longer;
      }
      // Modules appended on some paths only (layers.append(nn.ReLU()) under
      // an if): the longer list, its extra modules maybe there.
      const Value& shorter = a.items.size() < b.items.size() ? a : b;
      Value longer = a.items.size() < b.items.size() ? b : a;
      const bool prefix =
          std::all_of(longer.items.begin(), longer.items.end(),
                      [](const Value& item) { return item.is(Kind::Object); }) &&
          std::equal(shorter.items.begin(), shorter.items.end(), longer.items.begin(),
                     [](const Value& x, const Value& y) { return x.is(Kind::Object) && x.object == y.object; });
      if (prefix) {
        longer.itemsStandForMore = true;
        return longer;
      }
    }
    // Keys added on some paths only (`if key not in groups: groups[key] = {...}`): the dict with them.
    if (a.is(Kind::Dict) && a.keys.size() != b.keys.size()) {
      const Value& fewer = a.keys.size() < b.keys.size() ? a : b;
      Value more = a.keys.size() < b.keys.size() ? b : a;
      const bool prefix =
          std::equal(fewer.keys.begin(), fewer.keys.end(), more.keys.begin(), [](const Value& x, const Value& y) {
            return x.sameConstant(y) || (x.is(Kind::Unknown) && y.is(Kind::Unknown));
          });
      if (!prefix) return Value::unknown();
      for (size_t i = 0; i < fewer.items.size(); ++i) more.items[i] = joinValues(more.items[i], fewer.items[i]);
      more.itemsStandForMore = a.itemsStandForMore || b.itemsStandForMore;
      return more;
    }
    v.itemsStandForMore = a.itemsStandForMore || b.itemsStandForMore;
    if (a.items.size() != b.items.size() || a.keys.size() != b.keys.size()) return Value::unknown();
    for (size_t i = 0; i < a.items.size(); ++i) v.items[i] = joinValues(a.items[i], b.items[i]);
    for (size_t i = 0; i < a.keys.size(); ++i) v.keys[i] = joinValues(a.keys[i], b.keys[i]);
    return v;
  }
  return Value::unknown();
}

namespace {

void joinAutocast(AutocastState& mine, const AutocastState& theirs) {
  for (auto [m, t] : {std::pair{&mine.cpu, &theirs.cpu}, std::pair{&mine.cuda, &theirs.cuda}}) {
    if (m->enabled != t->enabled) m->enabled = Tristate::Unknown;
    m->dtype = m->dtype.join(t->dtype);
    if (!m->enabledAt) m->enabledAt = t->enabledAt;
  }
}

template <typename Map>
void joinNames(Map& mine, const Map& theirs) {
  for (auto it = mine.begin(); it != mine.end();) {
    auto other = theirs.find(it->first);
    if (other == theirs.end()) {
      it = mine.erase(it);
      continue;
    }
    it->second = joinValues(it->second, other->second);
    ++it;
  }
}

}  // namespace

const ScalerProtocol* State::protocolWhere(const std::string& key, bool holds) const {
  auto it = protocolSplits.find(key);
  if (it == protocolSplits.end() || !(it->second.joined == protocol)) return nullptr;
  const auto& side = holds ? it->second.whereHolds : it->second.whereFails;
  return side ? &*side : nullptr;
}

void State::changeProtocols(const std::function<void(ScalerProtocol&)>& change) {
  for (auto& [key, split] : protocolSplits) {
    if (!(split.joined == protocol)) continue;
    for (auto* side : {&split.whereHolds, &split.whereFails})
      if (*side) change(**side);
    change(split.joined);
  }
  change(protocol);
}

std::string State::testKey(bool ofNone, ObjectId holder, const std::string& name) {
  return fmt::format("{}{}.{}", ofNone ? "none:" : "truth:", holder, name);
}

namespace {

// Whether a value tests truthy, or not None (a known kind, or an earlier branch's word).
std::optional<bool> verdict(const Value& value, bool ofNone) {
  if (!ofNone) return value.truth();
  if (value.is(Value::Kind::None)) return false;
  if (!value.is(Value::Kind::Unknown) || value.knownNotNone || value.knownTruth == true) return true;
  return std::nullopt;
}

}  // namespace

void State::join(const State& other) {
  if (!other.reached) return;
  if (!reached) {
    *this = other;
    return;
  }
  // Each side's protocol where a test of a local or attribute holds and where
  // it fails: none where its value decides the other way, the one set apart
  // at an earlier join, else its own. Kept where some side sets the paths apart.
  std::map<std::string, ProtocolSplit> splits;
  auto splitOn = [&](const std::string& key, const Value& mine, const Value& theirs, bool ofNone) {
    const std::optional<bool> myVerdict = verdict(mine, ofNone), theirVerdict = verdict(theirs, ofNone);
    auto setApartBefore = [&](const State& side) {
      auto earlier = side.protocolSplits.find(key);
      return earlier != side.protocolSplits.end() && earlier->second.joined == side.protocol;
    };
    const bool mineApart = setApartBefore(*this), theirsApart = setApartBefore(other);
    if (myVerdict == theirVerdict && !mineApart && !theirsApart) return;
    auto sideWhere = [&](const State& side, std::optional<bool> decided, bool apart, bool holds) {
      if (decided) return *decided == holds ? &side.protocol : nullptr;
      return apart ? side.protocolWhere(key, holds) : &side.protocol;
    };
    ProtocolSplit split;
    for (bool holds : {true, false}) {
      const ScalerProtocol* mineSide = sideWhere(*this, myVerdict, mineApart, holds);
      const ScalerProtocol* theirSide = sideWhere(other, theirVerdict, theirsApart, holds);
      if (!mineSide && !theirSide) continue;
      ScalerProtocol joined = mineSide ? *mineSide : *theirSide;
      if (mineSide && theirSide) joined.join(*theirSide);
      (holds ? split.whereHolds : split.whereFails) = std::move(joined);
    }
    splits[key] = std::move(split);
  };
  auto splitAll = [&](ObjectId holder, const std::map<std::string, Value>& mine,
                      const std::map<std::string, Value>& theirs) {
    for (const auto& [name, value] : mine)
      if (auto it = theirs.find(name); it != theirs.end())
        for (bool ofNone : {false, true}) splitOn(testKey(ofNone, holder, name), value, it->second, ofNone);
  };
  splitAll(0, locals, other.locals);
  for (const auto& [id, object] : heap)
    if (auto theirs = other.heap.find(id); theirs != other.heap.end())
      splitAll(id, object.attributes, theirs->second.attributes);
  joinNames(locals, other.locals);
  for (auto& [id, object] : heap) {
    auto theirs = other.heap.find(id);
    if (theirs == other.heap.end()) continue;
    object.parameters = object.parameters.join(theirs->second.parameters);
    object.frozen = object.frozen && theirs->second.frozen;
    if (!object.parametersOrigin) object.parametersOrigin = theirs->second.parametersOrigin;
    joinNames(object.attributes, theirs->second.attributes);
    for (ObjectId module : theirs->second.injected)
      if (std::find(object.injected.begin(), object.injected.end(), module) == object.injected.end())
        object.injected.push_back(module);
  }
  for (const auto& [id, object] : other.heap) heap.emplace(id, object);
  joinAutocast(autocast, other.autocast);
  autocastBySetter = autocastBySetter || other.autocastBySetter;
  autocastRegions = std::max(autocastRegions, other.autocastRegions);
  if (!stepInRegion) stepInRegion = other.stepInRegion;
  autocastCache.join(other.autocastCache);
  protocol.join(other.protocol);
  for (auto& [key, split] : splits) split.joined = protocol;
  protocolSplits = std::move(splits);
  bfloat16Loss.join(other.bfloat16Loss);
  manualScaling.join(other.manualScaling);
}

}  // namespace dtype_lint::python
