#include "flow/scaler_tracking.h"

#include <fmt/format.h>

#include "dtype_lint/dl304_optimizer_epsilon.h"
#include "flow/ast_helpers.h"
#include "torch_api.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

bool isScalerType(const ScalerApi& api, QualType type) {
  const CXXRecordDecl* r = pointeeRecord(type);
  return r && r->getDeclName().isIdentifier() && named(api.classes, r->getName());
}

ScalerCall scalerCall(const ScalerApi& api, const std::string& method) {
  if (named(api.scale, method)) return ScalerCall::Scale;
  if (named(api.unscale, method)) return ScalerCall::Unscale;
  if (named(api.step, method)) return ScalerCall::Step;
  if (named(api.update, method)) return ScalerCall::Update;
  return ScalerCall::None;
}

std::optional<ObjectRef> ScalerTracking::keyedObject(const Expr* e) {
  e = ignoreWrappers(e);
  const Expr *map = nullptr, *key = nullptr;
  if (const auto* at = dyn_cast_or_null<CXXMemberCallExpr>(e); at && at->getNumArgs() == 1 && calleeName(at) == "at")
    map = at->getImplicitObjectArgument(), key = at->getArg(0);
  else if (const auto* subscript = dyn_cast_or_null<CXXOperatorCallExpr>(e);
           subscript && subscript->getOperator() == OO_Subscript && subscript->getNumArgs() == 2)
    map = subscript->getArg(0), key = subscript->getArg(1);
  return map ? keyedObject(map, key, flow_.describe(e)) : std::nullopt;
}

std::optional<ObjectRef> ScalerTracking::keyedObject(const Expr* map, const Expr* key, std::string name) {
  const auto* literal = dyn_cast<StringLiteral>(ignoreConversions(key)->IgnoreImplicit());
  const ValueDecl* d = declOf(map);
  if (!literal || !d) return std::nullopt;
  const size_t keyHash = std::hash<std::string>{}(literal->getString().str());
  return ObjectRef{reinterpret_cast<uintptr_t>(d->getCanonicalDecl()) ^ (keyHash << 1), std::move(name)};
}

void ScalerTracking::transferKeyedInsertion(const CXXMemberCallExpr* call, const std::string& name) {
  // optimizers_["mapping"].reset(make_adam(...)), optimizer_.reset(new Adam(...)): as an assignment.
  if (const Expr* holder = call->getImplicitObjectArgument();
      name == "reset" && call->getNumArgs() == 1 && isOptimizerType(holder->getType())) {
    if (keyedObject(holder)) return declareKeyedOptimizer(holder, call->getArg(0), flow_.loc(call));
    if (const ValueDecl* d = declOf(holder)) declareScalerOrOptimizer(d, call->getArg(0), flow_.loc(call));
    return;
  }
  if ((name != "emplace" && name != "try_emplace" && name != "insert_or_assign") || call->getNumArgs() != 2 ||
      !isOptimizerType(call->getArg(1)->getType()))
    return;
  const Expr* map = call->getImplicitObjectArgument();
  const std::string mapName = flow_.describe(map), key = flow_.describe(call->getArg(0));
  // 'optimizers_' and '"dense"': 'optimizers_.at("dense")'.
  const std::string element =
      fmt::format("'{}.at({})'", mapName.substr(1, mapName.size() - 2), key.substr(1, key.size() - 2));
  if (const auto ref = keyedObject(map, call->getArg(0), element))
    declareOptimizer(*ref, ignoreWrappers(call->getArg(1)), flow_.loc(call));
}

namespace {

// The innermost if, switch or ?: around `s` in `body`: where the statement
// runs only on some paths.
std::optional<SourceLocation> enclosingBranch(const Stmt* s, const Stmt* body, ASTContext& context) {
  while (s && s != body) {
    const DynTypedNodeList parents = context.getParents(*s);
    const Stmt* parent = parents.empty() ? nullptr : parents[0].get<Stmt>();
    if (isa_and_nonnull<IfStmt, SwitchStmt, ConditionalOperator>(parent))
      return toLocation(parent->getSourceRange(), context.getSourceManager(), context.getLangOpts());
    s = parent;
  }
  return std::nullopt;
}

// Whether `s` runs on at most one iteration of the loop around it: under the
// then branch of `if (micro + 1 == accum)` on the counter that loop declares,
// true on one value of it only.
bool onceInItsLoop(const Stmt* s, const Stmt* body, ASTContext& context) {
  std::vector<const BinaryOperator*> equalities;
  for (const Stmt* at = s; at && at != body;) {
    const DynTypedNodeList parents = context.getParents(*at);
    const Stmt* parent = parents.empty() ? nullptr : parents[0].get<Stmt>();
    if (const auto* test = dyn_cast_or_null<IfStmt>(parent); test && test->getThen() == at)
      if (const auto* equality = dyn_cast<BinaryOperator>(test->getCond()->IgnoreParenImpCasts());
          equality && equality->getOpcode() == BO_EQ)
        equalities.push_back(equality);
    if (const auto* loop = dyn_cast_or_null<ForStmt>(parent)) {
      const auto* init = dyn_cast_or_null<DeclStmt>(loop->getInit());
      const auto* counter = init && init->isSingleDecl() ? dyn_cast<VarDecl>(init->getSingleDecl()) : nullptr;
      auto reads = [&](const Expr* side) {
        return containsStmt(side, [&](const Stmt* e) {
          const auto* ref = dyn_cast<DeclRefExpr>(e);
          return ref && ref->getDecl() == counter;
        });
      };
      return counter && std::any_of(equalities.begin(), equalities.end(), [&](const BinaryOperator* equality) {
               return reads(equality->getLHS()) != reads(equality->getRHS());
             });
    }
    at = parent;
  }
  return false;
}

// `for (auto& o : optimizers_) scaler.step(*o.opt)`: a member of the element
// a range-for visits, another object on each iteration.
bool memberOfLoopElement(const Expr* e) {
  const auto* member = dyn_cast_or_null<MemberExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  while (member) {
    const Expr* base = member->getBase()->IgnoreParenImpCasts();
    if (const auto* ref = dyn_cast<DeclRefExpr>(base)) {
      if (const auto* var = dyn_cast<VarDecl>(ref->getDecl())) return var->isCXXForRangeDecl();
      if (const auto* binding = dyn_cast<BindingDecl>(ref->getDecl()))
        if (const auto* whole = dyn_cast_or_null<VarDecl>(binding->getDecomposedDecl()))
          return whole->isCXXForRangeDecl();
      return false;
    }
    member = dyn_cast<MemberExpr>(base);
  }
  return false;
}

}  // namespace

ObjectRef ScalerTracking::objectRef(const Expr* e) {
  e = moduleObject(e);
  if (const auto* addressOf = dyn_cast_or_null<UnaryOperator>(e); addressOf && addressOf->getOpcode() == UO_AddrOf)
    e = moduleObject(addressOf->getSubExpr());
  if (auto keyed = keyedObject(e)) return *keyed;
  const ValueDecl* d = declOf(e);
  if (!d) return ObjectRef{0, flow_.describe(e)};
  if (auto it = aliases_.find(d); it != aliases_.end()) return it->second;
  // `for (auto& [name, opt] : optimizers_)`: a binding names another object on each iteration.
  if (const auto* binding = dyn_cast<BindingDecl>(d))
    if (const auto* whole = dyn_cast_or_null<VarDecl>(binding->getDecomposedDecl());
        !whole || whole->isCXXForRangeDecl())
      return ObjectRef{0, flow_.describe(e)};
  if (const auto* var = dyn_cast<VarDecl>(d)) {
    if (var->isCXXForRangeDecl()) return ObjectRef{0, flow_.describe(e)};
    // A local reference or pointer: auto& opt = *optimizer; auto* s = &scaler;
    if (var->getType()->isReferenceType() || var->getType()->isPointerType())
      return var->getInit() && !isa<ParmVarDecl>(var)
                 ? objectRef(var->getInit())
                 : declarationRef(isa<ParmVarDecl>(var) ? var : nullptr, flow_.describe(e));
  }
  if (isa<FieldDecl>(d) && memberOfLoopElement(e)) return ObjectRef{0, flow_.describe(e)};
  if (isa<FieldDecl>(d) && d->getType()->isReferenceType()) {
    // A reference member: the object its initializer bound it to, when seen.
    const auto& bound = flow_.state().objects;
    auto it = bound.find(cast<ValueDecl>(d->getCanonicalDecl()));
    return it != bound.end() ? it->second : ObjectRef{0, flow_.describe(e)};
  }
  return declarationRef(cast<ValueDecl>(d->getCanonicalDecl()), quotedName(d));
}

ObjectRef ScalerTracking::declarationRef(const ValueDecl* d, std::string name) {
  const auto id = reinterpret_cast<uintptr_t>(d);
  if (id) declarationIds_.insert(id);
  return ObjectRef{id, std::move(name)};
}

void ScalerTracking::refreshOptimizerDtype(const ObjectRef& optimizer) {
  // model->to(kHalf) after the optimizer was built converts the same parameters.
  const OptimizerFacts* facts = protocol().optimizer(optimizer.id);
  if (!facts || !facts->module) return;
  for (const auto& [decl, fact] : flow_.state().modules)
    if (reinterpret_cast<uintptr_t>(decl->getCanonicalDecl()) == facts->module && fact.dtype != facts->parameterDtype)
      protocol().declareOptimizer(optimizer, fact.dtype, fact.origin, facts->module);
}

std::optional<ObjectRef> ScalerTracking::optimizerArgument(const CXXMemberCallExpr* call, const ObjectRef& scaler) {
  for (const Expr* arg : call->arguments())
    if (isOptimizerType(arg->getType())) {
      ObjectRef optimizer = objectRef(arg);
      if (optimizer.id && scaler.id) return optimizer;
    }
  return std::nullopt;
}

void ScalerTracking::transferScalerCall(const CXXMemberCallExpr* call, const std::string& name) {
  const ObjectRef scaler = objectRef(call->getImplicitObjectArgument());
  const SourceLocation at = flow_.loc(call);
  if (scaler.id && protocol().disabled(scaler.id)) {
    // GradScaler(false): scale() hands the loss back, step(opt) is opt.step().
    if (scalerCall(api_, name) == ScalerCall::Step)
      for (const Expr* arg : call->arguments())
        if (isOptimizerType(arg->getType())) optimizerStep(call, arg);
    return;
  }
  switch (scalerCall(api_, name)) {
  case ScalerCall::Scale: {
    ProcessState& process = flow_.state().process;
    if (auto region = process.bfloat16Loss.scaled(process.autocast); region && scaler.id)
      protocol().scaledUnderBFloat16(scaler, at, *region);
    if (call->getNumArgs() >= 1)
      if (TensorFact loss = flow_.evalTensor(call->getArg(0)); loss.scaling.manual)
        process.manualScaling.scaledInsideScaler(*loss.scaling.manual, loss.scaling.factor, at, findings());
    return;
  }
  case ScalerCall::Unscale:
    if (auto optimizer = optimizerArgument(call, scaler)) {
      refreshOptimizerDtype(*optimizer);
      protocol().unscale(scaler, *optimizer, at, findings(),
                         onceInItsLoop(call, flow_.function()->getBody(), flow_.astContext()));
    } else if (scaler.id) {
      protocol().unscaleUnidentifiedOptimizer(scaler, at, findings());
    }
    return;
  case ScalerCall::Step:
    for (const Expr* arg : call->arguments())
      if (isOptimizerType(arg->getType())) emitStep(call, arg);
    if (auto optimizer = optimizerArgument(call, scaler)) {
      refreshOptimizerDtype(*optimizer);
      const std::optional<SourceLocation> branch =
          enclosingBranch(call, flow_.function()->getBody(), flow_.astContext());
      const OptimizerFacts* facts = protocol().optimizer(optimizer->id);
      std::optional<SourceLocation> frozenAt = facts ? facts->frozenAt : std::nullopt;
      // Frozen after it was built, earlier in this function (linear probing
      // before fine-tuning), and stepped on every path after that.
      if (auto frozen = facts && !frozenAt && !branch ? frozenHere(facts->module) : std::nullopt) frozenAt = frozen;
      if (frozenAt) {
        protocol().stepWithoutGradients(scaler, *optimizer, at, findings(), frozenAt);
        // Stepping a frozen optimizer is wrong where it is done, whoever calls it: not moved to a call.
        flow_.events().protocolFindingsPlaced = findings().size();
      }
      protocol().step(scaler, *optimizer, at, findings(), branch);
    } else if (scaler.id) {
      protocol().stepUnidentifiedOptimizer(scaler, at, findings());
    }
    return;
  case ScalerCall::Update:
    if (scaler.id) protocol().update(scaler, at, findings());
    return;
  case ScalerCall::None: return;
  }
}

// An optimizer step, by the optimizer or by a scaler's step(opt): the autocast state it runs in (DL107).
void ScalerTracking::emitStep(const Expr* at, const Expr* optimizer) {
  const ProcessState& process = flow_.state().process;
  OptimizerStepEvent step;
  step.location = flow_.loc(at);
  step.optimizer = flow_.describe(moduleObject(optimizer));
  step.autocast = process.autocast;
  step.autocastCache = process.autocastCache;
  step.callChain = flow_.callContext().callChain;
  flow_.events().steps.push_back(std::move(step));
}

// opt.step(), by the optimizer itself or by a scaler that does nothing.
void ScalerTracking::optimizerStep(const Expr* at, const Expr* optimizer) {
  emitStep(at, optimizer);
  if (const ObjectRef ref = objectRef(optimizer); ref.id) protocol().optimizerStep(ref, flow_.loc(at), findings());
}

void ScalerTracking::transferOptimizerCall(const CXXMemberCallExpr* call, const std::string& name) {
  const Expr* object = ignoreWrappers(call->getImplicitObjectArgument());
  if (name == "step") {
    optimizerStep(call, object);
  } else if (name == "zero_grad") {
    protocol().zeroGrad(objectRef(object));
  } else if (name == "reset" && call->getNumArgs() == 1) {
    // optimizer_.reset(new torch::optim::AdamW(model_->parameters(), ...)) on a smart pointer.
    if (const ValueDecl* d = declOf(object)) declareScalerOrOptimizer(d, call->getArg(0), flow_.loc(call));
  }
}

std::optional<ObjectRef> ScalerTracking::optimizerOfFunction() {
  // The optimizer whose param_groups() this function walks, else its only optimizer parameter.
  struct Finder : RecursiveASTVisitor<Finder> {
    const Expr* found = nullptr;
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr* call) {
      if (!found && call->getMethodDecl() && call->getMethodDecl()->getDeclName().isIdentifier() &&
          call->getMethodDecl()->getName() == "param_groups" &&
          isOptimizerType(call->getImplicitObjectArgument()->getType()))
        found = call->getImplicitObjectArgument();
      return true;
    }
  } finder;
  const FunctionDecl* fn = flow_.function();
  finder.TraverseStmt(const_cast<Stmt*>(fn->getBody()));
  if (finder.found) return objectRef(finder.found);
  std::optional<ObjectRef> only;
  for (const ParmVarDecl* param : fn->parameters())
    if (isOptimizerType(param->getType())) {
      if (only) return std::nullopt;
      auto it = aliases_.find(param);
      only = it != aliases_.end() ? it->second : declarationRef(param, quotedName(param));
    }
  return only;
}

std::optional<ObjectRef> ScalerTracking::rawOpScaler(const CallExpr* call, unsigned foundInfArg, unsigned scaleArg) {
  if (flow_.callContext().thisObject) return flow_.callContext().thisObject;
  // A scaler's method analyzed without its caller: the object it runs on.
  if (const auto* method = dyn_cast<CXXMethodDecl>(flow_.function()); method && method->isInstance())
    return ObjectRef{reinterpret_cast<uintptr_t>(method->getParent()->getCanonicalDecl()),
                     "the '" + method->getParent()->getNameAsString() + "' scaler"};
  struct Finder : RecursiveASTVisitor<Finder> {
    const ValueDecl* found = nullptr;
    bool VisitDeclRefExpr(DeclRefExpr* ref) {
      if (!found && isa<VarDecl>(ref->getDecl())) found = ref->getDecl();
      return true;
    }
    bool VisitMemberExpr(MemberExpr* member) {
      if (!found && isa<FieldDecl>(member->getMemberDecl())) found = member->getMemberDecl();
      return true;
    }
  } finder;
  for (unsigned arg : {foundInfArg, scaleArg}) {
    if (arg >= call->getNumArgs()) continue;
    finder.TraverseStmt(const_cast<Expr*>(call->getArg(arg)));
    if (finder.found)
      return declarationRef(cast<ValueDecl>(finder.found->getCanonicalDecl()),
                            "the scaler of '" + finder.found->getNameAsString() + "'");
  }
  return std::nullopt;
}

const CXXForRangeStmt* ScalerTracking::groupLoopOf(const CallExpr* rawUnscale) {
  if (rawUnscale->getNumArgs() == 0) return nullptr;
  // The gradients reach the op's TensorList through its converting constructor.
  const Expr* grads = ignoreWrappers(rawUnscale->getArg(0));
  if (const auto* list = dyn_cast<CXXConstructExpr>(grads); list && list->getNumArgs() == 1) grads = list->getArg(0);
  const ValueDecl* element = declOf(grads);
  const CXXForRangeStmt* group = nullptr;
  ASTContext& context = flow_.astContext();
  for (DynTypedNodeList parents = context.getParents(*rawUnscale); !parents.empty();
       parents = context.getParents(parents[0])) {
    const auto* loop = parents[0].get<CXXForRangeStmt>();
    if (!loop) {
      if (parents[0].get<FunctionDecl>() || parents[0].get<LambdaExpr>()) break;
      continue;
    }
    // The loop's variable, or one of its structured bindings.
    const VarDecl* var = loop->getLoopVariable();
    auto isElement = [&](const ValueDecl* d) {
      if (d == var) return true;
      const auto* bindings = dyn_cast<DecompositionDecl>(var);
      return bindings && llvm::is_contained(bindings->bindings(), d);
    };
    if (!element || !isElement(element)) break;
    group = loop;
    element = declOf(loop->getRangeInit());  // an element of an enclosing group loop, in turn?
  }
  return group;
}

const std::map<const DeclStmt*, std::vector<const CallExpr*>>& ScalerTracking::groupUnscales() {
  if (groupUnscales_) return *groupUnscales_;
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const CallExpr*> unscales;
    bool VisitCallExpr(CallExpr* call) {
      if (const FunctionDecl* callee = call->getDirectCallee();
          callee && callee->getDeclName().isIdentifier() && callee->getName() == kRawUnscaleOp)
        unscales.push_back(call);
      return true;
    }
  } finder;
  finder.TraverseStmt(const_cast<Stmt*>(flow_.function()->getBody()));
  groupUnscales_.emplace();
  for (const CallExpr* call : finder.unscales)
    if (const CXXForRangeStmt* loop = groupLoopOf(call)) (*groupUnscales_)[loop->getBeginStmt()].push_back(call);
  return *groupUnscales_;
}

void ScalerTracking::transferDeclaration(const DeclStmt* decl) {
  const auto& loops = groupUnscales();
  if (auto it = loops.find(decl); it != loops.end())
    for (const CallExpr* call : it->second) rawUnscale(call);
}

void ScalerTracking::rawUnscale(const CallExpr* call) {
  auto scaler = rawOpScaler(call, 1, 2);
  auto optimizer = optimizerOfFunction();
  if (scaler && optimizer) {
    refreshOptimizerDtype(*optimizer);
    if (flow_.callContext().guardedByScalerState)
      protocol().unscaleUnlessDone(*scaler, *optimizer, flow_.loc(call), findings());
    else protocol().unscale(*scaler, *optimizer, flow_.loc(call), findings());
  } else if (scaler) {
    protocol().unscaleUnidentifiedOptimizer(*scaler, flow_.loc(call), findings());
  }
}

void ScalerTracking::transferRawAmpOp(const CallExpr* call, const std::string& name) {
  if (name == kRawUnscaleOp) {
    // One group of a group loop: unscaled with the others where the loop starts.
    if (!groupLoopOf(call)) rawUnscale(call);
    return;
  }
  // _amp_update_scale_: the op sees inf checks (unscales), not step(): a skipped
  // optimizer step is still a checked update.
  if (auto scaler = rawOpScaler(call, 2, 0)) protocol().updateFromInfChecks(*scaler, flow_.loc(call), findings());
}

void ScalerTracking::transferAnnotation(const CallExpr* call, const std::string& name) {
  if (call->getNumArgs() == 0) return;
  const CallContext& ctx = flow_.callContext();
  auto refOf = [&](const Expr* e) -> ObjectRef {
    e = ignoreWrappers(e);
    if (isa<CXXThisExpr>(e)) return ctx.thisObject.value_or(ObjectRef{0, "the scaler"});
    if (const auto* addressOf = dyn_cast<UnaryOperator>(e); addressOf && addressOf->getOpcode() == UO_AddrOf)
      e = addressOf->getSubExpr();
    return objectRef(e);
  };
  const ObjectRef scaler = refOf(call->getArg(0));
  if (!scaler.id) return;
  // The method that announces itself is where the user calls it: report there, as the runtime does.
  const SourceLocation at = ctx.callChain.empty() ? flow_.loc(call) : ctx.callChain.front().location;
  if (name == "update") return protocol().update(scaler, at, findings());
  // scale() is followed at its caller: the method that announces it returns a scaled loss.
  if (name == "scale" || call->getNumArgs() < 2) return;
  const ObjectRef optimizer = refOf(call->getArg(1));
  if (!optimizer.id) return;
  refreshOptimizerDtype(optimizer);
  if (name == "unscale") protocol().unscale(scaler, optimizer, at, findings());
  if (name == "step")
    protocol().step(scaler, optimizer, at, findings(),
                    enclosingBranch(call, flow_.function()->getBody(), flow_.astContext()));
}

void ScalerTracking::transferUnfollowedCall(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  const auto* op = dyn_cast<CXXOperatorCallExpr>(call);
  // A LibTorch module's forward (`ctc(log_probs, ...)`, a CTCLoss the flow does not model) drives no scaler.
  if (op && op->getOperator() == OO_Call) {
    const CXXRecordDecl* impl = moduleImplClass(op->getArg(0)->getType());
    if (impl && !isUserModule(impl)) return;
  }
  if (!callee || (op && op->getOperator() == OO_Call)) return protocol().forgetAll();
  if (!isUserCode(callee->getLocation(), flow_.astContext().getSourceManager())) return;
  bool scalerHandedOver = false;
  for (const Expr* arg : call->arguments())
    if (isScalerType(api_, arg->getType()))
      if (const ObjectRef scaler = objectRef(ignoreWrappers(arg)); scaler.id) {
        protocol().forgetScaler(scaler.id);
        scalerHandedOver = true;
      }
  // unscale_and_clip(scaler, opt, ...) in another translation unit may unscale
  // the optimizer it is given: DL202 on its parameters is that unit's to report.
  if (scalerHandedOver)
    for (const Expr* arg : call->arguments())
      if (isOptimizerType(arg->getType()))
        if (const ObjectRef optimizer = objectRef(ignoreWrappers(arg)); optimizer.id)
          protocol().mayHaveBeenUnscaledElsewhere(optimizer);
  // A method of the object with no body here (a pure virtual step_optimizers()
  // a derived trainer overrides) may drive the object's own scalers.
  if (const auto* method = dyn_cast<CXXMethodDecl>(callee); method && isa<CXXMemberCallExpr>(call))
    forgetMemberScalers(method->getParent());
}

void ScalerTracking::forgetMemberScalers(const CXXRecordDecl* record) {
  if (!record || !record->hasDefinition()) return;
  for (const FieldDecl* field : record->fields())
    if (isScalerType(api_, field->getType()))
      protocol().forgetScaler(reinterpret_cast<uintptr_t>(field->getCanonicalDecl()));
  for (const CXXBaseSpecifier& base : record->bases()) forgetMemberScalers(base.getType()->getAsCXXRecordDecl());
}

void ScalerTracking::transferClip(const CallExpr* call) {
  if (call->getNumArgs() == 0) return;
  const Expr* params = ignoreWrappers(call->getArg(0));
  // clip_grad_norm_(model->parameters(), ...) or (optimizer.param_groups()[0].params(), ...)
  struct Finder : RecursiveASTVisitor<Finder> {
    const Expr* module = nullptr;
    const Expr* optimizer = nullptr;
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr* member) {
      const Expr* object = member->getImplicitObjectArgument();
      if (!module && moduleImplClass(object->getType())) module = object;
      if (!optimizer && isOptimizerType(object->getType())) optimizer = object;
      return true;
    }
  } finder;
  finder.TraverseStmt(const_cast<Expr*>(params));
  SourceLocation at = flow_.loc(call);
  const std::optional<UnscaleSpelling> spelling = unscaleSpelling(call);
  if (finder.optimizer) {
    ObjectRef optimizer = objectRef(finder.optimizer);
    return protocol().clip(&optimizer, 0, at, findings(), spelling ? &*spelling : nullptr);
  }
  uintptr_t module = 0;
  if (finder.module)
    if (const ValueDecl* d = declOf(moduleObject(finder.module)))
      module = reinterpret_cast<uintptr_t>(d->getCanonicalDecl());
  protocol().clip(nullptr, module, at, findings(), spelling ? &*spelling : nullptr);
}

// Where DL205's fix would insert the unscale: before the statement that
// clips, on a line of its own with the statement's indentation; and how the
// scaler and the optimizer are named there. Nothing when the statement does
// not start its line or a macro wrote it.
std::optional<UnscaleSpelling> ScalerTracking::unscaleSpelling(const CallExpr* call) {
  ASTContext& context = flow_.astContext();
  // The statement of the block that holds the call (through a declaration's initializer too).
  DynTypedNode node = DynTypedNode::create(*call);
  const CompoundStmt* block = nullptr;
  for (;;) {
    const auto parents = context.getParents(node);
    if (parents.size() != 1) return std::nullopt;
    if ((block = parents[0].get<CompoundStmt>())) break;
    node = parents[0];
  }
  const Stmt* statement = node.get<Stmt>();
  if (!statement) return std::nullopt;
  const auto* expression = dyn_cast<Expr>(statement);
  const auto* declaration = dyn_cast<DeclStmt>(statement);
  std::optional<SourceLocation> where;
  if (expression) where = editableLocation(expression, context);
  else if (declaration && !declaration->getBeginLoc().isMacroID())
    where = toLocation(declaration->getSourceRange(), context.getSourceManager(), context.getLangOpts());
  if (!where) return std::nullopt;
  const SourceManager& sm = context.getSourceManager();
  bool invalid = false;
  const llvm::StringRef line =
      sm.getCharacterData(sm.translateLineCol(sm.getFileID(statement->getBeginLoc()), where->line, 1), &invalid);
  const llvm::StringRef indentation = line.take_front(where->column - 1);
  if (invalid || indentation.find_first_not_of(" \t") != llvm::StringRef::npos) return std::nullopt;

  const FunctionDecl* function = flow_.function();
  // A name usable here: a local or parameter of this function, or a member of its class.
  auto inScope = [function, this](uintptr_t id) -> const ValueDecl* {
    if (!declarationIds_.count(id)) return nullptr;  // a keyed object (optimizers_["enc"]) has no one name
    const auto* d = reinterpret_cast<const ValueDecl*>(id);
    if (const auto* var = dyn_cast<VarDecl>(d)) return var->getParentFunctionOrMethod() == function ? d : nullptr;
    const auto* method = dyn_cast<CXXMethodDecl>(function);
    const auto* field = dyn_cast<FieldDecl>(d);
    const auto* owner = field ? dyn_cast<CXXRecordDecl>(field->getParent()) : nullptr;
    if (owner && method && !method->isStatic() &&
        (method->getParent() == owner || method->getParent()->isDerivedFrom(owner)))
      return d;
    return nullptr;
  };
  auto indirect = [](const ValueDecl* d) { return d->getType()->isPointerType() || isSmartPointer(d->getType()); };
  UnscaleSpelling spelling;
  spelling.scalerCall = [=](uintptr_t id) -> std::optional<std::string> {
    const ValueDecl* d = inScope(id);
    if (!d) return std::nullopt;
    return d->getNameAsString() + (indirect(d) ? "->" : ".");
  };
  spelling.optimizer = [=](uintptr_t id) -> std::optional<std::string> {
    const ValueDecl* d = inScope(id);
    if (!d) return std::nullopt;
    return (indirect(d) ? "*" : "") + d->getNameAsString();
  };
  spelling.unscaleMethod = api_.unscale.empty() ? "unscale_" : api_.unscale.front();
  spelling.statement = *where;
  spelling.indentation = indentation.str();
  laterInBlock(*block, statement, spelling);
  return spelling;
}

// The unscales written after `statement` in its block, each on lines of its
// own (those lines are what a fix moves), and whether a scaler is handed to
// other code there.
void ScalerTracking::laterInBlock(const CompoundStmt& block, const Stmt* statement, UnscaleSpelling& spelling) {
  ASTContext& context = flow_.astContext();
  bool after = false;
  for (const Stmt* later : block.body()) {
    if (later == statement) {
      after = true;
      continue;
    }
    if (!after) continue;
    struct Calls : RecursiveASTVisitor<Calls> {
      std::vector<const CallExpr*> calls;
      bool VisitCallExpr(CallExpr* c) {
        calls.push_back(c);
        return true;
      }
    } visitor;
    visitor.TraverseStmt(const_cast<Stmt*>(later));
    for (const CallExpr* c : visitor.calls) {
      const auto* member = dyn_cast<CXXMemberCallExpr>(c);
      const bool onScaler = member && isScalerType(api_, member->getImplicitObjectArgument()->getType());
      if (!onScaler) {
        for (const Expr* arg : c->arguments())
          if (isScalerType(api_, arg->getType())) spelling.scalerPassedOn = true;
        continue;
      }
      const auto* written = dyn_cast<Expr>(later);
      if (!named(api_.unscale, calleeName(member)) || member->getNumArgs() != 1 || !written ||
          written->IgnoreImplicit() != c)
        continue;
      auto lines = ownLines(later, context);
      if (!lines) continue;
      spelling.laterUnscales.push_back(LaterUnscale{objectRef(member->getImplicitObjectArgument()).id,
                                                    objectRef(member->getArg(0)).id, lines->first,
                                                    std::move(lines->second)});
    }
  }
}

void ScalerTracking::transferBackward(const Expr* loss, const Expr* at) {
  const TensorFact fact = flow_.evalTensor(loss);
  if (fact.scaling.scaledBy) {
    protocol().scaledBackward(*fact.scaling.scaledBy, flow_.loc(at), fact.scaling.scaledAt.value_or(flow_.loc(at)));
    return;
  }
  protocol().unscaledBackward(flow_.loc(at));
  if (!fact.scaling.manual) return;
  // A GradScaler's own inf check does not make the caller's hand scaling a dynamic scaler.
  auto scalerMethod = [this](const FunctionDecl* callee) {
    const auto* method = dyn_cast<CXXMethodDecl>(callee);
    return method && isScalerType(api_, flow_.astContext().getRecordType(method->getParent()));
  };
  flow_.state().process.manualScaling.backward(*fact.scaling.manual, fact.scaling.factor, flow_.loc(at),
                                               checksForNonFinite(flow_.function(), scalerMethod), findings());
}

void ScalerTracking::checkGradientsDividedBack(const Expr* gradient, const Expr* divisor, bool reciprocal,
                                               const Expr* at) {
  if (!flow_.evalTensor(gradient).scaling.isGradient) return;
  divisor = ignoreWrappers(divisor);
  // g.mul_(1.0 / s) divides by s too.
  if (reciprocal) {
    const auto* div = dyn_cast<BinaryOperator>(divisor);
    if (!div || div->getOpcode() != BO_Div) return;
    divisor = div->getRHS();
  }
  const auto factor = reinterpret_cast<uintptr_t>(referencedVariable(divisor));
  flow_.state().process.manualScaling.gradientsDividedBy(factor, flow_.loc(at), findings());
}

namespace {

// Whether a local's value is computed from gradients (`coef = max_norm /
// total`, `total = sqrt(sq)`, `sq += p.grad().pow(2).sum().item<double>()`,
// `norms.push_back(p.grad().norm(2))`), following the locals its assignments
// and insertions in `body` read.
bool derivedFromGradients(const VarDecl* var, const Stmt* body, std::set<const VarDecl*>& seen) {
  if (!var || !var->isLocalVarDecl() || !seen.insert(var).second) return false;
  std::vector<const Expr*> values;
  if (var->getInit()) values.push_back(var->getInit());
  containsStmt(body, [&](const Stmt* s) {
    if (const auto* op = dyn_cast<BinaryOperator>(s); op && op->isAssignmentOp() && declOf(op->getLHS()) == var)
      values.push_back(op->getRHS());
    if (const auto* insertion = dyn_cast<CXXMemberCallExpr>(s);
        insertion && insertion->getMethodDecl() &&
        named({"push_back", "emplace_back", "insert", "emplace"}, insertion->getMethodDecl()->getName()) &&
        declOf(ignoreWrappers(insertion->getImplicitObjectArgument())) == var)
      values.insert(values.end(), insertion->arg_begin(), insertion->arg_end());
    return false;
  });
  return std::any_of(values.begin(), values.end(), [&](const Expr* value) {
    return containsStmt(value, [&](const Stmt* s) {
      if (const auto* member = dyn_cast<CXXMemberCallExpr>(s))
        if (const NamedDecl* m = member->getMethodDecl(); m && named({"grad", "mutable_grad"}, m->getName()))
          return true;
      const auto* read = dyn_cast<DeclRefExpr>(s);
      return read && derivedFromGradients(dyn_cast<VarDecl>(read->getDecl()), body, seen);
    });
  });
}

}  // namespace

void ScalerTracking::checkGradientsClippedByHand(const Expr* gradient, const CallExpr* call, const std::string& name) {
  if (!flow_.evalTensor(gradient).scaling.isGradient || call->getNumArgs() == 0) return;
  if (name == "mul_") {
    std::set<const VarDecl*> seen;
    if (!derivedFromGradients(dyn_cast_or_null<VarDecl>(referencedVariable(ignoreWrappers(call->getArg(0)))),
                              flow_.function()->getBody(), seen))
      return;
  } else if (name != "clamp_") {
    return;
  }
  protocol().clip(nullptr, 0, flow_.loc(call), findings(), nullptr);
}

void ScalerTracking::declareScalerOrOptimizer(const ValueDecl* d, const Expr* init, const SourceLocation& at) {
  if (isa<FieldDecl>(d) && d->getType()->isReferenceType() && init)
    return bindReferenceMember(cast<FieldDecl>(d), init);
  if (d->getType()->isReferenceType() || d->getType()->isPointerType()) return;
  // An empty smart pointer (`std::unique_ptr<GradScaler> scaler_;`) holds no scaler yet.
  const Expr* value = init ? ignoreWrappers(init) : nullptr;
  const auto* construct = dyn_cast_or_null<CXXConstructExpr>(value);
  if (isSmartPointer(d->getType()) &&
      (!value || isa<CXXNullPtrLiteralExpr>(value) || (construct && construct->getNumArgs() == 0)))
    return;
  const ObjectRef ref{reinterpret_cast<uintptr_t>(d->getCanonicalDecl()), quotedName(d)};
  if (isScalerType(api_, d->getType())) {
    const ScalerEnabled enabled = enabledOnThisPath(value);
    return protocol().declareScaler(ref, enabled == ScalerEnabled::Maybe, enabled == ScalerEnabled::No, at);
  }
  if (isOptimizerType(d->getType())) declareOptimizer(ref, value, at);
}

void ScalerTracking::declareKeyedOptimizer(const Expr* element, const Expr* init, const SourceLocation& at) {
  if (const auto ref = keyedObject(element)) declareOptimizer(*ref, init ? ignoreWrappers(init) : nullptr, at);
}

void ScalerTracking::declareOptimizer(const ObjectRef& ref, const Expr* value, const SourceLocation& at) {
  // opt_ = make_optimizer(cfg, model_->parameters()): the optimizer the factory returns.
  if (const auto* call = dyn_cast_or_null<CallExpr>(value); call && isOptimizerType(call->getType()))
    if (const FunctionResult* r = flow_.userCallResult(call); r && r->returnedOptimizer)
      return protocol().declareOptimizer(ref, r->returnedOptimizer->dtype, r->returnedOptimizer->origin, 0);
  // Handed over in a smart pointer (`Wrapper(std::unique_ptr<Optimizer> opt) : opt_(std::move(opt))`):
  // an optimizer of parameters not known here, whose protocol is followed from now on.
  if (const auto* handed = dyn_cast_or_null<ParmVarDecl>(value ? declOf(value) : nullptr);
      handed && !handed->getType()->isReferenceType() && isSmartPointer(handed->getType()) &&
      isOptimizerType(handed->getType()))
    return protocol().declareOptimizer(ref, DtypeSet::unknown(), std::nullopt, 0);
  const auto construction = optimizerConstruction(value);
  if (!construction) return;
  const OptimizerParameters parameters = parametersOf(construction->args);
  protocol().declareOptimizer(ref, parameters.dtype, parameters.origin, parameters.module);
  for (const auto& [module, at] : flow_.state().frozenModules)
    if (reinterpret_cast<uintptr_t>(module) == parameters.module) protocol().parametersFrozen(ref, at);
  checkEpsilon(construction->record, ref.name, construction->args, parameters, at);
}

std::optional<SourceLocation> ScalerTracking::frozenHere(uintptr_t module) {
  if (!module) return std::nullopt;
  const ASTContext& context = flow_.astContext();
  const SourceLocation function =
      toLocation(flow_.function()->getSourceRange(), context.getSourceManager(), context.getLangOpts());
  for (const auto& [frozen, at] : flow_.state().frozenModules)
    if (reinterpret_cast<uintptr_t>(frozen) == module && function.contains(at)) return at;
  return std::nullopt;
}

// A scaler made with a bool argument not known to be true on this path
// (`GradScaler(65536.0, 2000, cfg.use_fp16)`, also through make_unique): its
// `enabled` flag, chosen at run time; known false: a scaler that does nothing.
ScalerTracking::ScalerEnabled ScalerTracking::enabledOnThisPath(const Expr* value) {
  const auto* construct = dyn_cast_or_null<CXXConstructExpr>(value);
  const auto* call = dyn_cast_or_null<CallExpr>(value);
  if (construct && construct->getNumArgs() == 1 && isSmartPointer(construct->getType()))
    return enabledOnThisPath(ignoreWrappers(construct->getArg(0)));
  if (const auto* created = dyn_cast_or_null<CXXNewExpr>(value)) construct = created->getConstructExpr();
  llvm::ArrayRef<const Expr*> args;
  if (construct) args = llvm::ArrayRef(construct->getArgs(), construct->getNumArgs());
  else if (call) args = llvm::ArrayRef(call->getArgs(), call->getNumArgs());
  for (const Expr* arg : args) {
    if (isa<CXXDefaultArgExpr>(arg)) continue;
    // GradScaler(options) with `options.enabled = amp_dtype == at::kHalf;`: its enabled field.
    if (const CXXRecordDecl* options = arg->getType()->getAsCXXRecordDecl();
        options && isUserCode(options->getLocation(), flow_.astContext().getSourceManager()))
      for (const FieldDecl* field : options->fields()) {
        if (!field->getType()->isBooleanType() || !field->getName().contains_insensitive("enable")) continue;
        const auto& bools = flow_.state().bools;
        const auto known = bools.find(cast<ValueDecl>(field->getCanonicalDecl()));
        if (known == bools.end()) return ScalerEnabled::Maybe;
        if (!known->second) return ScalerEnabled::No;
      }
    if (!arg->IgnoreImpCasts()->getType()->isBooleanType()) continue;
    if (const auto enabled = flow_.evalFlag(arg); !enabled || !*enabled)
      return enabled ? ScalerEnabled::No : ScalerEnabled::Maybe;
  }
  return ScalerEnabled::Yes;
}

// Optimizer(model->parameters(), Options(...).eps(...)), directly, with new,
// or through make_unique/make_shared: its class and arguments.
std::optional<ScalerTracking::OptimizerConstruction> ScalerTracking::optimizerConstruction(const Expr* value) {
  OptimizerConstruction out;
  // unique_ptr<Optimizer> from a unique_ptr<Adam>: the Adam.
  if (const auto* converted = dyn_cast_or_null<CXXConstructExpr>(value);
      converted && converted->getNumArgs() == 1 && isSmartPointer(converted->getType()))
    return optimizerConstruction(ignoreWrappers(converted->getArg(0)));
  if (const auto* construct = dyn_cast_or_null<CXXConstructExpr>(value)) {
    out.args.assign(construct->arg_begin(), construct->arg_end());
    out.record = pointeeRecord(construct->getType());
  } else if (const auto* created = dyn_cast_or_null<CXXNewExpr>(value); created && created->getConstructExpr()) {
    out.args.assign(created->getConstructExpr()->arg_begin(), created->getConstructExpr()->arg_end());
    out.record = pointeeRecord(created->getConstructExpr()->getType());
  } else if (const auto* call = dyn_cast_or_null<CallExpr>(value);
             call && (calleeName(call) == "make_unique" || calleeName(call) == "make_shared")) {
    out.args.assign(call->arg_begin(), call->arg_end());
    out.record = pointeeRecord(call->getType());
  }
  if (out.args.empty() || !out.record) return std::nullopt;
  return out;
}

// `return std::make_unique<torch::optim::Adam>(params, AdamOptions(lr));` in a
// factory: DL304 here, and the caller's optimizer gets these parameters.
void ScalerTracking::transferOptimizerReturn(const Expr* value, FunctionResult& result) {
  auto returns = [&](const TensorFact& returned) {
    result.returnedOptimizer = result.returnedOptimizer ? joinFacts(*result.returnedOptimizer, returned) : returned;
  };
  const auto construction = optimizerConstruction(ignoreWrappers(value));
  if (!construction) {
    // `return optimizer;` of one the function built (and checked) before.
    const OptimizerFacts* built = protocol().optimizer(objectRef(ignoreWrappers(value)).id);
    return returns(built ? TensorFact{built->parameterDtype, built->parametersOrigin} : TensorFact{});
  }
  const OptimizerParameters parameters = parametersOf(construction->args);
  returns(TensorFact{parameters.dtype, parameters.origin});
  checkEpsilon(construction->record, "", construction->args, parameters, flow_.loc(value));
}

void ScalerTracking::declareBinding(const BindingDecl* binding, const Expr* init) {
  const ObjectRef ref = declarationRef(binding, quotedName(binding));
  // A scaler the factory may not have made (`std::optional<GradScaler>` engaged
  // for fp16 only): made on a run-time choice, as one with an `enabled` flag.
  QualType held = binding->getType();
  const bool optional = isOptional(held);
  if (const auto* spec =
          optional ? dyn_cast<ClassTemplateSpecializationDecl>(held.getNonReferenceType()->getAsCXXRecordDecl())
                   : nullptr)
    held = spec->getTemplateArgs()[0].getAsType();
  if (isScalerType(api_, held)) return protocol().declareScaler(ref, optional);
  if (!isOptimizerType(binding->getType())) return;
  const auto* call = dyn_cast_or_null<CallExpr>(init ? ignoreWrappers(init) : nullptr);
  const FunctionResult* r = call ? flow_.userCallResult(call) : nullptr;
  if (r && r->returnedOptimizer)
    protocol().declareOptimizer(ref, r->returnedOptimizer->dtype, r->returnedOptimizer->origin, 0);
}

void ScalerTracking::bindReferenceMember(const FieldDecl* field, const Expr* init) {
  if (!isScalerType(api_, field->getType()) && !isOptimizerType(field->getType())) return;
  auto& bound = flow_.state().objects;
  const auto* key = cast<ValueDecl>(field->getCanonicalDecl());
  if (const ObjectRef object = objectRef(init); object.id) bound[key] = object;
  else bound.erase(key);
}

void ScalerTracking::bindReferenceMembers(const InitListExpr* list) {
  forEachFieldInit(list, [&](const FieldDecl* field, const Expr* init) {
    if (field->getType()->isReferenceType()) bindReferenceMember(field, init);
  });
}

ScalerTracking::OptimizerParameters ScalerTracking::parametersOf(const std::vector<const Expr*>& args) {
  OptimizerParameters out;
  const Expr* params = ignoreWrappers(args.front());
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(params); member && calleeName(member) == "parameters") {
    const Expr* object = member->getImplicitObjectArgument();
    const TensorFact fact = flow_.evalModule(object);
    out.dtype = fact.dtype;
    out.origin = fact.origin;
    if (const ValueDecl* d = declOf(moduleObject(object)))
      out.module = reinterpret_cast<uintptr_t>(d->getCanonicalDecl());
  } else if (isTensorListType(params->getType()) && !isa<CXXConstructExpr>(params)) {
    // A vector of parameters gathered elsewhere (`std::move(params)`): its
    // elements' dtypes. One known to be empty holds none (yet: the loop that
    // fills it is followed later), which joins as nothing, not as unknown.
    const ListFact list = flow_.evalList(params);
    const TensorFact fact = list.positional && list.elements.empty() ? TensorFact{DtypeSet()} : list.anyElement();
    out.dtype = fact.dtype;
    out.origin = fact.origin;
  } else if (const auto* list = dyn_cast<CXXConstructExpr>(params); list && list->getNumArgs() >= 1) {
    // Optimizer({w, b}, ...): the tensors' dtypes.
    const Expr* inner = ignoreWrappers(list->getArg(0));
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(inner)) inner = ignoreWrappers(std->getSubExpr());
    if (const auto* elements = dyn_cast<InitListExpr>(inner); elements && elements->getNumInits() > 0) {
      out.dtype = DtypeSet();
      for (const Expr* element : elements->inits()) {
        const TensorFact fact = flow_.evalTensor(element);
        out.dtype = out.dtype.join(fact.dtype);
        if (!out.origin) out.origin = fact.origin;
      }
    }
  }
  return out;
}

namespace {
// `Adam opt(params, 1e-3)`: options made from the learning rate by an
// implicit conversion, written nowhere (no fix can edit them).
bool convertedImplicitly(const Expr* e) {
  while (e) {
    if (const auto* cast = dyn_cast<ImplicitCastExpr>(e)) {
      if (cast->getCastKind() == CK_ConstructorConversion) return true;
      e = cast->getSubExpr();
    } else if (const auto* temporary = dyn_cast<MaterializeTemporaryExpr>(e)) {
      e = temporary->getSubExpr();
    } else if (const auto* bound = dyn_cast<CXXBindTemporaryExpr>(e)) {
      e = bound->getSubExpr();
    } else {
      return false;
    }
  }
  return false;
}
}  // namespace

void ScalerTracking::checkEpsilon(const CXXRecordDecl* record, const std::string& name,
                                  const std::vector<const Expr*>& args, const OptimizerParameters& parameters,
                                  const SourceLocation& at) {
  // DL304: the optimizers with an eps take it from their options, else their default.
  if (!record || !record->getDeclName().isIdentifier()) return;
  std::optional<double> eps = defaultEpsilon(record->getName());
  if (!eps) return;
  ASTContext& context = flow_.astContext();
  EpsilonSpelling spelling;
  // Where the eps is: written in the options, or defaulted in options written
  // in the call (where the fix adds it), else the optimizer's construction.
  SourceLocation reportedAt = at;
  std::optional<SourceLocation> defaultAt;  // the default of the config field it reads
  if (args.size() == 1) {
    spelling.parameters = editableLocation(args[0], context);
    spelling.optionsClass = "torch::optim::" + record->getName().str() + "Options";
  }
  for (size_t i = 1; i < args.size(); ++i) {
    // Options written in the call (not a local's initializer, which other code may share) get the fix.
    if (const Expr* written = ignoreWrappers(args[i]);
        optionsExpression(written) == written && !convertedImplicitly(args[i])) {
      spelling.options = editableLocation(written, context);
      if (spelling.options) reportedAt = *spelling.options;  // not a default argument's
    }
    for (const Expr* option = optionsExpression(args[i]);
         const auto* member = dyn_cast_or_null<CXXMemberCallExpr>(option);
         option = optionsExpression(member->getImplicitObjectArgument()))
      if (calleeName(member) == "eps" && member->getNumArgs() == 1) {
        eps = numericConstant(member->getArg(0), context);
        // A config's field: its default, which the program runs with unless
        // the setting is given; other values the analysis cannot read are not judged.
        const auto* field = dyn_cast_or_null<FieldDecl>(declOf(ignoreConversions(member->getArg(0))));
        if (const Expr* fallback = !eps && field ? field->getInClassInitializer() : nullptr) {
          eps = numericConstant(fallback, context);
          defaultAt = flow_.loc(fallback);
        }
        if (!eps) return;
        const Expr* value = ignoreConversions(member->getArg(0));
        spelling.literal =
            isa<FloatingLiteral, IntegerLiteral>(value) ? editableLocation(value, context) : std::nullopt;
        spelling.options.reset();
        reportedAt = flow_.loc(member->getArg(0));
        break;
      }
  }
  const size_t before = findings().size();
  checkOptimizerEpsilon(name.empty() ? record->getName().str() : record->getName().str() + " " + name, *eps,
                        parameters.dtype, parameters.origin, reportedAt, findings(), spelling);
  if (defaultAt && findings().size() > before)
    findings().back().notes.push_back(Note{*defaultAt, fmt::format("eps is {:g} unless the setting is given", *eps)});
}

// The whole lines a statement is written on, newline included, and their
// text, when nothing but blanks and a trailing // comment shares them (and no
// macro wrote it).
std::optional<std::pair<SourceLocation, std::string>> ScalerTracking::ownLines(const Stmt* statement,
                                                                               ASTContext& context) {
  const SourceManager& sm = context.getSourceManager();
  const SourceRange range = statement->getSourceRange();
  if (range.getBegin().isMacroID() || range.getEnd().isMacroID()) return std::nullopt;
  const clang::SourceLocation end = Lexer::getLocForEndOfToken(range.getEnd(), 0, sm, context.getLangOpts());
  const FileID file = sm.getFileID(range.getBegin());
  const llvm::StringRef text = sm.getBufferData(file);
  const unsigned begin = sm.getFileOffset(range.getBegin()), stop = sm.getFileOffset(end);
  const size_t newlineBefore = text.rfind('\n', begin);
  const size_t lineStart = newlineBefore == llvm::StringRef::npos ? 0 : newlineBefore + 1;
  const size_t lineEnd = text.find('\n', stop);
  if (lineEnd == llvm::StringRef::npos) return std::nullopt;
  llvm::StringRef rest = text.slice(stop, lineEnd).ltrim(" \t;");
  if (!text.slice(lineStart, begin).trim().empty() || !(rest.empty() || rest.startswith("//"))) return std::nullopt;
  SourceLocation lines = toLocation(range, sm, context.getLangOpts());
  lines.column = 1;
  lines.endLine = sm.getLineNumber(file, lineEnd);
  lines.endColumn = sm.getColumnNumber(file, lineEnd);  // the newline itself
  return std::pair{lines, text.slice(lineStart, lineEnd + 1).str()};
}

// Options built in a local first (auto options = AdamWOptions(lr).eps(1e-4)): the local's initializer.
const Expr* ScalerTracking::optionsExpression(const Expr* e) {
  e = ignoreWrappers(e);
  if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(e))
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->isLocalVarDecl() && var->getInit())
      return ignoreWrappers(var->getInit());
  return e;
}

}  // namespace dtype_lint::analyzer::flow
