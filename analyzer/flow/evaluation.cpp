// Evaluation: the dtype facts of expressions at the current program point.
// Pure: never changes the state or emits events.
#include <fmt/format.h>

#include "dtype_lint/dl203_manual_scaling.h"
#include "flow/ast_helpers.h"
#include "flow/function_analysis.h"
#include "flow/settings.h"
#include "torch_api.h"
#include "clang/AST/ParentMapContext.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

// x.scalar_type(), x.dtype(), x.options() of a tensor x.
static bool readsTensorDtype(const Expr* e) {
  const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(e));
  if (!call || !isTensorType(ignoreWrappers(call->getImplicitObjectArgument())->getType())) return false;
  const std::string name = calleeName(call);
  return name == "scalar_type" || name == "dtype" || name == "options";
}

std::optional<SourceLocation> FunctionAnalysis::writtenDtypeConstant(const Expr* argument) {
  const Expr* e = ignoreConversions(argument);
  if (!isa<DeclRefExpr>(e) || !evaluateScalarTypeConstant(e)) return std::nullopt;
  return editableLocation(e, tu_.context());
}

std::optional<bool> FunctionAnalysis::evalDtypeEngaged(const Expr* optional) {
  const Expr* e = ignoreWrappers(optional);
  if (!e) return std::nullopt;
  if (makesEmptyOptional(e)) return false;
  if (evaluateScalarTypeConstant(e)) return true;
  if (const auto* construct = dyn_cast<CXXConstructExpr>(e))
    return construct->getNumArgs() == 1 ? evalDtypeEngaged(construct->getArg(0)) : std::nullopt;
  if (const auto lookup = settingLookup(e))
    if (const FlagAssumption* assumed = ctx_.assumedSetting(lookup->setting); assumed && assumed->value)
      for (const auto& [key, mapped] : lookup->entries)
        if (key == assumed->setting) return mapped ? evalDtypeEngaged(mapped) : std::nullopt;
  if (const Expr* initial = tu_.constructorDtype(e)) return evalDtypeEngaged(initial);
  return std::nullopt;
}

std::optional<TensorFact> FunctionAnalysis::evalDtypeArgument(const Expr* e) {
  e = ignoreWrappers(e);
  if (!e || isa<CXXDefaultArgExpr>(e)) return std::nullopt;
  if (auto constant = evaluateScalarTypeConstant(e))
    return TensorFact{DtypeSet(*constant), Note{loc(e), fmt::format("became {} here", name(*constant))}};
  if (const auto* construct = dyn_cast<CXXConstructExpr>(e)) {
    // TensorOptions(kHalf), optional<ScalarType>(kHalf), TypeMeta from ScalarType.
    for (const Expr* arg : construct->arguments())
      if (auto d = evalDtypeArgument(arg)) return d;
    return std::nullopt;
  }
  // dtypes.at(cfg.precision), under the precision this analysis assumes.
  if (const auto lookup = settingLookup(e))
    if (const FlagAssumption* assumed = ctx_.assumedSetting(lookup->setting)) {
      for (const auto& [key, mapped] : lookup->entries)
        if (assumed->value && key == assumed->setting) return evalDtypeArgument(mapped);
      return TensorFact{};
    }
  // *amp_dtype of a std::optional<ScalarType>: what it holds.
  if (const auto* deref = dyn_cast<CXXOperatorCallExpr>(e); deref && deref->getOperator() == OO_Star &&
                                                            deref->getNumArgs() == 1 &&
                                                            isScalarTypeType(deref->getArg(0)->getType()))
    return evalDtypeArgument(deref->getArg(0));
  if (const auto* call = dyn_cast<CallExpr>(e)) return evalDtypeCall(call, calleeName(call));
  // cfg.bf16 ? kBFloat16 : kHalf, on a path where the flag is known; else
  // the dtype both give (`it == dtypes.end() ? kHalf : it->second` where the
  // lookup gives Half). Two different ones stay unknown: "Half or Float" would
  // hide the module dtypes an unknown input defers to.
  if (const auto* choice = dyn_cast<ConditionalOperator>(e)) {
    if (const auto flag = evalFlag(choice->getCond()))
      return evalDtypeArgument(*flag ? choice->getTrueExpr() : choice->getFalseExpr());
    const auto whenTrue = evalDtypeArgument(choice->getTrueExpr());
    const auto whenFalse = evalDtypeArgument(choice->getFalseExpr());
    if (whenTrue && whenFalse && whenTrue->dtype.single() && whenTrue->dtype == whenFalse->dtype) return whenTrue;
  }
  const bool dtypeValued = isScalarTypeType(e->getType()) || isTensorOptionsType(e->getType());
  if (const auto* ref = dyn_cast<DeclRefExpr>(e); ref && reassignableDtype(ref->getDecl()))
    if (auto it = state_.tensors.find(ref->getDecl()); it != state_.tensors.end()) return it->second;
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
    // A local options or dtype variable: auto opts = torch::TensorOptions().dtype(torch::kHalf);
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl());
        var && var->getInit() && var->hasLocalStorage() && !isa<ParmVarDecl>(var) && dtypeValued)
      return evalDtypeArgument(var->getInit());
  }
  if (const auto* ref = dyn_cast<DeclRefExpr>(e); ref && dtypeValued && isa<ParmVarDecl>(ref->getDecl())) {
    // A dtype parameter: its caller's argument.
    if (auto it = state_.tensors.find(ref->getDecl()); it != state_.tensors.end()) return it->second;
  }
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
    // A constant: const auto kDtype = torch::kHalf; at namespace scope.
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl());
        var && var->getInit() && var->hasGlobalStorage() && var->getType().isConstQualified() && dtypeValued)
      return evalDtypeArgument(var->getInit());
  }
  if (const auto* member = dyn_cast<MemberExpr>(e); member && dtypeValued) {
    // A dtype field the program sets to one of a few dtypes: the one this
    // analysis assumes, where the path does not say (`s.amp_dtype = it->second`).
    // Or the one dtype every write gives it (a default, and a table that holds only it).
    auto assumedDtype = [&]() -> std::optional<TensorFact> {
      const FlagAssumption* assumed = ctx_.assumedSetting(cast<ValueDecl>(member->getMemberDecl()->getCanonicalDecl()));
      std::optional<ScalarType> dtype = assumed && assumed->value ? scalarTypeFromName(assumed->setting) : std::nullopt;
      // Looked up with a setting analyzed per value: the dtype its value's key gives.
      if (const auto* keyed = tu_.dtypeChoiceKeys(member->getMemberDecl()); keyed && !assumed)
        for (const auto& [setting, dtypes] : *keyed)
          if (const FlagAssumption* key = ctx_.assumedSetting(setting); key && key->value)
            if (auto it = dtypes.find(key->setting); it != dtypes.end()) dtype = it->second;
      if (const auto* only = tu_.dtypeChoices(member->getMemberDecl()); !assumed && only && only->size() == 1)
        dtype = only->front();
      if (!dtype) return std::nullopt;
      return TensorFact{DtypeSet(*dtype), Note{loc(e), fmt::format("became {} here", name(*dtype))}};
    };
    // A field of a local config struct whose dtype the flow follows.
    if (auto fields = state_.structs.find(structBase(member)); fields != state_.structs.end())
      if (auto field = fields->second.find(dyn_cast<FieldDecl>(member->getMemberDecl()));
          field != fields->second.end()) {
        // The path's dtypes, unless they are several and the setting's value is among them.
        const DtypeSet onPath = field->second.dtype;
        if (!onPath.single())
          if (auto assumed = assumedDtype();
              assumed && (onPath.isUnknown() || onPath.contains(*assumed->dtype.single())))
            return assumed;
        return field->second;
      }
    if (auto assumed = assumedDtype()) return assumed;
  }
  if (const Expr* fallback = dtypeValued ? tu_.unwrittenFieldDefault(e) : nullptr) return evalDtypeArgument(fallback);
  if (const Expr* initial = dtypeValued ? tu_.constructorDtype(e) : nullptr)
    if (auto fact = evalDtypeArgument(initial); fact && !fact->dtype.isUnknown()) return fact;
  // Options or a dtype the analysis cannot see into (a parameter, a member):
  // some dtype, unknown which.
  if (dtypeValued) return TensorFact{};
  return std::nullopt;
}

std::optional<TensorFact> FunctionAnalysis::evalDtypeCall(const CallExpr* call, const std::string& name) {
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    const Expr* object = ignoreWrappers(member->getImplicitObjectArgument());
    // x.dtype(), x.scalar_type(), x.options()
    if (readsTensorDtype(member)) return evalTensor(object);
    // TensorOptions().dtype(kHalf).device(...): the innermost dtype() wins.
    if (isTensorOptionsType(object->getType()) || isTensorOptionsType(call->getType())) {
      if (name == "dtype" && call->getNumArgs() == 1) return evalDtypeArgument(call->getArg(0));
      // opts.dtype(): the options' dtype (some dtype, when they set none the analysis sees).
      if (name == "dtype") return evalDtypeArgument(object).value_or(TensorFact{});
      // opts.device(), opts.layout(): a getter's value carries no dtype (torch::empty(shape, opts.device()) is Float).
      if (!isTensorOptionsType(call->getType())) return std::nullopt;
      return evalDtypeArgument(object);
    }
    if (name == "value" || name == "toScalarType") return evalDtypeArgument(object);
    // cfg.autocast_dtype.value_or(kBFloat16): a dtype the optional was given
    // (an empty one evaluates to none), else unknown.
    if (name == "value_or" && call->getNumArgs() == 1 && isScalarTypeType(call->getType())) {
      const auto held = evalDtypeArgument(object);
      return held && !held->dtype.isUnknown() ? *held : TensorFact{};
    }
  }
  // torch::dtype(kHalf), at::device(kCUDA).dtype(...)
  if (name == "dtype" && call->getNumArgs() == 1) return evalDtypeArgument(call->getArg(0));
  if (name == "typeMetaToScalarType" || name == "scalarTypeToTypeMeta") return evalDtypeArgument(call->getArg(0));
  if (isTensorOptionsType(call->getType())) return std::nullopt;  // torch::device(...), requires_grad()
  if (isScalarTypeType(call->getType())) {
    if (const FunctionResult* r = userCallResult(call); r && !r->returned.dtype.isBottom()) return r->returned;
    return TensorFact{};
  }
  return std::nullopt;
}

TensorFact FunctionAnalysis::evalModule(const Expr* e) {
  e = moduleObject(e);
  if (!e) return {};
  // block->as<ConvBlockImpl>(): the module the holder or pointer holds.
  if (const auto* as = dyn_cast<CXXMemberCallExpr>(e); as && calleeName(as) == "as")
    return evalModule(as->getImplicitObjectArgument());
  // layers[i], heads_.back(): what the list of modules holds. A module's own
  // list of the submodules it registered follows it, as its other submodules do.
  if (const Expr* container = accessedContainer(e); container && moduleListElementClass(container->getType())) {
    if (followsOwningModule(container)) return evalModule(container);
    return accessedElement(evalList(container), cast<CallExpr>(e)).value_or(TensorFact{});
  }
  if (const ValueDecl* d = declOf(e)) {
    // The elements of a ModuleList the module registered share its dtype too
    // (`for (const auto& block : *blocks)`).
    const Expr* range = ctx_.thisModule ? loopRange(d) : nullptr;
    if (const Expr* list = range ? moduleObject(range) : nullptr;
        list && isa_and_nonnull<FieldDecl>(declOf(list)) && moduleImplClass(list->getType()))
      return *ctx_.thisModule;
    if (auto it = state_.modules.find(d); it != state_.modules.end()) return it->second;
    // model->fc1: a submodule shares its parent's dtype.
    if (const auto* member = dyn_cast<MemberExpr>(e); member &&
                                                      !isa<CXXThisExpr>(member->getBase()->IgnoreImpCasts()) &&
                                                      moduleImplClass(member->getBase()->getType()))
      return evalModule(member->getBase());
    // Submodules of the module whose member function this is share its dtype.
    if (isa<FieldDecl>(d) && ctx_.thisModule) return *ctx_.thisModule;
    return {};
  }
  if (const auto* member = dyn_cast<MemberExpr>(e)) return evalModule(member->getBase());
  if (isa<CXXThisExpr>(e) && ctx_.thisModule) return *ctx_.thisModule;
  const CXXRecordDecl* impl = moduleImplClass(e->getType());
  if (!impl) return {};
  // Net(impl): a holder made around an existing module (a clone converted
  // to Half) is that module, not a new one.
  if (const auto* construct = dyn_cast<CXXConstructExpr>(e);
      construct && construct->getNumArgs() == 1 && isSmartPointer(construct->getArg(0)->getType()))
    return evalModule(construct->getArg(0));
  // A builder's result: build_model(cfg) returns what its return statements do.
  if (const FunctionResult* built = userCallResult(e); built && !built->returned.dtype.isBottom())
    return built->returned;
  if (createsModule(e) && createsFloatParameters(impl, e))
    return builtModule(note(e, "the parameters are Float (module created here)"));
  return {};
}

// The range a range-for's loop variable walks, or null.
const Expr* FunctionAnalysis::loopRange(const ValueDecl* variable) {
  const auto declarations = tu_.context().getParents(*variable);
  const auto* declaration = declarations.empty() ? nullptr : declarations[0].get<DeclStmt>();
  if (!declaration) return nullptr;
  const auto loops = tu_.context().getParents(*declaration);
  const auto* loop = loops.empty() ? nullptr : loops[0].get<CXXForRangeStmt>();
  return loop && loop->getLoopVarStmt() == declaration ? loop->getRangeInit() : nullptr;
}

// A user module's list of submodules of which nothing else is known: they
// were created in place, registered, and are converted with the module.
bool FunctionAnalysis::followsOwningModule(const Expr* container) {
  const ValueDecl* d = declOf(container);
  return isa_and_nonnull<FieldDecl>(d) && moduleListElementClass(d->getType()) &&
         isUserModule(dyn_cast<CXXRecordDecl>(cast<FieldDecl>(d)->getParent())) && !state_.lists.count(d);
}

ListFact FunctionAnalysis::evalList(const Expr* e) {
  e = ignoreWrappers(e);
  if (const ValueDecl* d = declOf(e)) {
    auto it = state_.lists.find(d);
    return it != state_.lists.end() ? it->second : ListFact::unknown();
  }
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(e)) {
    const std::string name = calleeName(member);
    if (name == "get_saved_variables") return ctx_.savedVariables;
    // A module's parameters(), named_parameters(), buffers(): its parameter dtype.
    if ((name == "parameters" || name == "named_parameters" || name == "buffers") &&
        moduleImplClass(member->getImplicitObjectArgument()->getType()))
      return ListFact{{evalModule(member->getImplicitObjectArgument())}, false};
    // An OrderedDict's pairs(), items(), values(): its elements, positions kept.
    if ((name == "pairs" || name == "items" || name == "values") &&
        isTensorListType(member->getImplicitObjectArgument()->getType()))
      return evalList(member->getImplicitObjectArgument());
  }
  if (const auto* construct = dyn_cast<CXXConstructExpr>(e)) {
    if (construct->getNumArgs() == 0) return {};  // an empty list
    // std::vector<Tensor> v = {a, b}: the elements in order.
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(ignoreWrappers(construct->getArg(0))))
      e = ignoreWrappers(std->getSubExpr());
  }
  if (const auto* elements = dyn_cast<InitListExpr>(e)) {
    ListFact list;
    for (const Expr* element : elements->inits())
      list.elements.push_back(moduleImplClass(element->getType()) ? evalModule(element) : evalTensor(element));
    return list;
  }
  // {h, z}, std::make_pair(h, z): a pair or tuple's elements by position (not-tensor ones unknown).
  if (isTensorTupleType(e->getType()))
    if (const auto elements = tupleElements(e)) {
      ListFact list;
      for (const Expr* element : *elements)
        list.elements.push_back(isTensorType(element->getType()) ? evalTensor(element) : TensorFact{});
      return list;
    }
  // x.chunk(3), torch::split(x, n), x.unbind(): views of one tensor, each of its dtype.
  if (const auto* call = dyn_cast<CallExpr>(e)) {
    static const std::vector<std::string> kSplits = {"chunk",        "split",        "split_with_sizes", "unbind",
                                                     "tensor_split", "unsafe_chunk", "unsafe_split",     "hsplit",
                                                     "vsplit",       "dsplit"};
    const auto* method = dyn_cast<CXXMemberCallExpr>(call);
    const Expr* source = method ? method->getImplicitObjectArgument() : call->getNumArgs() ? call->getArg(0) : nullptr;
    if (source && isTensorType(source->getType()) && named(kSplits, calleeName(call)))
      return ListFact{{evalTensor(source)}, false};
    // h.max(1), x.topk(k): the values in the tensor's dtype, their indices Long.
    static const std::vector<std::string> kValuesAndIndices = {"max",  "min",    "topk",      "sort",   "kthvalue",
                                                               "mode", "median", "nanmedian", "cummax", "cummin"};
    if (source && isTensorType(source->getType()) && isTensorTupleType(call->getType()) &&
        named(kValuesAndIndices, calleeName(call)))
      return ListFact{{evalTensor(source), TensorFact{DtypeSet(ScalarType::Int64), std::nullopt}}, true};
  }
  // adapters[i], adapters.front() of a list of pairs: each of the pair's
  // tensors is any tensor the list holds.
  if (isTensorTupleType(e->getType()))
    if (const Expr* container = accessedContainer(e); container && isTensorTupleListType(container->getType()))
      return ListFact{{evalList(container).anyElement()}, false};
  // lstm(x), gru(x): the output (and a GRU's or RNN's last hidden state) in
  // the dtype of the GEMMs of the input with the layer's weights.
  if (const auto* call = dyn_cast<CallExpr>(e); call && isTensorTupleType(e->getType()))
    if (const auto& module = tu_.classify(call).module;
        module && isRecurrentLayer(module->op) && !module->args.empty()) {
      const TensorFact out = opResult("linear", {evalTensor(module->args.front()), evalModule(module->module)}, call);
      return ListFact{{out, module->op == "lstm" ? TensorFact{} : out}, true};
    }
  // What a user function or a custom Function's forward returns.
  if (const auto* call = dyn_cast<CallExpr>(e)) {
    const CXXRecordDecl* function = autogradFunctionOfApply(call);
    const FunctionResult* r = function ? analyzeAutogradApply(call, function) : userCallResult(call);
    if (r && r->returnedList) return *r->returnedList;
  }
  return ListFact::unknown();
}

// An element of a range: a module's parameters() have its parameters'
// dtype; a list's elements, the join of theirs.
TensorFact FunctionAnalysis::evalElement(const Expr* range) { return evalList(range).anyElement(); }

// v.at(i), v.front(), v.back(), m.at(key); kv.second and item.value() of a
// loop variable walking a map or named_parameters(); a pair's first and
// second, std::get<N> of a tuple.
std::optional<TensorFact> FunctionAnalysis::evalElementAccess(const Expr* e) {
  if (auto element = evalTupleElement(e)) return *element;
  const ValueDecl* keyValue = nullptr;
  const auto* call = dyn_cast<CXXMemberCallExpr>(e);
  const Expr* object = call ? ignoreWrappers(call->getImplicitObjectArgument()) : nullptr;
  if (const auto* member = dyn_cast<MemberExpr>(e); member && member->getMemberDecl()->getName() == "second")
    keyValue = declOf(member->getBase());
  else if (call && calleeName(call) == "value") keyValue = declOf(object);
  if (keyValue && isTensorKeyValueType(keyValue->getType())) {
    auto it = state_.tensors.find(keyValue);
    return it != state_.tensors.end() ? it->second : TensorFact{};
  }
  if (!call || !isTensorListType(object->getType())) return std::nullopt;
  return accessedElement(evalList(object), call);
}

// The element `v.front()`, `v.back()`, `v.at(i)` or `v[i]` reads of the list `v` holds.
std::optional<TensorFact> FunctionAnalysis::accessedElement(const ListFact& list, const CallExpr* access) {
  const std::string name = calleeName(access);
  if (name == "front") return list.at(0);
  if (name == "back") return list.positional && !list.elements.empty() ? list.elements.back() : list.anyElement();
  if (name == "at" && access->getNumArgs() == 1) return list.at(constantIndex(access->getArg(0)));
  if (const auto* subscript = dyn_cast<CXXOperatorCallExpr>(access);
      subscript && subscript->getOperator() == OO_Subscript)
    return list.at(constantIndex(subscript->getArg(1)));
  return std::nullopt;
}

// `emb.first`, `std::get<1>(outputs)`: a pair or tuple held as its elements
// (a variable given one), or made there (`std::get<0>(encode(x))`).
std::optional<TensorFact> FunctionAnalysis::evalTupleElement(const Expr* e) {
  const Expr* tuple = nullptr;
  size_t index = 0;
  if (const auto* member = dyn_cast<MemberExpr>(e)) {
    const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl());
    if (!field || !field->getDeclName().isIdentifier() || (field->getName() != "first" && field->getName() != "second"))
      return std::nullopt;
    tuple = ignoreWrappers(member->getBase());
    index = field->getName() == "second";
  } else if (const auto* call = dyn_cast<CallExpr>(e); call && call->getNumArgs() == 1 && calleeName(call) == "get") {
    const FunctionDecl* callee = call->getDirectCallee();
    const TemplateArgumentList* arguments = callee ? callee->getTemplateSpecializationArgs() : nullptr;
    if (!arguments || arguments->size() == 0 || arguments->get(0).getKind() != TemplateArgument::Integral ||
        !callee->isInStdNamespace())
      return std::nullopt;
    tuple = ignoreWrappers(call->getArg(0));
    index = arguments->get(0).getAsIntegral().getZExtValue();
  } else {
    return std::nullopt;
  }
  if (!isTensorTupleType(tuple->getType())) return std::nullopt;
  // A loop variable walking a map is the map's element, not a tuple of its own.
  if (const ValueDecl* d = declOf(tuple); d && !state_.lists.count(d)) return std::nullopt;
  return evalList(tuple).at(index);
}

std::optional<size_t> FunctionAnalysis::constantIndex(const Expr* e) {
  if (e->isValueDependent() || !e->getType()->isIntegralOrEnumerationType()) return std::nullopt;
  if (auto index = e->getIntegerConstantExpr(tu_.context()); index && index->getExtValue() >= 0)
    return size_t(index->getExtValue());
  return std::nullopt;
}

// The facts of a call's tensor inputs; a list variable passed whole
// (torch::cat(chunks)) counts as any of its elements.
std::vector<TensorFact> FunctionAnalysis::evalInputs(const CallExpr* call) {
  std::vector<TensorFact> inputs;
  for (const Expr* arg : tensorArgs(call)) inputs.push_back(evalTensor(arg));
  for (const Expr* arg : call->arguments())
    if (isTensorListType(arg->getType()) && declOf(ignoreConversions(arg)))
      inputs.push_back(evalList(ignoreConversions(arg)).anyElement());
  return inputs;
}

TensorFact FunctionAnalysis::evalTensor(const Expr* e) {
  e = ignoreWrappers(e);
  if (!e) return {};
  if (const auto* cond = dyn_cast<ConditionalOperator>(e)) {
    if (const auto flag = evalFlag(cond->getCond()))
      return evalTensor(*flag ? cond->getTrueExpr() : cond->getFalseExpr());
    return joinFacts(evalTensor(cond->getTrueExpr()), evalTensor(cond->getFalseExpr()));
  }
  if (auto element = evalElementAccess(e)) return *element;
  if (const auto* member = dyn_cast<MemberExpr>(e))
    if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl()))
      if (const ValueDecl* base = structBase(member))
        if (auto it = state_.structs.find(base); it != state_.structs.end()) {
          auto fact = it->second.find(field);
          return fact != it->second.end() ? fact->second : TensorFact{};
        }
  // encoder_->forward(x).embedding: the field of the struct the call returns.
  if (const auto* member = dyn_cast<MemberExpr>(e); member && isa<CallExpr>(ignoreWrappers(member->getBase())))
    if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl()))
      if (auto fields = structFieldsOf(ignoreWrappers(member->getBase())))
        if (auto fact = fields->find(field); fact != fields->end()) return fact->second;
  if (const ValueDecl* d = declOf(e)) {
    if (auto it = state_.tensors.find(d); it != state_.tensors.end()) return it->second;
    // `torch::Tensor attn_map_ = torch::zeros({n, n});` that no code assigns:
    // its initializer's dtype, unless a module conversion may reach it.
    if (const auto* field = dyn_cast<FieldDecl>(d); field && isTensorType(field->getType()))
      if (const Expr* init = tu_.unwrittenFieldDefault(e);
          init && (!isUserModule(dyn_cast<CXXRecordDecl>(field->getParent())) || tu_.unregisteredModuleTensor(field)))
        return evalTensor(init);
    // fc->weight, fc->bias: the module's parameter dtype.
    if (const auto* member = dyn_cast<MemberExpr>(e); member && !tu_.unregisteredModuleTensor(d)) {
      const Expr* base = member->getBase();
      if (moduleImplClass(base->getType()) || moduleImplClass(ignoreWrappers(base)->getType())) return evalModule(base);
    }
    return {};
  }
  if (const auto* call = dyn_cast<CallExpr>(e)) return evalCallResult(call);
  return {};
}

std::optional<TensorFact> FunctionAnalysis::autocastResult(std::string_view op, const std::vector<TensorFact>& inputs,
                                                           const Expr* at) {
  std::optional<TensorFact> out;
  auto add = [&](DtypeSet d, std::string_view why) {
    TensorFact f{d, Note{loc(at), std::string(why)}};
    out = out ? joinFacts(*out, f) : f;
  };
  for (auto [device, autocast] :
       {std::pair{Device::CPU, &state_.process.autocast.cpu}, std::pair{Device::CUDA, &state_.process.autocast.cuda}}) {
    if (autocast->enabled == Tristate::Off) continue;
    const AutocastPolicy policy = autocastPolicy(op, device, tu_.torch());
    if (policy == AutocastPolicy::None) continue;
    if (autocast->enabled == Tristate::Unknown) return TensorFact{};
    // Autocast casts the floating inputs and leaves the others (class indices) alone.
    bool floating = false;
    for (const TensorFact& f : inputs)
      floating = floating || f.dtype.allFloating() || f.dtype.isUnknown() || f.dtype.isBottom();
    if (!floating) continue;
    switch (policy) {
    case AutocastPolicy::LowerPrecision:
      add(autocast->dtype, fmt::format("became {} by autocast here", autocast->dtype.toString()));
      break;
    case AutocastPolicy::Fp32: add(DtypeSet(ScalarType::Float), "became Float by autocast here"); break;
    case AutocastPolicy::Promote: {
      DtypeSet d = inputs.empty() ? DtypeSet::unknown() : inputs.front().dtype;
      for (const TensorFact& f : inputs) d = d.promoteWith(f.dtype);
      add(d, "promoted by autocast here");
      break;
    }
    case AutocastPolicy::None: break;
    }
  }
  return out;
}

TensorFact FunctionAnalysis::opResult(std::string_view op, const std::vector<TensorFact>& inputs, const Expr* at) {
  TensorFact result = opResultOf(op, inputs, at);
  result.castInAutocast.reset();  // an op's result is no longer the cast's
  return result;
}

TensorFact FunctionAnalysis::opResultOf(std::string_view op, const std::vector<TensorFact>& inputs, const Expr* at) {
  if (auto cast = autocastResult(op, inputs, at)) return *cast;
  if (returnsBool(op)) return TensorFact{DtypeSet(ScalarType::Bool), std::nullopt};
  if (returnsLong(op)) return TensorFact{DtypeSet(ScalarType::Int64), std::nullopt};
  if (inputs.empty()) return {};
  // A matmul-family op outside autocast raises unless its operands agree:
  // where it returns, it has the dtype of an operand whose dtype is known
  // (x_bf16.mm(w) is BFloat16 whatever w is; an operand out of a raising op, bottom, is not known either).
  if (isMatmulFamily(op) && std::any_of(inputs.begin(), inputs.end(),
                                        [](const TensorFact& f) { return f.dtype.isUnknown() || f.dtype.isBottom(); }))
    for (const TensorFact& input : inputs)
      if (input.dtype.single() && isFloating(*input.dtype.single())) return input;
  // Operands of two known floating dtypes: the op raises (DL101), so no
  // value comes out of it: bottom, which checks ignore (what follows would
  // repeat the finding) and joins drop (a loop `x = layer(x)` keeps the dtype
  // x entered with).
  if (isMatmulFamily(op)) {
    std::optional<ScalarType> first;
    for (const TensorFact& input : inputs)
      if (const auto dtype = input.dtype.single(); dtype && isFloating(*dtype)) {
        if (first && *first != *dtype) return TensorFact{DtypeSet(), std::nullopt};
        first = dtype;
      }
  }
  if (isMatmulFamily(op) || promotesOperands(op)) {
    TensorFact out = inputs.front();
    for (size_t i = 1; i < inputs.size(); ++i) {
      DtypeSet promoted = out.dtype.promoteWith(inputs[i].dtype);
      out = promoted == inputs[i].dtype && promoted != out.dtype ? inputs[i] : TensorFact{promoted, out.origin};
    }
    return out;
  }
  if (isTableLookup(op)) {
    for (const TensorFact& input : inputs)
      if (const auto dtype = input.dtype.single(); dtype && isFloating(*dtype)) return input;
    return {};
  }
  if (preservesDtype(op) || isPrecisionSensitive(op) || inPlaceBase(op)) return inputs.front();
  return {};
}

TensorFact FunctionAnalysis::scaledByScalar(TensorFact tensor, const Expr* factor, const Expr* at) {
  const ValueDecl* variable = referencedVariable(factor);
  std::optional<std::string> variableName;
  if (variable) variableName = variable->getName().str();
  // A config field no code writes scales by its default.
  const Expr* fallback = tu_.unwrittenFieldDefault(factor);
  const std::optional<double> constant = numericConstant(fallback ? fallback : factor, tu_.context());
  tensor.scaling.manual = manualScalingOf(loc(at), constant, variableName, describe(factor));
  tensor.scaling.manual->fixed = constant && (!variable || !tu_.written(variable));
  tensor.scaling.factor = reinterpret_cast<uintptr_t>(variable);
  tensor.scaling.scaledBy.reset();
  tensor.scaling.isGradient = false;
  return tensor;
}

TensorFact FunctionAnalysis::evalCallResult(const CallExpr* call) {
  const CallClassification& c = tu_.classify(call);
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    if (auto saved = evalSavedData(member)) return *saved;
    // register_parameter("w", t), register_buffer("b", t) return t.
    if (registersTensor(c.name) && call->getNumArgs() >= 2 &&
        moduleImplClass(member->getImplicitObjectArgument()->getType()))
      return evalTensor(call->getArg(1));
  }
  switch (c.value) {
  case CallKind::ModuleCall: return evalModuleCall(*c.module, call);
  case CallKind::TensorOperator: return evalOperator(cast<CXXOperatorCallExpr>(call));
  case CallKind::ScalerApi: return evalScaledLoss(cast<CXXMemberCallExpr>(call));
  case CallKind::TensorMethod: return evalTensorMethod(cast<CXXMemberCallExpr>(call), c.name);
  case CallKind::AutogradApply: {
    const FunctionResult* r = analyzeAutogradApply(call, c.autogradFunction);
    return r ? r->returned : TensorFact{};
  }
  case CallKind::TorchFunction: return evalTorchFunction(call, c.name);
  case CallKind::UserFunction:
  case CallKind::Other: {
    // A user function (a virtual one's overrides that may run): its result in this context.
    std::optional<TensorFact> result;
    for (const FunctionDecl* definition : calledDefinitions(call, c.definition)) {
      auto calleeCtx = userCallContext(call, definition);
      const FunctionResult* r = calleeCtx ? tu_.analyze(definition, *calleeCtx) : nullptr;
      const TensorFact returned = r ? r->returned : TensorFact{};
      result = result ? joinFacts(*result, returned) : returned;
    }
    return result.value_or(TensorFact{});
  }
  default: return {};
  }
}

TensorFact FunctionAnalysis::evalModuleCall(const ModuleCall& called, const CallExpr* call) {
  const ModuleCall module = withUserBlocks(called);
  if (module.args.empty()) return {};
  if (module.op.empty()) {
    const FunctionResult* r = analyzeModuleCall(module, call);
    return r ? r->returned : TensorFact{};
  }
  if (isTableLookup(module.op)) return evalModule(module.module);
  std::vector<TensorFact> inputs;
  for (const Expr* arg : module.args) inputs.push_back(evalTensor(arg));
  if (isMatmulFamily(module.op)) inputs = {inputs.front(), evalModule(module.module)};
  return opResult(module.op, inputs, call);
}

// Operators on tensors: a + b, a * 2, saved[0].
TensorFact FunctionAnalysis::evalOperator(const CXXOperatorCallExpr* op) {
  const OverloadedOperatorKind kind = op->getOperator();
  if (kind == OO_Subscript) {
    if (isTensorType(op->getArg(0)->getType())) return evalTensor(op->getArg(0));  // x[0] keeps x's dtype
    return evalList(op->getArg(0)).at(constantIndex(op->getArg(1)));
  }
  if (kind == OO_Call) return {};
  static const std::map<OverloadedOperatorKind, std::string_view> kArithmetic = {
      {OO_Plus, "add"}, {OO_Minus, "sub"}, {OO_Star, "mul"}, {OO_Slash, "div"}};
  if (kind == OO_Star && op->getNumArgs() == 2 &&
      isTensorType(op->getArg(0)->getType()) != isTensorType(op->getArg(1)->getType())) {
    const bool tensorFirst = isTensorType(op->getArg(0)->getType());
    return scaledByScalar(evalTensor(op->getArg(tensorFirst ? 0 : 1)), op->getArg(tensorFirst ? 1 : 0), op);
  }
  if (auto it = kArithmetic.find(kind); it != kArithmetic.end()) {
    std::vector<TensorFact> inputs;
    for (const Expr* arg : op->arguments())
      if (isTensorType(arg->getType())) inputs.push_back(evalTensor(arg));
    if (kind == OO_Minus && op->getNumArgs() == 1) return inputs.empty() ? TensorFact{} : inputs.front();
    return opResult(it->second, inputs, op);
  }
  if (kind == OO_PlusEqual || kind == OO_MinusEqual || kind == OO_StarEqual || kind == OO_SlashEqual ||
      kind == OO_Equal)
    return evalTensor(op->getArg(0));
  return {};
}

// scaler.scale(loss), or a method that announces it returns a scaled loss.
TensorFact FunctionAnalysis::evalScaledLoss(const CXXMemberCallExpr* call) {
  TensorFact scaled = evalTensor(call->getArg(0));
  const ObjectRef scaler = scalers_.objectRef(ignoreWrappers(call->getImplicitObjectArgument()));
  if (scaler.id && state_.process.protocol.disabled(scaler.id)) return scaled;  // GradScaler(false) hands the loss back
  scaled.scaling.scaledBy = scaler;
  scaled.scaling.scaledAt = loc(call);
  scaled.scaling.manual.reset();
  return scaled;
}

TensorFact FunctionAnalysis::evalTensorMethod(const CXXMemberCallExpr* call, const std::string& name) {
  TensorFact self = evalTensor(ignoreWrappers(call->getImplicitObjectArgument()));
  if (name == "grad" || name == "mutable_grad") {
    self.scaling.isGradient = true;
    return self;
  }
  if (name == "mul" && call->getNumArgs() == 1 && !isTensorType(call->getArg(0)->getType()))
    return scaledByScalar(self, call->getArg(0), call);
  if (name == "to" || name == "type" || name == "toType" || name == "type_as") {
    for (const Expr* arg : call->arguments()) {
      if (isa<CXXDefaultArgExpr>(ignoreWrappers(arg))) continue;
      if (isTensorType(arg->getType())) return evalTensor(arg);  // x.to(other), x.type_as(other)
      if (auto d = evalDtypeArgument(arg)) {
        if (d->dtype.isUnknown()) return TensorFact{};
        // An upcast to another tensor's dtype (`y.to(x.scalar_type())` after a Float
        // computation) restores a dtype: it is no attempt to run the next op in Float.
        // A downcast loses precision whatever chose its dtype.
        if (const auto to = d->dtype.single();
            to && state_.process.autocast.anyOn() && !(readsTensorDtype(arg) && !isLowPrecisionFloat(*to)))
          d->castInAutocast = ExplicitCast{self.dtype, *to, loc(call)};
        d->dtypeConstant = writtenDtypeConstant(arg);
        return *d;
      }
    }
    return self;  // x.to(device)
  }
  if (name == "item" || name == "size" || name == "dim") return {};
  if (hasExplicitDtype(call)) {
    for (const Expr* arg : call->arguments())
      if (auto d = evalDtypeArgument(arg); d && !d->dtype.isUnknown()) return *d;
  }
  std::vector<TensorFact> inputs{self};
  for (const TensorFact& input : evalInputs(call)) inputs.push_back(input);
  return opResult(name, inputs, call);
}

// Factories: torch::randn({2, 3}, torch::kHalf), torch::zeros_like(x)
std::optional<TensorFact> FunctionAnalysis::evalFactory(const CallExpr* call, const std::string& name) {
  const FactoryKind factory = factoryKind(name);
  if (factory == FactoryKind::NotFactory) return std::nullopt;
  for (const Expr* arg : call->arguments())
    if (!isTensorType(arg->getType()))
      if (auto d = evalDtypeArgument(arg)) {
        if (d->dtype.isUnknown()) return TensorFact{};
        if (d->origin) d->origin->message = fmt::format("created as {} here", d->dtype.toString());
        d->dtypeConstant = writtenDtypeConstant(arg);
        return *d;
      }
  switch (factory) {
  case FactoryKind::DefaultFloat:
    return TensorFact{DtypeSet(ScalarType::Float), Note{loc(call), "created as Float here"}};
  case FactoryKind::Long: return TensorFact{DtypeSet(ScalarType::Int64), std::nullopt};
  case FactoryKind::Like: return call->getNumArgs() ? evalTensor(call->getArg(0)) : TensorFact{};
  case FactoryKind::NotFactory: break;
  }
  return std::nullopt;
}

TensorFact FunctionAnalysis::evalTorchFunction(const CallExpr* call, const std::string& name) {
  if (auto created = evalFactory(call, name)) return *created;
  if (hasExplicitDtype(call))
    for (const Expr* arg : call->arguments())
      if (auto d = evalDtypeArgument(arg); d && !d->dtype.isUnknown()) return *d;
  return opResult(atenOpName(call->getDirectCallee()), evalInputs(call), call);
}

Value FunctionAnalysis::evalValue(const Expr* e, QualType paramType) {
  Value v;
  if (holdsTensorElements(paramType)) {
    v.kind = Value::Kind::List;
    v.list = evalList(e);
  } else if (isTensorType(paramType)) {
    v.kind = Value::Kind::Tensor;
    v.fact = evalTensor(e);
  } else if (moduleImplClass(paramType)) {
    v.kind = Value::Kind::Module;
    v.fact = evalModule(e);
  } else if (isScalarTypeType(paramType) || isTensorOptionsType(paramType)) {
    // `dtype = torch::kFloat` left to its default: the default.
    if (const auto* byDefault = dyn_cast<CXXDefaultArgExpr>(e)) e = byDefault->getExpr();
    v.kind = Value::Kind::Dtype;
    v.fact = evalDtypeArgument(e).value_or(TensorFact{});
  } else if (isScaler(paramType) || isOptimizerType(paramType)) {
    v.kind = Value::Kind::Object;
    v.object = scalers_.objectRef(e);
  } else if (paramType->isBooleanType()) {
    if (const auto* byDefault = dyn_cast<CXXDefaultArgExpr>(e)) e = byDefault->getExpr();
    if (const auto value = evalFlag(e)) {
      v.kind = Value::Kind::Bool;
      v.flag = *value;
    }
  } else if (auto fields = structFieldsOf(e)) {  // also Trainer(settings_from_environment())
    v.kind = Value::Kind::Struct;
    v.fields = std::move(*fields);
  }
  return v;
}

// ctx->saved_data["key"].toTensor() in a custom Function's backward: what forward stored there.
std::optional<TensorFact> FunctionAnalysis::evalSavedData(const CXXMemberCallExpr* call) {
  if (calleeName(call) != "toTensor") return std::nullopt;
  const auto* subscript = dyn_cast<CXXOperatorCallExpr>(ignoreWrappers(call->getImplicitObjectArgument()));
  const auto key = subscript ? savedDataKey(subscript) : std::nullopt;
  if (!key) return std::nullopt;
  auto it = ctx_.savedData.find(*key);
  return it != ctx_.savedData.end() ? it->second : TensorFact{};
}

}  // namespace dtype_lint::analyzer::flow
