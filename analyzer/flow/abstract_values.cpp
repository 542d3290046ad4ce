#include "flow/abstract_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "torch_api.h"

namespace dtype_lint::analyzer::flow {

namespace {
bool sameId(const ObjectRef& a, const ObjectRef& b) { return a.id == b.id; }
}  // namespace

// A bool keeps its value where every path agrees on it; a reference member
// its object.
void joinBools(std::map<const clang::ValueDecl*, bool>& into, const std::map<const clang::ValueDecl*, bool>& other) {
  keepAgreed(into, other, std::equal_to<bool>());
}

void joinObjects(std::map<const clang::ValueDecl*, ObjectRef>& into,
                 const std::map<const clang::ValueDecl*, ObjectRef>& other) {
  keepAgreed(into, other, sameId);
}

TensorFact joinFacts(const TensorFact& a, const TensorFact& b) {
  // Bottom is no value at all (a raising op's): the other side's, whole.
  if (b.dtype.isBottom()) return a;
  if (a.dtype.isBottom()) return b;
  TensorFact out = a;
  out.dtype = a.dtype.join(b.dtype);
  if (a.dtype != b.dtype) out.origin.reset();
  out.scaling = a.scaling.joinedWith(b.scaling);
  if (!a.castInAutocast || !b.castInAutocast || a.castInAutocast->at.line != b.castInAutocast->at.line ||
      a.castInAutocast->at.column != b.castInAutocast->at.column)
    out.castInAutocast.reset();
  if (!a.dtypeConstant || !b.dtypeConstant || !a.dtypeConstant->sameStart(*b.dtypeConstant)) out.dtypeConstant.reset();
  out.asBuilt = a.asBuilt && b.asBuilt;
  return out;
}

TensorFact builtModule(Note origin) {
  TensorFact built{DtypeSet(ScalarType::Float), std::move(origin), true};
  built.asBuilt = true;
  return built;
}

TensorFact ListFact::anyElement() const {
  if (elements.empty()) return {};
  TensorFact any = elements.front();
  for (const TensorFact& fact : elements) any = joinFacts(any, fact);
  return any;
}

TensorFact ListFact::at(std::optional<size_t> index) const {
  if (positional && index) return *index < elements.size() ? elements[*index] : TensorFact{};
  return anyElement();
}

void ListFact::add(const TensorFact& fact, bool atEnd) {
  if (positional && atEnd) {
    elements.push_back(fact);
    return;
  }
  if (!positional && elements.empty()) return;  // nothing known of the others
  elements = {elements.empty() ? fact : joinFacts(anyElement(), fact)};
  positional = false;
}

std::string ListFact::key() const {
  std::string k = positional ? "[" : "*[";
  for (const TensorFact& fact : elements) k += fact.dtype.toString() + ",";
  return k + "]";
}

ListFact joinLists(const ListFact& a, const ListFact& b) {
  if (a.positional && b.positional && a.elements.size() == b.elements.size()) {
    ListFact out = a;
    for (size_t i = 0; i < a.elements.size(); ++i) out.elements[i] = joinFacts(a.elements[i], b.elements[i]);
    return out;
  }
  // Positions differ: what every element of either has in common, when both
  // know their elements (an empty list joins as nothing).
  if ((!a.positional && a.elements.empty()) || (!b.positional && b.elements.empty())) return ListFact::unknown();
  std::vector<TensorFact> all = a.elements;
  all.insert(all.end(), b.elements.begin(), b.elements.end());
  return ListFact{{ListFact{all, true}.anyElement()}, false};
}

void ProcessState::join(const ProcessState& other) {
  for (auto [mine, theirs] :
       {std::pair{&autocast.cpu, &other.autocast.cpu}, std::pair{&autocast.cuda, &other.autocast.cuda}}) {
    if (mine->enabled != theirs->enabled) mine->enabled = Tristate::Unknown;
    mine->dtype = mine->dtype.join(theirs->dtype);
    if (!mine->enabledAt) mine->enabledAt = theirs->enabledAt;
  }
  autocastCache.join(other.autocastCache);
  bfloat16Loss.join(other.bfloat16Loss);
  protocol.join(other.protocol);
  manualScaling.join(other.manualScaling);
  gradDisabled = gradDisabled && other.gradDisabled;
}

bool ProcessState::sameAs(const ProcessState& o) const {
  return autocast == o.autocast && autocastCache.sameAs(o.autocastCache) && bfloat16Loss.sameAs(o.bfloat16Loss) &&
         protocol == o.protocol && manualScaling.size() == o.manualScaling.size() && gradDisabled == o.gradDisabled;
}

std::string ProcessState::key() const {
  return fmt::format("{}{}{}{}|{}{}{}|{}|{}|{}", int(autocast.cpu.enabled), autocast.cpu.dtype.toString(),
                     int(autocast.cuda.enabled), autocast.cuda.dtype.toString(), autocastCache.filledAt.has_value(),
                     autocastCache.regionLeftAt.has_value(), bfloat16Loss.known(), protocol.key(), manualScaling.size(),
                     gradDisabled);
}

FieldFacts joinFieldFacts(const FieldFacts& a, const FieldFacts& b) {
  FieldFacts out = a;
  FlowState::joinMap(out, b, joinFacts);
  return out;
}

void FlowState::join(const FlowState& other) {
  if (!other.reached) return;
  if (!reached) {
    *this = other;
    return;
  }
  joinMap(tensors, other.tensors, joinFacts);
  joinMap(modules, other.modules, joinFacts);
  joinMap(structs, other.structs, joinFieldFacts);
  joinMap(lists, other.lists, joinLists);
  joinBools(bools, other.bools);
  joinObjects(objects, other.objects);
  convertedModules.insert(other.convertedModules.begin(), other.convertedModules.end());
  joinMap(frozenModules, other.frozenModules, [](const SourceLocation& a, const SourceLocation&) { return a; });
  process.join(other.process);
}

bool FlowState::sameAs(const FlowState& o) const {
  return reached == o.reached && tensors == o.tensors && modules == o.modules && lists == o.lists &&
         structs == o.structs && bools == o.bools &&
         std::equal(objects.begin(), objects.end(), o.objects.begin(), o.objects.end(),
                    [](const auto& a, const auto& b) { return a.first == b.first && sameId(a.second, b.second); }) &&
         convertedModules == o.convertedModules && frozenModules.size() == o.frozenModules.size() &&
         std::equal(frozenModules.begin(), frozenModules.end(), o.frozenModules.begin(),
                    [](const auto& a, const auto& b) { return a.first == b.first; }) &&
         process.sameAs(o.process);
}

namespace {
// The dtypes of a map of facts, for memo keys.
template <typename Decl>
std::string dtypesKey(const std::map<const Decl*, TensorFact>& facts) {
  std::string k;
  for (const auto& [d, fact] : facts) k += fmt::format("{}={},", static_cast<const void*>(d), fact.dtype.toString());
  return k;
}
}  // namespace

bool MemberFacts::isMember(const clang::ValueDecl* d) { return llvm::isa<clang::FieldDecl>(d); }

MemberFacts MemberFacts::of(const FlowState& state) {
  MemberFacts out;
  for (const auto& [d, fact] : state.tensors)
    if (isMember(d)) out.tensors.emplace(d, fact);
  for (const auto& [d, fact] : state.modules)
    if (isMember(d)) out.modules.emplace(d, fact);
  for (const auto& [d, list] : state.lists)
    if (isMember(d)) out.lists.emplace(d, list);
  for (const auto& [d, fields] : state.structs)
    if (isMember(d)) out.structs.emplace(d, fields);
  for (const auto& [d, value] : state.bools)
    if (isMember(d)) out.bools.emplace(d, value);
  for (const auto& [d, object] : state.objects)
    if (isMember(d)) out.objects.emplace(d, object);
  out.convertedModules = state.convertedModules;
  return out;
}

namespace {
template <typename Map>
void replaceMembers(Map& into, const Map& members) {
  for (auto it = into.begin(); it != into.end();)
    it = MemberFacts::isMember(it->first) ? into.erase(it) : std::next(it);
  into.insert(members.begin(), members.end());
}
}  // namespace

void MemberFacts::replaceIn(FlowState& state) const {
  replaceMembers(state.tensors, tensors);
  replaceMembers(state.modules, modules);
  replaceMembers(state.lists, lists);
  replaceMembers(state.structs, structs);
  replaceMembers(state.bools, bools);
  replaceMembers(state.objects, objects);
  state.convertedModules = convertedModules;
}

void MemberFacts::addMissingTo(FlowState& state) const {
  state.tensors.insert(tensors.begin(), tensors.end());
  state.modules.insert(modules.begin(), modules.end());
  state.lists.insert(lists.begin(), lists.end());
  state.structs.insert(structs.begin(), structs.end());
  state.bools.insert(bools.begin(), bools.end());
  state.objects.insert(objects.begin(), objects.end());
}

void MemberFacts::join(const MemberFacts& other) {
  FlowState::joinMap(tensors, other.tensors, joinFacts);
  FlowState::joinMap(modules, other.modules, joinFacts);
  FlowState::joinMap(lists, other.lists, joinLists);
  FlowState::joinMap(structs, other.structs, joinFieldFacts);
  joinBools(bools, other.bools);
  joinObjects(objects, other.objects);
  convertedModules.insert(other.convertedModules.begin(), other.convertedModules.end());
}

std::string MemberFacts::key() const {
  std::string k = dtypesKey(tensors) + dtypesKey(modules);
  for (const auto& [d, list] : lists) k += fmt::format("{}#{},", static_cast<const void*>(d), list.key());
  for (const auto& [d, fields] : structs)
    k += fmt::format("s{}{{{}}},", static_cast<const void*>(d), dtypesKey(fields));
  for (const auto* record : convertedModules) k += fmt::format("c{},", static_cast<const void*>(record));
  for (const auto& [d, value] : bools) k += fmt::format("b{}={},", static_cast<const void*>(d), value);
  for (const auto& [d, object] : objects) k += fmt::format("o{}={:x},", static_cast<const void*>(d), object.id);
  return k;
}

std::string CallContext::key(const clang::FunctionDecl* fn) const {
  std::string k =
      fmt::format("{}|{}|{}{}|", static_cast<const void*>(fn), process.key(), inCustomBackward, guardedByScalerState);
  if (thisModule) k += fmt::format("m{}{}", thisModule->dtype.toString(), thisModuleOfUnknownOrigin ? "p" : "");
  if (thisObject) k += fmt::format("t{:x}", thisObject->id);
  if (thisClass) k += fmt::format("c{}", static_cast<const void*>(thisClass));
  for (const Value& v : args) {
    k += fmt::format("{}:{}:{}:{:x}:{};", int(v.kind), v.fact.dtype.toString(), v.list.key(), v.object.id, v.flag);
    for (const auto& [field, fact] : v.fields)
      k += fmt::format("{}={},", static_cast<const void*>(field), fact.dtype.toString());
  }
  k += savedVariables.key();
  for (const auto& [name, fact] : savedData) k += name + "=" + fact.dtype.toString() + ",";
  if (members) k += fmt::format("|{}", members->key());
  if (enclosing) k += fmt::format("|e{}{}", dtypesKey(enclosing->tensors), dtypesKey(enclosing->modules));
  return k + assumptionsKey();
}

std::optional<bool> CallContext::assumed(const clang::ValueDecl* flag) const {
  for (const FlagAssumption& a : assumptions)
    if (a.flag == flag && !a.isSetting) return a.value;
  return std::nullopt;
}

const FlagAssumption* CallContext::assumedSetting(const clang::ValueDecl* setting) const {
  for (const FlagAssumption& a : assumptions)
    if (a.flag == setting && a.isSetting) return &a;
  return nullptr;
}

std::string CallContext::assumptionsKey() const {
  std::string k;
  for (const FlagAssumption& a : assumptions)
    k += fmt::format("|f{}={}{}", static_cast<const void*>(a.flag), a.value, a.setting);
  return k;
}

}  // namespace dtype_lint::analyzer::flow
