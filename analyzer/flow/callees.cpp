// The calls the analysis follows into: user functions, module forwards,
// constructors and destructors, custom autograd Functions. Each callee is
// analyzed in a context made from the caller's state by calleeContext.
#include <fmt/format.h>

#include "flow/ast_helpers.h"
#include "flow/function_analysis.h"
#include "torch_api.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

std::optional<CallContext> FunctionAnalysis::calleeContext(Inherit inherit, std::optional<Note> calledFrom) {
  if (ctx_.depth >= tu_.limits().maxCallDepth) {
    tu_.noteTruncation(fn_, Truncation::CallDepth);
    return std::nullopt;
  }
  CallContext c;
  c.depth = ctx_.depth + 1;
  c.callChain = ctx_.callChain;
  if (calledFrom) {
    c.callChain.insert(c.callChain.begin(), std::move(*calledFrom));
    c.caller = fn_;
  }
  c.members = MemberFacts::of(state_);
  c.assumptions = ctx_.assumptions;
  c.moduleEntry = ctx_.moduleEntry;
  if (inherit == Inherit::Nothing) return c;
  c.process = state_.process;
  if (inherit == Inherit::ProcessOnly) return c;
  c.inCustomBackward = ctx_.inCustomBackward;
  c.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  c.guardedByScalerState = ctx_.guardedByScalerState;
  return c;
}

std::optional<CallContext> FunctionAnalysis::userCallContext(const CallExpr* call, const FunctionDecl* callee) {
  if (!callee) return std::nullopt;
  // A lambda or a functor is named by what the call calls (`clip_fn()`), not `operator()`.
  const auto* lambda = dyn_cast<CXXMethodDecl>(callee);
  if (lambda && !lambda->getParent()->isLambda()) lambda = nullptr;
  const auto* invoked = dyn_cast<CXXOperatorCallExpr>(call);
  if (invoked && invoked->getOperator() != OO_Call) invoked = nullptr;
  const std::string name =
      invoked ? (lambda ? "lambda " : "") +
                    quotedSource(invoked->getArg(0), tu_.context().getSourceManager(), tu_.context().getLangOpts())
              : fmt::format("'{}'", callee->getNameAsString());
  auto c =
      calleeContext(Inherit::ProcessAndBackwardContext, note(call, fmt::format("in the call to {} from here", name)));
  if (!c) return std::nullopt;
  const unsigned firstArg = firstParameterArgument(call, callee);
  for (unsigned i = 0; i < callee->getNumParams(); ++i) {
    const unsigned argIndex = i + firstArg;
    c->args.push_back(argIndex < call->getNumArgs()
                          ? evalValue(call->getArg(argIndex), callee->getParamDecl(i)->getType())
                          : Value{});
    // A setting passed on (`autocast_dtype(cfg_.precision)`): the parameter holds its assumed value.
    const ValueDecl* read = argIndex < call->getNumArgs() ? declOf(ignoreConversions(call->getArg(argIndex))) : nullptr;
    if (const FlagAssumption* assumed =
            read ? ctx_.assumedSetting(cast<ValueDecl>(read->getCanonicalDecl())) : nullptr) {
      FlagAssumption passed = *assumed;
      passed.flag = cast<ValueDecl>(callee->getParamDecl(i)->getCanonicalDecl());
      c->assumptions.push_back(std::move(passed));
    }
  }
  // The object a method is called on: `serving.run(x)`, or `serving(x)` (a functor's operator()).
  const Expr* object = nullptr;
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) object = member->getImplicitObjectArgument();
  else if (invoked && !lambda && isa<CXXMethodDecl>(callee)) object = invoked->getArg(0);
  if (object) {
    if (moduleImplClass(object->getType())) {
      c->thisModule = evalModule(object);
      c->thisModuleOfUnknownOrigin = moduleOfUnknownOrigin(object);
      enterModule(*c);
    } else if (!isa<CXXThisExpr>(object->IgnoreImpCasts())) c->thisObject = scalers_.objectRef(object);
    else c->thisObject = ctx_.thisObject;
    if (isa<CXXThisExpr>(object->IgnoreImpCasts()) && underTestOfOwnMembers(call)) c->guardedByScalerState = true;
    c->thisClass = objectClass(object);
  }
  if (lambda) {
    c->enclosing = std::make_shared<const FlowState>(state_);
    c->thisModule = ctx_.thisModule;
  }
  if (!c->thisModule && isa<CXXMethodDecl>(callee) && ctx_.thisModule &&
      cast<CXXMethodDecl>(callee)->getParent() == dyn_cast<CXXMethodDecl>(fn_)->getParent())
    c->thisModule = ctx_.thisModule;
  return c;
}

// The class of the object a method is called on, where the call shows it: a
// local object or member (not a reference or a pointer to a base), or *this
// of a method called on one.
const CXXRecordDecl* FunctionAnalysis::objectClass(const Expr* object) {
  object = object->IgnoreParenImpCasts();
  if (isa<CXXThisExpr>(object)) return ctx_.thisClass;
  const ValueDecl* d = nullptr;
  if (const auto* ref = dyn_cast<DeclRefExpr>(object)) d = dyn_cast<VarDecl>(ref->getDecl());
  if (const auto* member = dyn_cast<MemberExpr>(object)) d = dyn_cast<FieldDecl>(member->getMemberDecl());
  if (!d || d->getType()->isReferenceType() || d->getType()->isPointerType()) return nullptr;
  return d->getType()->getAsCXXRecordDecl();
}

std::vector<const FunctionDecl*> FunctionAnalysis::calledDefinitions(const CallExpr* call,
                                                                     const FunctionDecl* definition) {
  std::vector<const FunctionDecl*> none;
  const Expr* object = nullptr;
  const CXXMethodDecl* method = nullptr;
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    method = member->getMethodDecl();
    object = member->getImplicitObjectArgument();
  } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getNumArgs() > 0) {
    // (*loss_fn_)(pred, target): operator() called on the object.
    method = dyn_cast_or_null<CXXMethodDecl>(op->getDirectCallee());
    object = op->getArg(0);
  }
  if (!method || !method->isVirtual()) return definition ? std::vector{definition} : none;
  if (const CXXRecordDecl* dynamic = objectClass(object)) {
    const CXXMethodDecl* overrider = method->getCorrespondingMethodInClass(dynamic, /*MayBeBase=*/true);
    const FunctionDecl* def = overrider ? overrider->getDefinition() : nullptr;
    def = def && isAnalyzable(def) ? def : definition;
    return def ? std::vector{def} : none;
  }
  // The object's class is not known (a std::unique_ptr<Loss> a factory
  // filled): each override the program defines may run, when few do.
  constexpr size_t kMaxOverrides = 4;
  std::vector<const FunctionDecl*> candidates;
  if (definition) candidates.push_back(definition);
  for (const CXXMethodDecl* overrider : tu_.overridersOf(method))
    if (isAnalyzable(overrider) && std::find(candidates.begin(), candidates.end(), overrider) == candidates.end())
      candidates.push_back(overrider);
  if (candidates.size() > kMaxOverrides) return definition ? std::vector{definition} : none;
  return candidates;
}

// `model->moe` of a `Classifier& model` parameter, `b->as<Block>()` of a
// ModuleList's element: a module whose dtype this call does not know.
bool FunctionAnalysis::moduleOfUnknownOrigin(const Expr* module) {
  const Expr* e = moduleObject(module);
  // b->as<Block>(): a ModuleList's element, made by its owner and maybe converted with it since.
  if (const auto* as = dyn_cast_or_null<CXXMemberCallExpr>(e); as && calleeName(as) == "as") return true;
  while (const auto* member = dyn_cast_or_null<MemberExpr>(e ? e->IgnoreImpCasts() : nullptr))
    e = moduleObject(member->getBase());
  if (!e) return false;
  // A submodule of a module of unknown origin was converted with it, or not.
  if (isa<CXXThisExpr>(e->IgnoreImpCasts()) && ctx_.thisModuleOfUnknownOrigin) return true;
  const ValueDecl* root = declOf(e);
  return (!root || isa<ParmVarDecl>(root)) && !evalModule(e).dtype.single();
}

void FunctionAnalysis::transferModuleCall(const ModuleCall& called, const CallExpr* call) {
  const ModuleCall module = withUserBlocks(called);
  if (module.args.empty()) return;
  if (module.op.empty()) {
    if (const FunctionResult* r = analyzeModuleCall(module, call)) applyCalleeExit(*r);
    return;
  }
  if (isMatmulFamily(module.op)) return emitModuleCall(module.op, call, module.args.front(), module.module);
  if (isTableLookup(module.op)) return;  // integer indices: no dtypes meet
  // Norm and loss modules: the op runs on the inputs.
  emitOp(module.op, call, module.args, nullptr, false, false);
}

void FunctionAnalysis::applyCalleeExit(const FunctionResult& r) {
  // Helpers, forwards and RAII guards that switch autocast, clear its cache or drive the scaler.
  if (!r.exitReached) return;
  state_.process = r.exit;
  r.members.replaceIn(state_);
  if (r.enclosingAtExit) state_ = *r.enclosingAtExit;
}

void FunctionAnalysis::transferUserCall(const FunctionDecl* callee, const CallContext& calleeCtx,
                                        const CallExpr* call) {
  const FunctionResult* r = tu_.analyze(callee, calleeCtx);
  if (!r) return;
  // A call that never returns ends the path (a handler around it has the state before it).
  if (r->neverReturns) {
    state_.reached = false;
    return;
  }
  applyCalleeExit(*r);
  if (!call || !r->exitReached) return;
  // The modules it converted through a reference: the caller's are.
  const unsigned firstArg = firstParameterArgument(call, callee);
  for (const auto& [index, fact] : r->convertedModuleArgs) {
    if (index + firstArg >= call->getNumArgs()) continue;
    const Expr* module = ignoreWrappers(call->getArg(index + firstArg));
    if (const ValueDecl* target = declOf(moduleObject(module))) {
      state_.modules[target] = fact;
      forgetConvertedMembers(moduleImplClass(module->getType()));
    }
  }
}

void FunctionAnalysis::enterModule(CallContext& callee) const {
  if (ctx_.moduleEntry) return;
  ModuleEntry entry;
  entry.chainLength = callee.callChain.size();
  for (const Value& arg : callee.args)
    if (arg.kind == Value::Kind::Tensor && arg.fact.origin) entry.inputOrigins.push_back(arg.fact.origin->location);
  if (callee.thisModule && callee.thisModule->origin && !callee.thisModule->asBuilt)
    entry.moduleOrigin = callee.thisModule->origin->location;
  callee.moduleEntry = std::move(entry);
}

const FunctionResult* FunctionAnalysis::analyzeModuleCall(const ModuleCall& module, const Expr* at) {
  if (!isUserModule(module.impl)) return nullptr;
  const FunctionDecl* forward = moduleForward(module.impl);
  if (!isAnalyzable(forward)) return nullptr;
  auto c =
      calleeContext(Inherit::ProcessOnly,
                    note(at, fmt::format("in the call to module {} from here", describe(moduleObject(module.module)))));
  if (!c) return nullptr;
  c->thisModule = evalModule(module.module);
  // A Sequential's block was converted with its owner since its constructor ran.
  c->thisModuleOfUnknownOrigin = module.heldBySequential || moduleOfUnknownOrigin(module.module);
  size_t next = 0;
  for (unsigned i = 0; i < forward->getNumParams(); ++i) {
    Value v;
    if (isTensorType(forward->getParamDecl(i)->getType()) && next < module.args.size()) {
      v.kind = Value::Kind::Tensor;
      v.fact = evalTensor(module.args[next++]);
    }
    c->args.push_back(v);
  }
  enterModule(*c);
  return tu_.analyze(forward, *c);
}

const FunctionResult* FunctionAnalysis::analyzeAutogradApply(const CallExpr* call, const CXXRecordDecl* function) {
  if (!isCustomAutogradFunction(function)) return nullptr;
  const FunctionDecl* forward = nullptr;
  const FunctionDecl* backward = nullptr;
  for (const CXXMethodDecl* m : function->methods()) {
    if (!m->getDeclName().isIdentifier() || !m->hasBody()) continue;
    if (m->getName() == "forward") forward = m->getDefinition();
    if (m->getName() == "backward") backward = m->getDefinition();
  }
  if (!isAnalyzable(forward)) return nullptr;
  auto fwd = calleeContext(Inherit::ProcessOnly,
                           note(call, fmt::format("in '{}::forward' called from here", function->getName().str())));
  if (!fwd) return nullptr;
  // forward(AutogradContext* ctx, args...): apply's arguments start at the second parameter.
  fwd->args.push_back(Value{});
  for (unsigned i = 1; i < forward->getNumParams(); ++i)
    fwd->args.push_back(i - 1 < call->getNumArgs() ? evalValue(call->getArg(i - 1), forward->getParamDecl(i)->getType())
                                                   : Value{});
  const FunctionResult* forwardResult = tu_.analyze(forward, *fwd);
  if (!forwardResult) return nullptr;
  if (isAnalyzable(backward) && !state_.process.gradDisabled)
    analyzeCustomBackward(backward, *forwardResult, call, function);
  return forwardResult;
}

void FunctionAnalysis::analyzeCustomBackward(const FunctionDecl* backward, const FunctionResult& forward,
                                             const CallExpr* call, const CXXRecordDecl* function) {
  auto bwd = calleeContext(Inherit::Nothing, std::nullopt);
  if (!bwd) return;
  bwd->inCustomBackward = true;
  bwd->process.autocast.cpu.enabled = bwd->process.autocast.cuda.enabled = Tristate::Off;
  if (state_.process.autocast.anyOn())
    bwd->forwardUnderAutocast =
        note(call, fmt::format("'{}::forward' ran under autocast from here", function->getName().str()));
  bwd->savedVariables = forward.savedForBackward;
  bwd->savedData = forward.savedData;
  bwd->args.push_back(Value{});
  // grad_outputs[i] has the dtype of forward's i-th output.
  Value grads;
  grads.kind = Value::Kind::List;
  grads.list = forward.returnedList ? *forward.returnedList : ListFact{{forward.returned}};
  for (TensorFact& grad : grads.list.elements)
    if (grad.origin) grad.origin->message = "(the gradient of forward's output) " + grad.origin->message;
  bwd->args.push_back(grads);
  tu_.analyze(backward, *bwd);
}

void FunctionAnalysis::transferConstruct(const CXXConstructExpr* construct) {
  const CXXConstructorDecl* ctor = construct->getConstructor();
  const FunctionDecl* def = ctor ? ctor->getDefinition() : nullptr;
  if (!def || !isAnalyzable(def)) return;
  auto c = calleeContext(Inherit::ProcessOnly, std::nullopt);
  if (!c) return;
  for (unsigned i = 0; i < def->getNumParams(); ++i)
    c->args.push_back(i < construct->getNumArgs() ? evalValue(construct->getArg(i), def->getParamDecl(i)->getType())
                                                  : Value{});
  transferUserCall(def, *c);
}

}  // namespace dtype_lint::analyzer::flow
