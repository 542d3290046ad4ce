// Transfer functions: how statements and calls change the flow state, and
// the events they emit.
#include <fmt/format.h>

#include "flow/ast_helpers.h"
#include "flow/function_analysis.h"
#include "torch_api.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

bool FunctionAnalysis::isUserStruct(QualType type) {
  const CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  return record && !isTensorType(type) && !isTensorListType(type) && !moduleImplClass(type) && !isOptimizerType(type) &&
         !isScaler(type) && isUserCode(record->getLocation(), sm_);
}

// torch::NoGradGuard, c10::InferenceMode: no graph is built in their scope.
bool FunctionAnalysis::disablesGrad(QualType type) {
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  const std::string name = record ? record->getQualifiedNameAsString() : "";
  return name == "c10::NoGradGuard" || name == "at::NoGradGuard" || name == "c10::InferenceMode";
}

void FunctionAnalysis::bindDeclaration(const ValueDecl* d, const Expr* init, SourceLocation at) {
  QualType type = d->getType();
  if (isa<VarDecl>(d) && disablesGrad(type)) state_.process.gradDisabled = true;
  scalers_.declareScalerOrOptimizer(d, init, at);
  if (const auto* list = dyn_cast_or_null<InitListExpr>(init ? ignoreWrappers(init) : nullptr))
    scalers_.bindReferenceMembers(list);
  if (isUserStruct(type)) {
    // A struct of the user's: its tensor members are followed (auto ws = make_workspace();).
    FieldFacts fields;
    if (auto known = structFieldsOf(init)) fields = std::move(*known);
    else if (const auto* construct = dyn_cast_or_null<CXXConstructExpr>(init ? ignoreWrappers(init) : nullptr);
             !init || (construct && construct->getNumArgs() == 0))
      seedDtypeFields(type.getNonReferenceType()->getAsCXXRecordDecl(), fields);
    state_.structs[d] = std::move(fields);
    return;
  }
  if (const auto* var = dyn_cast<VarDecl>(d); var && bindLoopElement(var)) return;
  // auto [logits, hidden] = model->forward(x): the elements, by position.
  if (const auto* decomposition = dyn_cast<DecompositionDecl>(d)) {
    const ListFact elements = init ? evalList(init) : ListFact::unknown();
    size_t position = 0;
    for (const BindingDecl* binding : decomposition->bindings()) {
      if (isTensorType(binding->getType())) state_.tensors[binding] = named(elements.at(position), binding);
      else scalers_.declareBinding(binding, init);
      ++position;
    }
    return;
  }
  if (isTensorType(type)) {
    state_.tensors[d] = init ? named(evalTensor(init), d) : TensorFact{};
  } else if (holdsTensorElements(type)) {
    // A user module's own list of submodules follows the module (followsOwningModule)
    // unless it starts with modules made elsewhere.
    const auto* field = dyn_cast<FieldDecl>(d);
    const bool ownSubmodules =
        field && moduleListElementClass(type) && isUserModule(dyn_cast<CXXRecordDecl>(field->getParent()));
    if (!ownSubmodules) state_.lists[d] = init ? evalList(init) : ListFact::unknown();
    else if (init && !isa<CXXConstructExpr>(ignoreWrappers(init))) state_.lists[d] = ListFact::unknown();
  } else if (moduleImplClass(type)) {
    bindModule(d, init);
  } else if (type->isBooleanType()) {
    bindBool(d, init);
  } else if (const auto* var = dyn_cast<VarDecl>(d); var && var->hasLocalStorage() && isOptional(type)) {
    // Empty until emplaced (`std::optional<GradScaler> scaler;`); engaged when made with a value.
    if (!init || makesEmptyOptional(init)) state_.bools[var->getCanonicalDecl()] = false;
    else state_.bools.erase(var->getCanonicalDecl());
  } else if (reassignableDtype(d)) {
    state_.tensors[d] = init ? evalDtypeArgument(init).value_or(TensorFact{}) : TensorFact{};
  }
}

// A range-for variable is an element of what it walks: a tensor, a module, a
// map's key-value pair or a named_parameters() item (their value), or the
// structured bindings of one (`for (auto& [name, t] : m)`).
bool FunctionAnalysis::bindLoopElement(const VarDecl* var) {
  const Expr* range = loopRange(var);
  if (!range) return false;
  if (const auto* decomposition = dyn_cast<DecompositionDecl>(var)) {
    const TensorFact element = evalElement(range);
    for (const BindingDecl* binding : decomposition->bindings())
      if (isTensorType(binding->getType())) state_.tensors[binding] = named(element, binding);
    return true;
  }
  if (isTensorType(var->getType())) state_.tensors[var] = named(evalElement(range), var);
  else if (isTensorKeyValueType(var->getType())) state_.tensors[var] = evalElement(range);
  else if (moduleImplClass(var->getType()) && moduleListElementClass(range->getType()))
    state_.modules[var] = followsOwningModule(range) ? evalModule(range) : evalElement(range);
  else return false;
  return true;
}

// The fields of a user struct `e` gives: a struct variable the flow follows,
// a user function's returned struct, or an aggregate.
std::optional<FieldFacts> FunctionAnalysis::structFieldsOf(const Expr* e) {
  if (const ValueDecl* source = e ? declOf(e) : nullptr; source && state_.structs.count(source))
    return state_.structs[source];
  if (const FunctionResult* r = userCallResult(e); r && r->returnedFields) return *r->returnedFields;
  return aggregateFields(e);
}

// `Batch{images, labels}`, `return {images, labels};`: an aggregate of the
// user's, its tensor and dtype members by position.
std::optional<FieldFacts> FunctionAnalysis::aggregateFields(const Expr* init) {
  const auto* list = dyn_cast_or_null<InitListExpr>(init ? ignoreWrappers(init) : nullptr);
  if (!list || !isUserStruct(list->getType())) return std::nullopt;
  const CXXRecordDecl* record = list->getType()->getAsCXXRecordDecl();
  if (!record || record->getNumBases() > 0) return std::nullopt;
  FieldFacts fields;
  unsigned position = 0;
  for (const FieldDecl* field : record->fields()) {
    if (position >= list->getNumInits()) break;
    const Expr* value = list->getInit(position++);
    if (isTensorType(field->getType())) fields[field] = evalTensor(value);
    else if (isScalarTypeType(field->getType()) || isTensorOptionsType(field->getType()))
      if (auto fact = evalDtypeArgument(value)) fields[field] = *fact;
  }
  return fields;
}

// A default-constructed config struct: its dtype and TensorOptions fields
// have their default member initializers' dtypes until assigned.
void FunctionAnalysis::seedDtypeFields(const CXXRecordDecl* record, FieldFacts& fields) {
  if (!record) return;
  for (const FieldDecl* field : record->fields())
    if ((isScalarTypeType(field->getType()) || isTensorOptionsType(field->getType())) && field->hasInClassInitializer())
      if (auto fact = evalDtypeArgument(field->getInClassInitializer())) fields[field] = *fact;
}

void FunctionAnalysis::bindModule(const ValueDecl* d, const Expr* init) {
  const Expr* e = init ? ignoreWrappers(init) : nullptr;
  const bool created = !e || createsModule(e);
  if (created && createsFloatParameters(moduleImplClass(d->getType()), e)) {
    state_.modules[d] =
        builtModule(Note{toLocation(d->getSourceRange()),
                         fmt::format("the parameters of '{}' are Float (module created here)", d->getName().str())});
  } else if (created) {
    state_.modules[d] = TensorFact{};
  } else if (init) {
    state_.modules[d] = evalModule(init);
  }
}

// register_module("fc", torch::nn::Linear(4, 4)), torch::nn::Linear(4, 4): a module made here.
bool FunctionAnalysis::createdInPlace(const Expr* module) {
  const Expr* e = ignoreWrappers(module);
  if (const auto* call = dyn_cast<CallExpr>(e); call && calleeName(call) == "register_module" && call->getNumArgs() > 0)
    e = ignoreWrappers(call->getArg(call->getNumArgs() - 1));
  return createsModule(e) && !(isa<CallExpr>(e) && calleeName(cast<CallExpr>(e)) == "register_module");
}

// A new module's parameters are Float: a built-in layer's, a Sequential's of
// such modules, and a user module's unless its constructors make tensor
// members of another or an unknown dtype (LoRA weights made BFloat16).
bool FunctionAnalysis::createsFloatParameters(const CXXRecordDecl* impl, const Expr* init) {
  if (!impl) return false;
  if (impl->getName() == "SequentialImpl") {
    const auto* construct = dyn_cast_or_null<CXXConstructExpr>(init);
    if (!construct) return !init;
    for (const Expr* arg : construct->arguments())
      if (const CXXRecordDecl* element = moduleImplClass(arg->getType());
          element && !createsFloatParameters(element, ignoreWrappers(arg)))
        return false;
    return true;
  }
  if (!isUserModule(impl)) return true;  // LibTorch's modules are built with Float parameters
  const TranslationUnitAnalysis::ClassInvariant* invariant = tu_.classInvariant(impl, ctx_);
  if (!invariant) return true;
  for (const auto& [field, fact] : invariant->members.tensors)
    if (fact.dtype != DtypeSet(ScalarType::Float)) return false;
  // A list of submodules it built otherwise than in place.
  for (const auto& [field, list] : invariant->members.lists)
    if (moduleListElementClass(field->getType()) && list.anyElement().dtype != DtypeSet(ScalarType::Float))
      return false;
  return true;
}

// An element of a list assigned: v[i] = t, m[key] = t. A loop reference
// assigned (w = ... for `auto& w : v`) changes every element it walks: the
// list is forgotten.
void FunctionAnalysis::assignElement(const Expr* lhs, const Expr* rhs) {
  lhs = ignoreWrappers(lhs);
  if (const auto* var = dyn_cast_or_null<VarDecl>(declOf(lhs)); var && var->getType()->isReferenceType())
    if (const Expr* range = loopRange(var)) {
      if (const ValueDecl* walked = declOf(range)) state_.lists.erase(walked);
      return;
    }
  const auto* subscript = dyn_cast<CXXOperatorCallExpr>(lhs);
  if (!subscript || subscript->getOperator() != OO_Subscript) return;
  const ValueDecl* d = declOf(subscript->getArg(0));
  auto it = d ? state_.lists.find(d) : state_.lists.end();
  if (it == state_.lists.end()) return;
  const TensorFact fact = isTensorType(rhs->getType()) ? evalTensor(rhs) : TensorFact{};
  ListFact& list = it->second;
  if (auto position = constantIndex(subscript->getArg(1));
      list.positional && position && *position < list.elements.size())
    list.elements[*position] = fact;
  else list.add(fact, false);
}

// v.push_back(t), m.emplace(key, t), v.clear(), v.erase(it): what is known
// of the elements afterwards. `(is_router ? router : rest).push_back(p)`
// changes one of two lists: each is either as it was or changed.
void FunctionAnalysis::transferListMethod(const CXXMemberCallExpr* call, const std::string& name) {
  const auto* choice = dyn_cast<ConditionalOperator>(ignoreWrappers(call->getImplicitObjectArgument()));
  if (!choice) return transferListMethod(call, name, call->getImplicitObjectArgument());
  for (const Expr* branch : {choice->getTrueExpr(), choice->getFalseExpr()}) {
    const ValueDecl* d = declOf(branch);
    auto before = d ? state_.lists.find(d) : state_.lists.end();
    if (before == state_.lists.end()) continue;
    const ListFact unchanged = before->second;
    transferListMethod(call, name, branch);
    if (auto after = state_.lists.find(d); after != state_.lists.end())
      after->second = joinLists(unchanged, after->second);
  }
}

void FunctionAnalysis::transferListMethod(const CXXMemberCallExpr* call, const std::string& name, const Expr* object) {
  const ValueDecl* d = declOf(object);
  static const std::vector<std::string> kAdders = {"push_back",   "emplace_back",     "insert",     "emplace",
                                                   "try_emplace", "insert_or_assign", "push_front", "emplace_front"};
  static const std::vector<std::string> kRemovers = {"erase", "pop_back", "pop_front"};
  // A module's list of submodules stays its own while it gets modules made in place.
  if (followsOwningModule(object) && (named(kAdders, name) || name == "assign" || name == "swap") &&
      !(call->getNumArgs() == 1 && createdInPlace(call->getArg(0))))
    state_.lists[d] = ListFact::unknown();
  auto it = d ? state_.lists.find(d) : state_.lists.end();
  if (it == state_.lists.end()) return;
  ListFact& list = it->second;
  if (name == "clear") {
    list = {};
  } else if (named(kAdders, name) && isTensorTupleListType(object->getType())) {
    // emplace_back(a, b), push_back({a, b}), push_back(std::make_pair(a, b)): one more of each tensor.
    std::vector<const Expr*> added = tensorArgs(call);
    if (added.empty() && call->getNumArgs() == 1)
      if (const auto elements = tupleElements(call->getArg(0))) added = *elements;
    std::optional<TensorFact> joined;
    for (const Expr* tensor : added)
      if (isTensorType(tensor->getType()))
        joined = joined ? joinFacts(*joined, evalTensor(tensor)) : evalTensor(tensor);
    if (joined) list.add(*joined, false);
    else list = ListFact::unknown();
  } else if (named(kAdders, name) && moduleListElementClass(object->getType())) {
    // layers.push_back(register_module("l0", torch::nn::Linear(4, 4))): one more module.
    if (call->getNumArgs() == 1 && moduleImplClass(call->getArg(0)->getType()))
      list.add(evalModule(call->getArg(0)), name == "push_back" || name == "emplace_back");
    else list = ListFact::unknown();
  } else if (named(kAdders, name)) {
    const std::vector<const Expr*> added = tensorArgs(call);
    if (added.size() == 1) list.add(evalTensor(added.front()), name == "push_back" || name == "emplace_back");
    else list = ListFact::unknown();
  } else if (named(kRemovers, name)) {
    if (!list.positional || !list.elements.empty()) list = ListFact{{list.anyElement()}, false};
  } else if (name == "resize" || name == "assign" || name == "swap" || name == "merge" || name == "splice") {
    list = ListFact::unknown();
  }
}

// A list passed to a non-const reference parameter may change in the callee.
void FunctionAnalysis::forgetListsPassedByReference(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  if (!callee || isStdMove(call)) return;  // what takes the moved list changes it, not the move
  // std::make_unique<torch::optim::Adam>(params, ...) forwards it to a constructor that copies it.
  if (callee->isInStdNamespace() && (calleeName(call) == "make_unique" || calleeName(call) == "make_shared")) return;
  const unsigned skipped = firstParameterArgument(call, callee);
  for (unsigned i = skipped; i < call->getNumArgs() && i - skipped < callee->getNumParams(); ++i) {
    const QualType param = callee->getParamDecl(i - skipped)->getType();
    // (A list moved into a callee, `T&&`, is the callee's now: what was known of it stays for what consumes the move.)
    if (param->isLValueReferenceType() && !param.getNonReferenceType().isConstQualified() &&
        holdsTensorElements(call->getArg(i)->getType()))
      if (const ValueDecl* d = declOf(call->getArg(i))) state_.lists.erase(d);
  }
}

void FunctionAnalysis::assign(const Expr* lhs, const Expr* rhs, const Expr* at) {
  // std::tie(features, logits) = model->forward(x): the elements, by position.
  if (const auto* tie = dyn_cast<CallExpr>(ignoreWrappers(lhs)); tie && calleeName(tie) == "tie") {
    const ListFact elements = evalList(rhs);
    for (unsigned i = 0; i < tie->getNumArgs(); ++i)
      if (const ValueDecl* element = declOf(tie->getArg(i)); element && isTensorType(tie->getArg(i)->getType()))
        state_.tensors[element] = named(elements.at(i), element);
    return;
  }
  assignElement(lhs, rhs);
  if (const auto* member = dyn_cast<MemberExpr>(ignoreWrappers(lhs)); member && isa<FieldDecl>(member->getMemberDecl()))
    if (const ValueDecl* base = structBase(member)) {
      const auto* field = cast<FieldDecl>(member->getMemberDecl());
      if (isTensorType(lhs->getType())) {
        state_.structs[base][field] = evalTensor(rhs);
        return;
      }
      // setup.param_options = setup.param_options.device(device): a config's dtype.
      if (isScalarTypeType(lhs->getType()) || isTensorOptionsType(lhs->getType())) {
        state_.structs[base][field] = evalDtypeArgument(rhs).value_or(TensorFact{});
        return;
      }
    }
  bindSavedData(lhs, rhs);
  // optimizers_["dense"] = std::make_unique<torch::optim::SGD>(...): the optimizer named "dense".
  if (isOptimizerType(lhs->getType())) scalers_.declareKeyedOptimizer(lhs, rhs, loc(at));
  const ValueDecl* target = declOf(lhs);
  if (!target) return;
  if (isOptimizerType(lhs->getType()) || isScaler(lhs->getType())) {
    // optimizer_ = std::make_unique<torch::optim::AdamW>(model_->parameters(), options);
    scalers_.declareScalerOrOptimizer(target, rhs, loc(at));
  } else if (isTensorType(lhs->getType())) {
    state_.tensors[target] = named(evalTensor(rhs), target);
  } else if (holdsTensorElements(lhs->getType())) {
    state_.lists[target] = evalList(rhs);
  } else if (moduleImplClass(lhs->getType())) {
    // fc = register_module("fc", torch::nn::Linear(4, 4)) creates Float
    // parameters; model_ = build_model(cfg) has the builder's.
    if (createsModule(ignoreWrappers(rhs)))
      state_.modules[target] = builtModule(
          note(at, fmt::format("the parameters of '{}' are Float (module created here)", target->getName().str())));
    else state_.modules[target] = evalModule(rhs);
  } else if (lhs->getType()->isBooleanType()) {
    bindBool(target, rhs);
  } else if (reassignableDtype(target)) {
    // `if (name == "fp16") dtype = torch::kHalf;`: the dtype on this path.
    state_.tensors[target] = evalDtypeArgument(rhs).value_or(TensorFact{});
  }
}

// at::autocast::is_enabled(), is_cpu_enabled(), is_autocast_enabled(device):
// the state's answer where it knows it.
std::optional<bool> FunctionAnalysis::autocastQuery(const Expr* value, const FlowState& state) {
  const auto* call = dyn_cast<CallExpr>(ignoreWrappers(value));
  const FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
  if (!isAutocastFunction(callee) || !callee->getDeclName().isIdentifier()) return std::nullopt;
  const std::string name = callee->getName().str();
  const DeviceAutocast* device = nullptr;
  if (name == "is_enabled") device = &state.process.autocast.cuda;
  if (name == "is_cpu_enabled") device = &state.process.autocast.cpu;
  if (name == "is_autocast_enabled" && call->getNumArgs() == 1) {
    const auto type = evaluateDeviceTypeConstant(call->getArg(0));
    device = type == "CUDA" ? &state.process.autocast.cuda : type == "CPU" ? &state.process.autocast.cpu : nullptr;
  }
  if (!device || device->enabled == Tristate::Unknown) return std::nullopt;
  return device->enabled == Tristate::On;
}

// A bool given the autocast state (`prev_enabled_ = at::autocast::is_cpu_enabled()`),
// a parameter whose value this call knows, or a test this path decides; any
// other value is not followed (a struct's bools are shared by all its objects here).
void FunctionAnalysis::bindBool(const ValueDecl* d, const Expr* value) {
  // A copy's `amp(other.amp)`: the same field, whose value all objects share here.
  if (const ValueDecl* source = value ? testedFlag(value) : nullptr;
      source && source == cast<ValueDecl>(d->getCanonicalDecl()))
    return;
  std::optional<bool> known;
  if (const auto* ref = value ? dyn_cast<DeclRefExpr>(value->IgnoreParenImpCasts()) : nullptr;
      ref && isa<ParmVarDecl>(ref->getDecl()) && !fn_->isImplicit())
    known = evalFlag(ref);  // a guard's `enabled_(enabled)` keeps the flag it was built with
  else if (const auto* test = value ? dyn_cast<BinaryOperator>(ignoreWrappers(value)) : nullptr;
           test && (test->isEqualityOp() || test->isLogicalOp()))
    known = evalFlag(test);  // `s.amp = s.amp_dtype != torch::kFloat;`, under this path's settings
  else if (value) known = autocastQuery(value, state_);
  if (known) state_.bools[cast<ValueDecl>(d->getCanonicalDecl())] = *known;
  else state_.bools.erase(cast<ValueDecl>(d->getCanonicalDecl()));
}

// ctx->saved_data["key"] = tensor, in a custom Function's forward.
void FunctionAnalysis::bindSavedData(const Expr* lhs, const Expr* rhs) {
  const auto* subscript = dyn_cast<CXXOperatorCallExpr>(ignoreWrappers(lhs));
  if (!subscript) return;
  // The tensor is converted to an IValue on the way in.
  const Expr* value = ignoreWrappers(rhs);
  while (const auto* construct = dyn_cast<CXXConstructExpr>(value)) {
    if (construct->getNumArgs() != 1) return;
    value = ignoreWrappers(construct->getArg(0));
  }
  if (!isTensorType(value->getType())) return;
  if (auto key = savedDataKey(subscript)) result_.savedData[*key] = evalTensor(value);
}

void FunctionAnalysis::handleAutocastCall(const FunctionDecl* fn, const CallExpr* call) {
  const std::string name = fn->getName().str();
  auto boolArg = [&](unsigned i) {
    if (i >= call->getNumArgs()) return Tristate::Unknown;
    // A literal, a constant, or a config flag no code writes.
    if (const auto flag = evalFlag(call->getArg(i))) return *flag ? Tristate::On : Tristate::Off;
    return Tristate::Unknown;
  };
  auto deviceArg = [&](unsigned i) -> DeviceAutocast* {
    auto device = i < call->getNumArgs() ? evaluateDeviceTypeConstant(call->getArg(i)) : std::nullopt;
    if (device == "CUDA") return &state_.process.autocast.cuda;
    if (device == "CPU") return &state_.process.autocast.cpu;
    return nullptr;
  };
  auto setEnabled = [&](DeviceAutocast* device, Tristate enabled) {
    if (!device) {
      // An unknown device: both become unknown.
      state_.process.autocast.cpu.enabled = state_.process.autocast.cuda.enabled = Tristate::Unknown;
      return;
    }
    if (enabled == Tristate::Off && device->enabled != Tristate::Off && state_.process.autocastCache.filledAt)
      state_.process.autocastCache.regionLeftAt = loc(call);
    if (enabled == Tristate::Off && device->enabled == Tristate::On)
      state_.process.bfloat16Loss.regionLeft(state_.process.autocast);
    else if (enabled == Tristate::On) state_.process.bfloat16Loss.regionEntered();
    device->enabled = enabled;
    if (enabled != Tristate::Off) device->enabledAt = loc(call);
  };
  auto setDtype = [&](DeviceAutocast* device, unsigned argIndex) {
    auto d = argIndex < call->getNumArgs() ? evalDtypeArgument(call->getArg(argIndex)) : std::nullopt;
    DtypeSet dtype = d ? d->dtype : DtypeSet::unknown();
    if (device) device->dtype = dtype;
  };
  if (name == "set_enabled") setEnabled(&state_.process.autocast.cuda, boolArg(0));
  else if (name == "set_cpu_enabled") setEnabled(&state_.process.autocast.cpu, boolArg(0));
  else if (name == "set_autocast_enabled") setEnabled(deviceArg(0), boolArg(1));
  else if (name == "set_autocast_gpu_dtype") setDtype(&state_.process.autocast.cuda, 0);
  else if (name == "set_autocast_cpu_dtype") setDtype(&state_.process.autocast.cpu, 0);
  else if (name == "set_autocast_dtype") setDtype(deviceArg(0), 1);
  else if (name == "clear_cache") {
    state_.process.autocastCache = {};
  }
}

// The expression as written around `e`: its parentheses and the implicit
// nodes (temporaries, conversions) Clang puts between it and its parent.
const Expr* FunctionAnalysis::asWritten(const Expr* e) {
  for (;;) {
    const auto parents = tu_.context().getParents(*e);
    const Expr* parent = parents.size() == 1 ? parents[0].get<Expr>() : nullptr;
    if (!parent || !(isa<ParenExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ImplicitCastExpr>(parent)))
      return e;
    e = parent;
  }
}

// Whether `e` reduces to a scalar at once: e.sum(), e.mean(), e.norm() with no argument.
bool FunctionAnalysis::fullyReduced(const Expr* e) {
  const auto parents = tu_.context().getParents(*asWritten(e));
  const auto* member = parents.size() == 1 ? parents[0].get<MemberExpr>() : nullptr;
  if (!member) return false;
  const auto grandparents = tu_.context().getParents(*member);
  const auto* call = grandparents.size() == 1 ? grandparents[0].get<CXXMemberCallExpr>() : nullptr;
  if (!call || !llvm::all_of(call->arguments(), [](const Expr* a) { return isa<CXXDefaultArgExpr>(a); })) return false;
  const std::string name = calleeName(call);
  return name == "sum" || name == "mean" || name == "norm";
}

void FunctionAnalysis::emitOp(const std::string& op, const Expr* at, std::vector<const Expr*> inputs,
                              const Expr* destination, bool explicitDtype, bool reducesAllDims) {
  OpEvent event;
  event.op = op;
  event.location = loc(at);
  for (const Expr* input : inputs) {
    event.inputs.push_back(operand(describe(input), evalTensor(input)));
    const Expr* written = asWritten(input)->IgnoreImplicit();
    event.inputs.back().expression = editableLocation(written, tu_.context());
    event.inputs.back().needsParentheses = !isPostfixExpression(written);
  }
  if (destination) event.destination = operand(describe(destination), evalTensor(destination));
  event.explicitDtype = explicitDtype;
  event.reducesAllDims = reducesAllDims;
  event.writtenInFile = editableLocation(at, tu_.context()).has_value();
  event.resultFullyReduced = fullyReduced(at);
  if (isMatmulFamily(op) && !destination) event.operandsChosenByCall = callChoosingOperands(event.inputs, false);
  pushOp(std::move(event), at);
}

void FunctionAnalysis::emitModuleCall(const std::string& op, const Expr* at, const Expr* input,
                                      const Expr* moduleExpr) {
  const TensorFact parameters = evalModule(moduleExpr);
  OpEvent event;
  event.op = op;
  event.location = loc(at);
  event.inputs.push_back(operand("input " + describe(input), evalTensor(input)));
  event.inputs.push_back(operand("the parameters of " + describe(moduleObject(moduleExpr)), parameters));
  event.operandsChosenByCall = callChoosingOperands(event.inputs, true);
  pushOp(std::move(event), at);
  // Autocast caches the low-precision copies of Float weights it casts.
  if (parameters.dtype.contains(ScalarType::Float)) {
    for (auto [device, autocast] :
         {std::pair{Device::CPU, &state_.process.autocast.cpu}, std::pair{Device::CUDA, &state_.process.autocast.cuda}})
      if (autocast->enabled == Tristate::On &&
          autocastPolicy(op, device, tu_.torch()) == AutocastPolicy::LowerPrecision) {
        state_.process.autocastCache = {loc(at), std::nullopt};
      }
  }
}

// Inside a user module converted as a whole: whether the call into it chose
// every operand's dtype, each being one it handed in or one the conversion set
// (the parameters, the last operand where `parametersLast`). A module of the
// dtypes it was built with keeps its findings in its forward, where the
// runtime hooks report them too.
std::optional<size_t> FunctionAnalysis::callChoosingOperands(const std::vector<Operand>& operands,
                                                             bool parametersLast) const {
  if (!ctx_.moduleEntry || ctx_.inCustomBackward) return std::nullopt;
  const ModuleEntry& entry = *ctx_.moduleEntry;
  bool handedIn = false;
  bool ofModule = false;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::optional<Note>& origin = operands[i].origin;
    if (parametersLast && i + 1 == operands.size()) {
      ofModule = origin && entry.moduleOrigin && origin->location.sameStart(*entry.moduleOrigin);
    } else if (origin && std::any_of(entry.inputOrigins.begin(), entry.inputOrigins.end(),
                                     [&](const SourceLocation& in) { return origin->location.sameStart(in); })) {
      handedIn = true;
    } else if (origin && entry.moduleOrigin && origin->location.sameStart(*entry.moduleOrigin)) {
      ofModule = true;
    } else {
      return std::nullopt;
    }
  }
  if (!handedIn || !ofModule || ctx_.callChain.size() < entry.chainLength) return std::nullopt;
  return ctx_.callChain.size() - entry.chainLength;
}

// The context every op event carries: autocast, the custom backward it runs in, the call chain.
void FunctionAnalysis::pushOp(OpEvent event, const Expr* at) {
  event.autocast = state_.process.autocast;
  event.inCustomBackward = ctx_.inCustomBackward;
  event.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  event.callChain = ctx_.callChain;
  endPathIfItRaises(event, at);
  tu_.events().ops.push_back(std::move(event));
}

// Inside a try block, an op that raises ends its path: what follows runs only
// through a catch handler, which may fix the dtypes. Elsewhere the path goes on,
// so that every mismatch in a function is reported, not just the first.
void FunctionAnalysis::endPathIfItRaises(const OpEvent& event, const Expr* at) {
  if (tu_.rules().raises(event) && enclosingTry(at)) state_.reached = false;
}

void FunctionAnalysis::transferBackward(const Expr* loss, const Expr* at) {
  emitOp("backward", at, {loss}, nullptr, false, false);
  scalers_.transferBackward(loss, at);
}

void FunctionAnalysis::transferCall(const CallExpr* call) {
  const CallClassification& c = tu_.classify(call);
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call);
      member && (isTensorListType(member->getImplicitObjectArgument()->getType()) ||
                 isTensorTupleListType(member->getImplicitObjectArgument()->getType()) ||
                 moduleListElementClass(member->getImplicitObjectArgument()->getType())))
    transferListMethod(member, c.name);
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) scalers_.transferKeyedInsertion(member, c.name);
  transferCallEffect(call, c);
  forgetListsPassedByReference(call);
}

void FunctionAnalysis::transferCallEffect(const CallExpr* call, const CallClassification& c) {
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call))
    if (const ValueDecl* optional = engagedOptional(member->getImplicitObjectArgument()))
      if (c.name == "emplace" || c.name == "reset") state_.bools[optional] = c.name == "emplace";
  switch (c.effect) {
  case CallKind::AutocastFunction: return handleAutocastCall(call->getDirectCallee(), call);
  case CallKind::ModuleCall: return transferModuleCall(*c.module, call);
  case CallKind::ScalerApi: return scalers_.transferScalerCall(cast<CXXMemberCallExpr>(call), c.name);
  case CallKind::OptimizerMethod: return scalers_.transferOptimizerCall(cast<CXXMemberCallExpr>(call), c.name);
  case CallKind::RawAmpOp: return scalers_.transferRawAmpOp(call, c.name);
  case CallKind::Annotation: return scalers_.transferAnnotation(call, c.name);
  case CallKind::TensorOperator: return transferOperator(cast<CXXOperatorCallExpr>(call));
  case CallKind::SaveForBackward: return transferSaveForBackward(call);
  case CallKind::ModuleConversion: return transferModuleConversion(cast<CXXMemberCallExpr>(call));
  case CallKind::TensorMethod: return transferTensorMethod(cast<CXXMemberCallExpr>(call), c.name);
  case CallKind::AutogradApply: analyzeAutogradApply(call, c.autogradFunction); return;
  case CallKind::TorchFunction: return transferTorchFunction(call, c.name);
  case CallKind::UserFunction:
  case CallKind::Other: {
    // User functions (a virtual one's overrides that may run): follow each, and join where they end.
    const std::vector<const FunctionDecl*> definitions = calledDefinitions(call, c.definition);
    if (definitions.empty()) return scalers_.transferUnfollowedCall(call);
    if (definitions.size() == 1) {
      if (auto calleeCtx = userCallContext(call, definitions.front()))
        transferUserCall(definitions.front(), *calleeCtx, call);
      return;
    }
    const FlowState before = state_;
    std::optional<FlowState> after;
    for (const FunctionDecl* definition : definitions) {
      state_ = before;
      if (auto calleeCtx = userCallContext(call, definition)) transferUserCall(definition, *calleeCtx, call);
      if (after) after->join(state_);
      else after = state_;
    }
    state_ = std::move(*after);
    return;
  }
  }
}

void FunctionAnalysis::transferOperator(const CXXOperatorCallExpr* op) {
  const OverloadedOperatorKind kind = op->getOperator();
  if (kind == OO_Equal) return assign(op->getArg(0), op->getArg(1), op);
  static const std::map<OverloadedOperatorKind, std::string> kCompound = {
      {OO_PlusEqual, "add_"}, {OO_MinusEqual, "sub_"}, {OO_StarEqual, "mul_"}, {OO_SlashEqual, "div_"}};
  std::vector<const Expr*> inputs{ignoreWrappers(op->getArg(0))};
  if (isTensorType(op->getArg(1)->getType())) inputs.push_back(ignoreWrappers(op->getArg(1)));
  emitOp(kCompound.at(kind), op, inputs, ignoreWrappers(op->getArg(0)), false, false);
  if (kind == OO_SlashEqual || kind == OO_StarEqual)
    scalers_.checkGradientsDividedBack(op->getArg(0), op->getArg(1), kind == OO_StarEqual, op);
}

// ctx->save_for_backward({x, w}) in a custom Function's forward.
void FunctionAnalysis::transferSaveForBackward(const CallExpr* call) {
  result_.savedForBackward = {};
  for (const Expr* t : tensorArgs(call)) result_.savedForBackward.elements.push_back(evalTensor(t));
}

// model->to(torch::kHalf) changes the dtype of every parameter of the module.
void FunctionAnalysis::transferModuleConversion(const CXXMemberCallExpr* call) {
  const Expr* object = ignoreWrappers(call->getImplicitObjectArgument());
  for (const Expr* arg : call->arguments()) {
    // A dtype the analysis cannot evaluate still converts: to some dtype, unknown which.
    auto d = evalDtypeArgument(arg);
    if (!d && isScalarTypeType(ignoreWrappers(arg)->getType())) d = TensorFact{};
    if (d) {
      if (const ValueDecl* target = declOf(moduleObject(object))) {
        TensorFact f = *d;
        f.origin = note(
            call, fmt::format("the parameters of '{}' became {} here", target->getName().str(), f.dtype.toString()));
        f.originNamed = true;
        if (convertsAnotherObjectsField(moduleObject(object))) f = TensorFact{};
        state_.modules[target] = f;
        // `for (auto& layer : layers) layer->to(dtype)`: one more element of the list converted.
        if (const auto* var = dyn_cast<VarDecl>(target); var && var->isCXXForRangeDecl())
          convertListElement(loopRange(var), f);
      } else if (const Expr* container = accessedContainer(moduleObject(object))) {
        convertListElement(container, *d);  // layers[0]->to(dtype)
      }
      forgetConvertedMembers(moduleImplClass(object->getType()));
      forgetAliasedModules(declOf(moduleObject(object)), moduleImplClass(object->getType()));
      break;
    }
  }
}

// `deploy->trunk->to(kHalf)` names the field every object of the class
// shares: with another object of that class at hand (the model being
// trained), whose submodule changed is not followed, so its dtype is unknown.
bool FunctionAnalysis::convertsAnotherObjectsField(const Expr* module) {
  const auto* member = dyn_cast<MemberExpr>(ignoreWrappers(module));
  if (!member || !isa<FieldDecl>(member->getMemberDecl())) return false;
  const Expr* base = ignoreWrappers(member->getBase());
  if (const auto* arrow = dyn_cast<CXXOperatorCallExpr>(base); arrow && arrow->getOperator() == OO_Arrow)
    base = ignoreWrappers(arrow->getArg(0));
  const ValueDecl* owner = isa<CXXThisExpr>(base) ? nullptr : declOf(base);
  const CXXRecordDecl* impl = owner ? moduleImplClass(owner->getType()) : nullptr;
  return impl && std::any_of(state_.modules.begin(), state_.modules.end(), [&](const auto& entry) {
           return entry.first != owner && moduleImplClass(entry.first->getType()) == impl;
         });
}

// An element of a list of modules converted: which one is not followed, so
// any element may have either dtype.
void FunctionAnalysis::convertListElement(const Expr* container, const TensorFact& converted) {
  const ValueDecl* d = container && moduleListElementClass(container->getType()) ? declOf(container) : nullptr;
  if (d && followsOwningModule(container))
    state_.lists[d] = ListFact{{joinFacts(evalModule(container), converted)}, false};
  else if (auto it = d ? state_.lists.find(d) : state_.lists.end(); it != state_.lists.end())
    it->second = ListFact{{joinFacts(it->second.anyElement(), converted)}, false};
}

// `for (auto* m : {a.get(), b.get()}) m->to(kBFloat16)`: a pointer, a
// reference or a loop variable converts modules the analysis cannot name, so
// no module of that class keeps a known dtype.
void FunctionAnalysis::forgetAliasedModules(const ValueDecl* target, const CXXRecordDecl* impl) {
  const auto* var = dyn_cast_or_null<VarDecl>(target);
  if (!impl || isa_and_nonnull<FieldDecl>(target) ||
      (var && !var->isCXXForRangeDecl() && !var->getType()->isPointerType() && !var->getType()->isReferenceType()))
    return;
  for (auto& [d, fact] : state_.modules)
    if (d != target && moduleImplClass(d->getType()) == impl) fact = TensorFact{};
  for (auto& [d, list] : state_.lists)
    if (moduleListElementClass(d->getType()) == impl) list = ListFact::unknown();
}

// model->to(dtype) converts the tensors and submodules registered by the
// module and by every submodule: what the analysis knew of them from their
// constructors (embed_->to(kHalf)) is gone; they follow the module again.
void FunctionAnalysis::forgetConvertedMembers(const CXXRecordDecl* impl) {
  std::vector<const CXXRecordDecl*> pending{impl};
  std::set<const CXXRecordDecl*> seen;
  // Registered tensors and submodules follow the module; of its lists, those of modules do.
  auto followsOwner = [&](const FieldDecl* field) {
    return holdsTensorElements(field->getType()) ? moduleListElementClass(field->getType()) != nullptr
                                                 : !tu_.unregisteredModuleTensor(field);
  };
  auto eraseFieldsOf = [&](auto& facts, const CXXRecordDecl* owner) {
    for (auto it = facts.begin(); it != facts.end();) {
      const auto* field = dyn_cast<FieldDecl>(it->first);
      it = field && field->getParent() == owner && followsOwner(field) ? facts.erase(it) : std::next(it);
    }
  };
  while (!pending.empty()) {
    const CXXRecordDecl* owner = pending.back();
    pending.pop_back();
    if (!owner || !isUserModule(owner) || !seen.insert(owner).second) continue;
    state_.convertedModules.insert(owner);
    eraseFieldsOf(state_.tensors, owner);
    eraseFieldsOf(state_.modules, owner);
    eraseFieldsOf(state_.lists, owner);
    // Its submodules, and the modules of its lists (`std::vector<Block> blocks`).
    for (const FieldDecl* field : owner->fields()) {
      pending.push_back(moduleImplClass(field->getType()));
      pending.push_back(moduleListElementClass(field->getType()));
    }
  }
}

// `for (auto& item : copy->named_parameters()) item.value().set_data(src.to(dtype));`:
// a conversion of the module whose parameters the loop walks, by hand.
void FunctionAnalysis::transferParameterReplacement(const CXXMemberCallExpr* call) {
  const Expr* parameter = ignoreWrappers(call->getImplicitObjectArgument());
  // The loop's element, or a local reference to it (`auto& p = item.value();`).
  auto element = [](const Expr* e) {
    if (const auto* value = dyn_cast<CXXMemberCallExpr>(e); value && calleeName(value) == "value")
      return ignoreWrappers(value->getImplicitObjectArgument());
    return e;
  };
  parameter = element(parameter);
  if (const auto* alias = dyn_cast_or_null<VarDecl>(declOf(parameter));
      alias && alias->getType()->isReferenceType() && !alias->isCXXForRangeDecl() && alias->getInit())
    parameter = element(ignoreWrappers(alias->getInit()));
  const auto* var = dyn_cast_or_null<VarDecl>(declOf(parameter));
  const auto* walked = var ? dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(loopRange(var))) : nullptr;
  const std::string walk = walked ? calleeName(walked) : "";
  if (walk != "parameters" && walk != "named_parameters") return;
  const Expr* module = ignoreWrappers(walked->getImplicitObjectArgument());
  const CXXRecordDecl* impl = moduleImplClass(module->getType());
  const ValueDecl* target = declOf(moduleObject(module));
  if (!impl || !target || call->getNumArgs() != 1) return;
  TensorFact f = evalTensor(call->getArg(0));
  f.origin =
      note(call, fmt::format("the parameters of '{}' became {} here", target->getName().str(), f.dtype.toString()));
  f.originNamed = true;
  state_.modules[target] = f;
  forgetConvertedMembers(impl);
}

// `layer->weight.set_data(layer->weight.to(dtype))`: the tensor, a module's
// field among them (for every module of its class: the analysis cannot tell
// which), holds what it was given. A loop over a module's parameters is
// applied before the loop (transferParameterReplacementLoop).
void FunctionAnalysis::transferSetData(const Expr* object, const CXXMemberCallExpr* call) {
  const ValueDecl* target = declOf(object);
  if (!target || !isa<FieldDecl, VarDecl>(target) || call->getNumArgs() != 1) return;
  if (const auto* var = dyn_cast<VarDecl>(target);
      var && (var->isCXXForRangeDecl() || var->getType()->isReferenceType()))
    return;
  TensorFact f = evalTensor(call->getArg(0));
  f.origin = note(call, fmt::format("'{}' became {} here", target->getName().str(), f.dtype.toString()));
  f.originNamed = true;
  state_.tensors[target] = f;
}

// `if (!buf.defined() || buf.numel() < n) buf = torch::empty({n}, opts);` (a
// workspace made on first use): where the test finds it made, it was made
// by this same assignment, so an unknown buffer has what the assignment gives.
void FunctionAnalysis::assumeLazyInitialization(const CXXMemberCallExpr* defined) {
  const Expr* object = ignoreWrappers(defined->getImplicitObjectArgument());
  const ValueDecl* d = declOf(object);
  if (!d || !evalTensor(object).dtype.isUnknown()) return;
  const IfStmt* branch = nullptr;
  DynTypedNode node = DynTypedNode::create(*defined);
  for (int up = 0; up < 8 && !branch; ++up) {
    const auto parents = tu_.context().getParents(node);
    if (parents.empty() || !parents[0].get<Expr>()) {
      branch = parents.empty() ? nullptr : parents[0].get<IfStmt>();
      break;
    }
    node = parents[0];
  }
  if (!branch) return;
  const Stmt* then = branch->getThen();
  if (const auto* block = dyn_cast<CompoundStmt>(then); block && block->size() >= 1) then = block->body_front();
  if (const auto* cleanups = dyn_cast<ExprWithCleanups>(then)) then = cleanups->getSubExpr();
  const Expr *lhs = nullptr, *rhs = nullptr;
  if (const auto* assignment = dyn_cast<BinaryOperator>(then); assignment && assignment->getOpcode() == BO_Assign)
    lhs = assignment->getLHS(), rhs = assignment->getRHS();
  else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(then);
           op && op->getOperator() == OO_Equal && op->getNumArgs() == 2)
    lhs = op->getArg(0), rhs = op->getArg(1);
  if (!lhs || declOf(ignoreWrappers(lhs)) != d) return;
  TensorFact made = evalTensor(rhs);
  if (made.dtype.isUnknown()) return;
  state_.tensors[d] = named(made, d);
}

void FunctionAnalysis::transferTensorMethod(const CXXMemberCallExpr* call, const std::string& name) {
  const Expr* object = ignoreWrappers(call->getImplicitObjectArgument());
  if (name == "defined") return assumeLazyInitialization(call);
  if (name == "backward") return transferBackward(object, call);
  if (name == "set_data") return transferSetData(object, call);
  std::vector<const Expr*> args = tensorArgs(call);
  if ((name == "div_" || name == "mul_") && call->getNumArgs() >= 1)
    scalers_.checkGradientsDividedBack(object, call->getArg(0), name == "mul_", call);
  scalers_.checkGradientsClippedByHand(object, call, name);
  if (auto base = inPlaceBase(name)) {
    std::vector<const Expr*> inputs;
    if (!isMatmulFamily(*base) && *base != "copy" && !copiesSourceExactly(*base)) inputs.push_back(object);
    inputs.insert(inputs.end(), args.begin(), args.end());
    emitOp(name, call, inputs, object, false, false);
    return;
  }
  std::vector<const Expr*> inputs{object};
  inputs.insert(inputs.end(), args.begin(), args.end());
  const bool allDims = call->getNumArgs() == 0 || llvm::all_of(call->arguments(), [](const Expr* a) {
                         return isScalarTypeType(a->getType()) || isa<CXXDefaultArgExpr>(ignoreWrappers(a));
                       });
  emitOp(name, call, inputs, nullptr, hasExplicitDtype(call), allDims);
}

void FunctionAnalysis::transferTorchFunction(const CallExpr* call, const std::string& name) {
  std::vector<const Expr*> args = tensorArgs(call);
  if (name == "backward" && !args.empty()) return transferBackward(args.front(), call);
  if (name == "clip_grad_norm_" || name == "clip_grad_value_") return scalers_.transferClip(call);
  std::string op = atenOpName(call->getDirectCallee());
  const Expr* destination = nullptr;
  if (op.size() > 5 && op.compare(op.size() - 5, 5, "_outf") == 0) {
    op.pop_back();  // mm_outf(self, mat2, out): out comes last
    if (!args.empty()) {
      destination = args.back();
      args.pop_back();
    }
  } else if (outVariantBase(op)) {
    if (!args.empty()) {  // mm_out(out, self, mat2): out comes first
      destination = args.front();
      args.erase(args.begin());
    }
  } else if (inPlaceBase(op) && !args.empty()) {
    destination = args.front();  // at::mul_(self, other)
  }
  const bool allDims = args.size() == 1 && llvm::all_of(call->arguments(), [](const Expr* a) {
                         return isTensorType(a->getType()) || isScalarTypeType(a->getType()) ||
                                isa<CXXDefaultArgExpr>(ignoreWrappers(a));
                       });
  emitOp(op, call, args, destination, hasExplicitDtype(call), allDims);
}

void FunctionAnalysis::transferReturn(const ReturnStmt* ret) {
  const ValueDecl* d = ret->getRetValue() ? declOf(ret->getRetValue()) : nullptr;
  std::optional<FieldFacts> listed = aggregateFields(ret->getRetValue());
  if ((d && state_.structs.count(d)) || listed) {
    const FieldFacts& fields = listed ? *listed : state_.structs[d];
    if (!result_.returnedFields) {
      result_.returnedFields = fields;
    } else {
      FlowState::joinMap(*result_.returnedFields, fields, joinFacts);
    }
    return;
  }
  const Expr* value = ret->getRetValue();
  if (value && isOptimizerType(value->getType())) return scalers_.transferOptimizerReturn(value, result_);
  // `return {model, std::move(optimizer), scaler};`: the optimizer it holds.
  if (const auto elements = value && isStdTuple(value->getType()) ? tupleElements(value) : std::nullopt)
    for (const Expr* element : *elements)
      if (isOptimizerType(element->getType())) scalers_.transferOptimizerReturn(element, result_);
  if (value && holdsTensorElements(value->getType())) {
    const ListFact list = evalList(value);
    result_.returnedList = result_.returnedList ? joinLists(*result_.returnedList, list) : list;
    return;
  }
  // A module's fact is its parameters' dtype.
  const bool module = value && moduleImplClass(value->getType());
  if (value && (module || isTensorType(value->getType()))) {
    const TensorFact fact = module ? evalModule(value) : evalTensor(value);
    result_.returned = result_.returned.dtype.isBottom() ? fact : joinFacts(result_.returned, fact);
    returnsTensor_ = true;
  } else if (value && isScalarTypeType(value->getType())) {
    // A helper that resolves a dtype (`dtype_of(cfg.precision)`): what its paths return.
    const TensorFact fact = evalDtypeArgument(value).value_or(TensorFact{});
    result_.returned = result_.returned.dtype.isBottom() ? fact : joinFacts(result_.returned, fact);
  } else if (value) {
    result_.returned = TensorFact{};
  }
}

// A loop that replaces every parameter of a module, or a field of every
// module of a container (`for (auto& layer : layers) layer->weight.set_data(...)`),
// converts them before its first iteration as much as after its last: applied
// where the loop's range is declared, so that the path that skips the body
// (none does) is not joined in.
void FunctionAnalysis::transferParameterReplacementLoop(const DeclStmt* rangeDecl) {
  const auto* range = rangeDecl->isSingleDecl() ? dyn_cast<VarDecl>(rangeDecl->getSingleDecl()) : nullptr;
  if (!range || !range->isImplicit() || !range->getInit()) return;
  const auto parents = tu_.context().getParents(*rangeDecl);
  const auto* loop = parents.empty() ? nullptr : parents[0].get<CXXForRangeStmt>();
  if (!loop || loop->getRangeStmt() != rangeDecl) return;
  const auto* walked = dyn_cast<CXXMemberCallExpr>(ignoreWrappers(range->getInit()));
  const bool overParameters =
      walked && (calleeName(walked) == "parameters" || calleeName(walked) == "named_parameters");
  struct Finder : RecursiveASTVisitor<Finder> {
    const VarDecl* element = nullptr;
    std::vector<const CXXMemberCallExpr*> replacements;
    // element.requires_grad_(false), or on a schedule (`set_requires_grad(epoch >= unfreeze_epoch)`:
    // frozen on the epochs before); element.requires_grad_(true) unfreezes.
    const CXXMemberCallExpr* freeze = nullptr;
    bool unfreezes = false;
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr* call) {
      const std::string name = calleeName(call);
      if (name == "set_data") replacements.push_back(call);
      if ((name != "requires_grad_" && name != "set_requires_grad") || call->getNumArgs() != 1 ||
          declOf(ignoreWrappers(call->getImplicitObjectArgument())) != element)
        return true;
      const Expr* on = ignoreWrappers(call->getArg(0));
      const auto* literal = dyn_cast<CXXBoolLiteralExpr>(on);
      const auto* schedule = dyn_cast<BinaryOperator>(on);
      if ((literal && !literal->getValue()) || (schedule && schedule->isRelationalOp())) freeze = call;
      unfreezes = literal && literal->getValue();
      return true;
    }
  } finder;
  finder.element = loop->getLoopVariable();
  finder.TraverseStmt(const_cast<Stmt*>(loop->getBody()));
  // for (auto& p : encoder->parameters()) p.requires_grad_(false): an
  // optimizer built from them gets no gradients (DL207).
  if ((finder.freeze || finder.unfreezes) && walked && calleeName(walked) == "parameters")
    if (const ValueDecl* module = declOf(moduleObject(walked->getImplicitObjectArgument()))) {
      const auto* key = cast<ValueDecl>(module->getCanonicalDecl());
      if (finder.freeze) state_.frozenModules[key] = loc(finder.freeze);
      else state_.frozenModules.erase(key);
    }
  for (const CXXMemberCallExpr* replacement : finder.replacements) {
    if (overParameters) {
      transferParameterReplacement(replacement);
      continue;
    }
    const Expr* object = ignoreWrappers(replacement->getImplicitObjectArgument());
    const auto* field = dyn_cast<MemberExpr>(object);
    if (field && declOf(moduleObject(ignoreWrappers(field->getBase()))) == loop->getLoopVariable())
      transferSetData(object, replacement);
  }
}

void FunctionAnalysis::transferStmt(const Stmt* s) {
  if (const auto* decl = dyn_cast<DeclStmt>(s)) {
    transferParameterReplacementLoop(decl);
    scalers_.transferDeclaration(decl);
    for (const Decl* d : decl->decls())
      if (const auto* var = dyn_cast<VarDecl>(d))
        bindDeclaration(var, var->getInit(), toLocation(var->getSourceRange()));
    return;
  }
  if (const auto* ret = dyn_cast<ReturnStmt>(s)) return transferReturn(ret);
  if (const auto* construct = dyn_cast<CXXConstructExpr>(s)) return transferConstruct(construct);
  if (const auto* call = dyn_cast<CallExpr>(s)) return transferCall(call);
  // Built-in assignments: `prev_enabled_ = at::autocast::is_enabled();` in a
  // guard's constructor body, `s.amp_dtype = it->second;` in a config parser.
  if (const auto* op = dyn_cast<BinaryOperator>(s); op && op->getOpcode() == BO_Assign) {
    if (op->getType()->isBooleanType()) {
      if (const ValueDecl* target = declOf(op->getLHS())) bindBool(target, op->getRHS());
    } else if (isScalarTypeType(op->getType()) || isTensorOptionsType(op->getType())) {
      assign(op->getLHS(), op->getRHS(), op);
    }
  }
}

// A protocol finding made here whose earlier events (the first unscale, the
// scaled backward) all happened before this call, in the caller or in another
// helper it called: this function alone does nothing wrong, calling it there
// does (`grad_norm_for_logging(scaler, opt)` after `unscale_and_clip(scaler,
// opt)`). It is reported at that call, with this place as a note. An
// override (a trainer's on_after_backward() hook) is the user's code where
// the base's template method calls it: its findings stay in it.
bool FunctionAnalysis::placeAtCall(Finding& finding) {
  if (ctx_.callChain.empty() || !ctx_.caller || finding.notes.empty() || !fn_->getBody() ||
      !isCallOrderFinding(finding))
    return false;
  if (const auto* method = dyn_cast<CXXMethodDecl>(fn_); method && method->size_overridden_methods() > 0) return false;
  // A method its own class's method calls (`clipGradients()` in `trainStep()`)
  // is the training loop's own code, split up: the finding stays where it
  // happened, as in the Python front end.
  if (const auto* method = dyn_cast<CXXMethodDecl>(fn_); method && !method->isStatic())
    if (const auto* callerMethod = dyn_cast_or_null<CXXMethodDecl>(ctx_.caller);
        callerMethod && callerMethod->getParent()->getCanonicalDecl() == method->getParent()->getCanonicalDecl())
      return false;
  // An earlier event in this function, or in a function it calls (the first
  // unscale in its own helper): the finding is this function's.
  std::vector<SourceLocation> bodies{toLocation(fn_->getBody()->getSourceRange())};
  containsStmt(fn_->getBody(), [&](const Stmt* s) {
    const auto* call = dyn_cast<CallExpr>(s);
    const FunctionDecl* callee = call && call->getDirectCallee() ? call->getDirectCallee()->getDefinition() : nullptr;
    if (callee && callee->getBody() && isUserCode(callee->getLocation(), tu_.context().getSourceManager()))
      bodies.push_back(toLocation(callee->getBody()->getSourceRange()));
    return false;
  });
  // The finding's own statement, outside any loop of this function, ran in
  // an earlier call of it (a helper's unscale_, called once per micro-batch):
  // that is the caller's doing too.
  const bool inLoop = containsStmt(fn_->getBody(), [&](const Stmt* s) {
    if (!isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(s)) return false;
    const SourceLocation loop = toLocation(s->getSourceRange());
    return loop.file == finding.location.file && loop.line <= finding.location.line &&
           finding.location.line <= loop.endLine;
  });
  auto withinThisFunction = [&](const Note& n) {
    if (!inLoop && n.location.file == finding.location.file && n.location.line == finding.location.line) return false;
    return std::any_of(bodies.begin(), bodies.end(), [&](const SourceLocation& body) {
      return n.location.file == body.file && n.location.line >= body.line && n.location.line <= body.endLine;
    });
  };
  if (std::any_of(finding.notes.begin(), finding.notes.end(), withinThisFunction)) return false;
  const auto* method = dyn_cast<CXXMethodDecl>(fn_);
  const std::string where =
      method && method->getParent()->isLambda() ? "in the lambda" : "in '" + fn_->getNameAsString() + "'";
  finding.notes.insert(finding.notes.begin(), Note{finding.location, where + " here"});
  finding.location = ctx_.callChain.front().location;
  finding.fix.reset();  // its edit was for this function's code, which every caller shares
  return true;
}

void FunctionAnalysis::transfer(const CFGElement& element) {
  if (auto stmt = element.getAs<CFGStmt>()) {
    // A protocol finding made in a helper (a clip in a lambda called through
    // a std::function) names the calls that led there, as op findings do:
    // each function on the way adds the call into it.
    std::vector<Finding>& protocolFindings = tu_.events().protocolFindings;
    size_t& placed = tu_.events().protocolFindingsPlaced;
    const size_t before = protocolFindings.size();
    transferStmt(stmt->getStmt());
    // Those from `placed` on were made here; the others, in a callee, were placed there.
    for (size_t i = before; i < protocolFindings.size(); ++i) {
      if (i >= placed && placeAtCall(protocolFindings[i])) continue;
      if (!ctx_.callChain.empty()) protocolFindings[i].notes.push_back(ctx_.callChain.front());
    }
    placed = protocolFindings.size();
    return;
  }
  if (auto initializer = element.getAs<CFGInitializer>()) {
    // A constructor's member initializer, or a member's default initializer.
    const CXXCtorInitializer* init = initializer->getInitializer();
    if (const FieldDecl* field = init->getMember()) {
      const Expr* value = init->getInit();
      if (const auto* fallback = dyn_cast_or_null<CXXDefaultInitExpr>(value)) value = fallback->getExpr();
      bindDeclaration(field, value, value ? loc(value) : toLocation(field->getSourceRange()));
    }
    return;
  }
  if (auto dtor = element.getAs<CFGAutomaticObjDtor>()) {
    if (disablesGrad(dtor->getVarDecl()->getType())) state_.process.gradDisabled = false;
    // RAII guards: the destructor of a user class runs at scope exit.
    const CXXDestructorDecl* d = dtor->getDestructorDecl(tu_.context());
    if (d) runDestructor(d->getParent());
  }
}

// A class's destructor body, then its bases' (an AutocastDisabled guard
// derived from the region guard whose destructor restores autocast).
void FunctionAnalysis::runDestructor(const CXXRecordDecl* record) {
  if (!record || !record->hasDefinition()) return;
  if (const CXXDestructorDecl* d = record->getDestructor())
    if (const FunctionDecl* def = d->getDefinition(); def && isAnalyzable(def))
      if (auto c = calleeContext(Inherit::ProcessOnly, std::nullopt)) transferUserCall(def, *c);
  for (auto base = record->bases_end(); base != record->bases_begin();) {
    --base;
    runDestructor(base->getType()->getAsCXXRecordDecl());
  }
}

}  // namespace dtype_lint::analyzer::flow
