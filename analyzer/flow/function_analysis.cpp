#include "flow/function_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "flow/ast_helpers.h"
#include "flow/settings.h"
#include "torch_api.h"
#include "clang/AST/ParentMapContext.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

FunctionAnalysis::FunctionAnalysis(TranslationUnitAnalysis& tu, const FunctionDecl* fn, const CallContext& ctx,
                                   CFG& cfg)
    : tu_(tu), fn_(fn), ctx_(ctx), cfg_(cfg), sm_(tu.context().getSourceManager()), lang_(tu.context().getLangOpts()),
      scalers_(*this, tu.scalerApi()) {}

// ---- helpers --------------------------------------------------------------

SourceLocation FunctionAnalysis::toLocation(SourceRange range) const { return flow::toLocation(range, sm_, lang_); }

const ValueDecl* FunctionAnalysis::structBase(const MemberExpr* member) {
  const Expr* base = ignoreWrappers(member->getBase());
  const ValueDecl* d = nullptr;
  if (const auto* ref = dyn_cast<DeclRefExpr>(base); ref && isa<VarDecl>(ref->getDecl())) d = ref->getDecl();
  // A struct member of this object (`s_.amp_dtype` in a Trainer's method).
  if (const auto* field = dyn_cast<MemberExpr>(base);
      field && isa<CXXThisExpr>(ignoreWrappers(field->getBase())) && isa<FieldDecl>(field->getMemberDecl()))
    d = field->getMemberDecl();
  if (!d) return nullptr;
  const QualType type = d->getType().getNonReferenceType();
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record || isTensorType(type) || moduleImplClass(type) || isOptimizerType(type) || isScaler(type)) return nullptr;
  return d;
}

const FunctionResult* FunctionAnalysis::userCallResult(const Expr* e) {
  const auto* call = dyn_cast_or_null<CallExpr>(ignoreWrappers(e));
  const FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
  const FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
  // A builder's result: only where one function is what the call runs.
  const auto definitions =
      call ? calledDefinitions(call, def && isAnalyzable(def) ? def : nullptr) : std::vector<const FunctionDecl*>{};
  if (definitions.size() != 1) return nullptr;
  def = definitions.front();
  auto c = userCallContext(call, def);
  return c ? tu_.analyze(def, *c) : nullptr;
}

std::string FunctionAnalysis::describe(const Expr* e) { return quotedSource(ignoreWrappers(e), sm_, lang_); }

Operand FunctionAnalysis::operand(std::string description, const TensorFact& fact) {
  Operand out{std::move(description), fact.dtype, fact.origin, fact.castInAutocast, fact.dtypeConstant};
  if (fact.origin && !fact.originNamed) out.origin->message = out.description + " " + fact.origin->message;
  return out;
}

TensorFact named(TensorFact fact, const NamedDecl* variable) {
  if (fact.origin && !fact.originNamed) {
    fact.origin->message = fmt::format("'{}' {}", variable->getNameAsString(), fact.origin->message);
    fact.originNamed = true;
  }
  return fact;
}

bool FunctionAnalysis::hasExplicitDtype(const CallExpr* call) {
  for (const Expr* arg : call->arguments()) {
    arg = ignoreWrappers(arg);
    if (isa<CXXDefaultArgExpr>(arg)) continue;
    if (isScalarTypeType(arg->getType()) || isTensorOptionsType(arg->getType())) {
      if (auto d = evalDtypeArgument(arg); d && !d->dtype.isUnknown()) return true;
      continue;
    }
    // Functional options: F::SoftmaxFuncOptions(1).dtype(torch::kFloat)
    for (const Expr* e = arg; const auto* member = dyn_cast_or_null<CXXMemberCallExpr>(e);
         e = ignoreWrappers(member->getImplicitObjectArgument())) {
      if (member->getMethodDecl() && member->getMethodDecl()->getName() == "dtype" && member->getNumArgs() == 1)
        return true;
    }
  }
  return false;
}

// ---- exceptions -------------------------------------------------------------

void FunctionAnalysis::findTryRegions() {
  for (const CFGBlock* block : cfg_)
    if (const auto* tryStmt = dyn_cast_or_null<CXXTryStmt>(block->getTerminatorStmt()))
      tries_[tryStmt].dispatch = block;
}

// The innermost try statement whose try block (not a handler) holds s.
const CXXTryStmt* FunctionAnalysis::enclosingTry(const Stmt* s) {
  ASTContext& context = tu_.context();
  while (s && s != fn_->getBody()) {
    const DynTypedNodeList parents = context.getParents(*s);
    if (parents.empty()) return nullptr;
    const Stmt* parent = parents[0].get<Stmt>();
    if (const auto* tryStmt = dyn_cast_or_null<CXXTryStmt>(parent); tryStmt && tryStmt->getTryBlock() == s)
      return tryStmt;
    s = parent;
  }
  return nullptr;
}

// Whether s runs only on one side of an if (or ?:) whose condition reads a
// member of `this`: an object's code guarded by its own bookkeeping.
bool FunctionAnalysis::underTestOfOwnMembers(const Stmt* s) {
  auto readsOwnMember = [](const Expr* condition) {
    return containsStmt(condition, [](const Stmt* s) {
      const auto* member = dyn_cast<MemberExpr>(s);
      return member && isa<CXXThisExpr>(member->getBase()->IgnoreParenImpCasts());
    });
  };
  ASTContext& context = tu_.context();
  while (s && s != fn_->getBody()) {
    const DynTypedNodeList parents = context.getParents(*s);
    if (parents.empty()) return false;
    const Stmt* parent = parents[0].get<Stmt>();
    if (const auto* branch = dyn_cast_or_null<IfStmt>(parent);
        branch && branch->getCond() != s && readsOwnMember(branch->getCond()))
      return true;
    if (const auto* choice = dyn_cast_or_null<ConditionalOperator>(parent);
        choice && choice->getCond() != s && readsOwnMember(choice->getCond()))
      return true;
    s = parent;
  }
  return false;
}

void FunctionAnalysis::noteThrowPoint(const CFGElement& element) {
  const auto stmt = element.getAs<CFGStmt>();
  if (!stmt || !isa<CallExpr, CXXConstructExpr, CXXThrowExpr>(stmt->getStmt())) return;
  const CXXTryStmt* tryStmt = enclosingTry(stmt->getStmt());
  // A try this CFG has no dispatch block for (the template pattern's, where
  // the parents of an instantiated statement lead): not one of this function's.
  auto found = tryStmt ? tries_.find(tryStmt) : tries_.end();
  if (found == tries_.end() || !found->second.dispatch) return;
  TryRegion& region = found->second;
  FlowState joined = region.thrown;
  joined.join(state_);
  if (joined.sameAs(region.thrown)) return;
  region.thrown = std::move(joined);
  reopenedHandlers_.push_back(region.dispatch);
}

// ---- the worklist ---------------------------------------------------------------

void FunctionAnalysis::transferBlock(const CFGBlock& block) {
  for (const CFGElement& element : block) {
    if (collectingThrows_ && !tries_.empty()) noteThrowPoint(element);
    transfer(element);
    if (!state_.reached) break;
  }
}

FlowState FunctionAnalysis::entryState() {
  FlowState entry;
  entry.reached = true;
  entry.process = ctx_.process;
  for (unsigned i = 0; i < fn_->getNumParams() && i < ctx_.args.size(); ++i) {
    const ParmVarDecl* param = fn_->getParamDecl(i);
    const Value& v = ctx_.args[i];
    switch (v.kind) {
    case Value::Kind::Tensor:
    case Value::Kind::Dtype: entry.tensors[param] = v.fact; break;
    case Value::Kind::Module: entry.modules[param] = v.fact; break;
    case Value::Kind::List: entry.lists[param] = v.list; break;
    case Value::Kind::Object: scalers_.bindParameter(param, v.object); break;
    case Value::Kind::Struct: entry.structs[param] = v.fields; break;
    case Value::Kind::Bool: entry.bools[param->getCanonicalDecl()] = v.flag; break;
    case Value::Kind::None: break;
    }
  }
  if (ctx_.members) ctx_.members->replaceIn(entry);
  if (ctx_.enclosing) {
    // A lambda sees the variables of the function it is called in.
    entry.tensors.insert(ctx_.enclosing->tensors.begin(), ctx_.enclosing->tensors.end());
    entry.modules.insert(ctx_.enclosing->modules.begin(), ctx_.enclosing->modules.end());
    entry.lists.insert(ctx_.enclosing->lists.begin(), ctx_.enclosing->lists.end());
    entry.structs.insert(ctx_.enclosing->structs.begin(), ctx_.enclosing->structs.end());
  }
  seedClassInvariant(entry);
  return entry;
}

// What the lambda leaves of its enclosing function's variables: theirs as it
// changed them (captured by reference); its own locals go out of scope.
FlowState FunctionAnalysis::enclosingAfter(const FlowState& exit) const {
  FlowState out = *ctx_.enclosing;
  auto update = [](auto& into, const auto& from) {
    for (auto it = into.begin(); it != into.end();) {
      auto found = from.find(it->first);
      if (found == from.end()) {
        it = into.erase(it);
        continue;
      }
      it->second = found->second;
      ++it;
    }
  };
  update(out.tensors, exit.tensors);
  update(out.modules, exit.modules);
  update(out.lists, exit.lists);
  update(out.structs, exit.structs);
  out.process = exit.process;
  return out;
}

// A method of a user object starts from what its constructors establish for
// the members its caller does not know of (the object was built elsewhere).
void FunctionAnalysis::seedClassInvariant(FlowState& entry) {
  const auto* method = dyn_cast<CXXMethodDecl>(fn_);
  if (!method || isa<CXXConstructorDecl>(method) || method->isStatic() || !isUserCode(method->getLocation(), sm_))
    return;
  const TranslationUnitAnalysis::ClassInvariant* invariant = tu_.classInvariant(method->getParent(), ctx_);
  if (!invariant) return;
  MemberFacts members = invariant->members;
  // The modules its constructors converted stay converted; a converted
  // module's registered tensors and submodules are not what its constructor made.
  entry.convertedModules.insert(members.convertedModules.begin(), members.convertedModules.end());
  auto dropConverted = [&](auto& facts) {
    for (auto it = facts.begin(); it != facts.end();) {
      const auto* field = cast<FieldDecl>(it->first);
      const bool followsOwner = holdsTensorElements(field->getType())
                                    ? moduleListElementClass(field->getType()) != nullptr
                                    : !tu_.unregisteredModuleTensor(field);
      it = entry.convertedModules.count(dyn_cast<CXXRecordDecl>(field->getParent())) && followsOwner ? facts.erase(it)
                                                                                                     : std::next(it);
    }
  };
  dropConverted(members.tensors);
  dropConverted(members.modules);
  dropConverted(members.lists);
  // A module called through an object whose dtype the caller does not know
  // (its parameter, a module list's element) may have been converted since it
  // was built (by a builder in another file, with its owner): what its
  // constructor made is not known either.
  if (ctx_.thisModuleOfUnknownOrigin) {
    members.tensors.clear();
    members.modules.clear();
  }
  members.convertedModules = entry.convertedModules;
  members.addMissingTo(entry);
  entry.process.protocol.adoptDeclarations(invariant->protocol);
}

bool FunctionAnalysis::edgeFeasible(const CFGBlock* pred, const CFGBlock* succ, const FlowState& predExit) {
  const Stmt* terminator = pred->getTerminatorStmt();
  if (const auto* s = dyn_cast_or_null<SwitchStmt>(terminator)) return caseFeasible(s, succ);
  const auto* logical = dyn_cast_or_null<BinaryOperator>(terminator);
  if (!terminator || pred->succ_size() != 2 ||
      !(isa<IfStmt, ConditionalOperator>(terminator) || (logical && logical->isLogicalOp())))
    return true;
  const auto* condition = dyn_cast_or_null<Expr>(pred->getTerminatorCondition());
  branchState_ = &predExit;
  const std::optional<bool> value = condition ? evalFlag(condition) : std::nullopt;
  branchState_ = nullptr;
  if (!value) return true;
  const CFGBlock::AdjacentBlock& taken = *(pred->succ_begin() + (*value ? 0 : 1));
  return taken.getReachableBlock() == succ;
}

// A switch on a setting this analysis assumes runs the case naming its value,
// else `default:` (or nothing: the block after the switch).
bool FunctionAnalysis::caseFeasible(const SwitchStmt* s, const CFGBlock* succ) {
  const auto chosen = settingSwitch(s);
  const FlagAssumption* assumed = chosen ? ctx_.assumedSetting(chosen->setting) : nullptr;
  if (!assumed) return true;
  auto names = [&](const std::optional<std::string>& value) { return assumed->value && value == assumed->setting; };
  const auto& cases = chosen->cases;
  const bool anyNamed = std::any_of(cases.begin(), cases.end(), [&](const auto& c) { return names(c.second); });
  for (const auto& [label, value] : cases)
    if (label == succ->getLabel()) return value ? names(value) : !anyNamed;
  // The block after the switch: taken when no case names the value and there is no default.
  return !anyNamed && std::all_of(cases.begin(), cases.end(), [](const auto& c) { return c.second.has_value(); });
}

// A condition whose value is known: a constant, a config flag no code writes
// (its default member initializer), or a runtime flag this analysis assumes.
std::optional<bool> FunctionAnalysis::evalFlag(const Expr* condition) {
  condition = condition->IgnoreParenImpCasts();
  if (const auto* negation = dyn_cast<UnaryOperator>(condition); negation && negation->getOpcode() == UO_LNot) {
    const auto value = evalFlag(negation->getSubExpr());
    return value ? std::optional<bool>(!*value) : std::nullopt;
  }
  // `a && b`, `a || b`: known when one side decides it, or both are known.
  if (const auto* logical = dyn_cast<BinaryOperator>(condition); logical && logical->isLogicalOp()) {
    const bool isAnd = logical->getOpcode() == BO_LAnd;
    const auto lhs = evalFlag(logical->getLHS()), rhs = evalFlag(logical->getRHS());
    if (lhs == !isAnd || rhs == !isAnd) return !isAnd;
    if (lhs && rhs) return isAnd;
    return std::nullopt;
  }
  if (const Expr* predicate = predicateBody(condition)) return evalFlag(predicate);
  // `if (torch::GradMode::is_enabled())`: off under a NoGradGuard on every path, on elsewhere.
  if (const auto* call = dyn_cast<CallExpr>(condition); call && call->getNumArgs() == 0)
    if (const auto* method = dyn_cast_or_null<CXXMethodDecl>(call->getDirectCallee());
        method && method->getDeclName().isIdentifier() && method->getName() == "is_enabled" &&
        method->getParent()->getQualifiedNameAsString() == "c10::GradMode")
      return !(branchState_ ? *branchState_ : state_).process.gradDisabled;
  // `if (at::autocast::is_enabled()) return fused(x);`
  if (const auto enabled = autocastQuery(condition, branchState_ ? *branchState_ : state_)) return enabled;
  if (const auto test = settingTest(condition))
    if (const FlagAssumption* assumed = ctx_.assumedSetting(test->setting))
      return (assumed->value && assumed->setting == test->value) == test->holdsOnValue;
  // `cfg.dtype != torch::kFloat` where both dtypes are known on this path.
  if (const auto comparison = dtypeComparison(condition)) {
    const auto lhs = evalDtypeArgument(comparison->lhs), rhs = evalDtypeArgument(comparison->rhs);
    if (lhs && rhs && lhs->dtype.single() && rhs->dtype.single())
      return (lhs->dtype == rhs->dtype) == comparison->isEqual;
  }
  if (const auto membership = settingMembership(condition))
    if (const FlagAssumption* assumed = ctx_.assumedSetting(membership->lookup.setting)) {
      const auto& entries = membership->lookup.entries;
      const bool found = assumed->value && std::any_of(entries.begin(), entries.end(), [&](const auto& entry) {
                           return entry.first == assumed->setting;
                         });
      return found == membership->holdsWhenFound;
    }
  if (const clang::ValueDecl* flag = testedFlag(condition)) {
    const FlowState& state = branchState_ ? *branchState_ : state_;
    if (auto known = state.bools.find(flag); known != state.bools.end()) return known->second;
    if (const auto value = ctx_.assumed(flag)) return value;
    // `const bool half = cfg.precision == "fp16";`: the setting's test.
    if (const Expr* init = tu_.unwrittenLocalInit(flag))
      if (const auto value = evalFlag(init)) return value;
  }
  // `if (scaler_)`: a pointer to a scaler or optimizer this path created.
  const Expr* pointer = condition->getType()->isPointerType() ? condition : nullptr;
  if (const auto* conversion = dyn_cast<CXXMemberCallExpr>(condition);
      conversion &&
      (isa_and_nonnull<CXXConversionDecl>(conversion->getMethodDecl()) ||
       (calleeName(conversion) == "has_value" && isOptional(conversion->getImplicitObjectArgument()->getType()))))
    pointer = conversion->getImplicitObjectArgument();
  if (pointer && isOptional(pointer->getType()) && isScalarTypeType(pointer->getType()))
    if (const auto engaged = evalDtypeEngaged(pointer)) return engaged;
  if (const ObjectRef object = pointer ? scalers_.objectRef(pointer) : ObjectRef{};
      object.id && (branchState_ ? *branchState_ : state_).process.protocol.knows(object.id))
    return true;
  if (const ValueDecl* d = pointer ? declOf(pointer->IgnoreParenImpCasts()) : nullptr) {
    // `prec && std::string(prec) == "fp16"`: a string setting assumed to hold a named value is set.
    if (const FlagAssumption* assumed = ctx_.assumedSetting(cast<ValueDecl>(d->getCanonicalDecl()));
        assumed && assumed->value)
      return true;
    // A pointer set only when a flag holds: null where it does not; set where
    // it does, when only constructors set it.
    if (const Expr* test = tu_.pointerSetOnlyUnder(d)) {
      const auto holds = evalFlag(test);
      if (holds == false) return false;
      if (holds == true && tu_.pointerSetOnlyByConstructors(d)) return true;
    }
  }
  return tu_.knownCondition(condition);
}

namespace {
// A block that ends in `throw` (outside a try block: its successor is the exit).
bool endsInThrow(const CFGBlock& block) {
  if (block.empty()) return false;
  const auto last = block.back().getAs<CFGStmt>();
  return last && isa<CXXThrowExpr>(last->getStmt());
}

// A loop (over a container of optimizers, over an epoch's batches) runs at
// least once as far as the scaler protocol and autocast's cache go: where the
// loop is left from its header, they are what its iterations left. Its
// zero-trip path would make `for (auto* o : optimizers) scaler.step(*o);
// scaler.update();` an update() with no step on some path, and micro-batches
// that each leave autocast without clear_cache() a cache filled on some path
// only, when the step after the loop is there because they ran. A step its
// iterations make on some path (every N-th micro-batch) ran, for the same
// reason: an update() after the loop has its inf checks.
std::optional<FlowState> leftAfterAnIteration(const CFGBlock* header, const CFGBlock* exit,
                                              const std::vector<FlowState>& out) {
  const Stmt* loop = header->getTerminatorStmt();
  if (!isa_and_nonnull<CXXForRangeStmt, ForStmt, WhileStmt>(loop) || header->succ_size() != 2 ||
      header->succ_begin()[1].getReachableBlock() != exit)
    return std::nullopt;
  FlowState iterations;
  for (const CFGBlock::AdjacentBlock& pred : header->preds())
    if (pred.isReachable() && pred->getLoopTarget() == loop) iterations.join(out[pred->getBlockID()]);
  if (!iterations.reached) return std::nullopt;
  // A model's list of modules is never empty: `for (auto& layer : layers) x = layer(x);` leaves x as the
  // layers made it, not also as it came in.
  if (const auto* range = dyn_cast<CXXForRangeStmt>(loop);
      range && range->getRangeInit() &&
      (moduleListElementClass(range->getRangeInit()->getType()) || moduleImplClass(range->getRangeInit()->getType()))) {
    iterations.process.protocol.leaveLoop();
    return iterations;
  }
  FlowState edge = out[header->getBlockID()];
  edge.process.protocol = iterations.process.protocol;
  edge.process.protocol.leaveLoop();
  edge.process.autocastCache = iterations.process.autocastCache;
  return edge;
}
}  // namespace

FlowState FunctionAnalysis::stateEntering(const CFGBlock* block, const FlowState& entry,
                                          const std::vector<FlowState>& out) {
  FlowState in = block == &cfg_.getEntry() ? entry : FlowState{};
  if (const auto* tryStmt = dyn_cast_or_null<CXXTryStmt>(block->getTerminatorStmt())) in.join(tries_[tryStmt].thrown);
  for (const CFGBlock::AdjacentBlock& pred : block->preds()) {
    // An exception no handler catches leaves the function: the caller's code after the call never runs.
    // So does a `throw` outside any try block (a ported scaler's protocol error, a check that aborts).
    const bool uncaught = block == &cfg_.getExit() && pred.isReachable() &&
                          (isa_and_nonnull<CXXTryStmt>(pred->getTerminatorStmt()) || endsInThrow(*pred));
    if (!pred.isReachable() || uncaught || !edgeFeasible(pred, block, out[pred->getBlockID()])) continue;
    if (auto iterated = leftAfterAnIteration(pred, block, out)) in.join(*iterated);
    else in.join(out[pred->getBlockID()]);
  }
  return in;
}

bool FunctionAnalysis::iterateToFixpoint(const FlowState& entry, std::vector<FlowState>& out) {
  std::vector<int> visits(cfg_.getNumBlockIDs(), 0);
  std::deque<const CFGBlock*> worklist{&cfg_.getEntry()};
  std::vector<bool> queued(cfg_.getNumBlockIDs(), false);
  auto enqueue = [&](const CFGBlock* block) {
    if (queued[block->getBlockID()]) return;
    queued[block->getBlockID()] = true;
    worklist.push_back(block);
  };
  queued[cfg_.getEntry().getBlockID()] = true;
  bool truncated = false;
  while (!worklist.empty()) {
    const CFGBlock* block = worklist.front();
    worklist.pop_front();
    queued[block->getBlockID()] = false;
    if (++visits[block->getBlockID()] > tu_.limits().maxBlockVisits) {
      truncated = true;
      continue;
    }

    state_ = stateEntering(block, entry, out);
    if (!state_.reached) continue;

    transferBlock(*block);
    for (const CFGBlock* dispatch : reopenedHandlers_) enqueue(dispatch);
    reopenedHandlers_.clear();
    if (const Stmt* terminator = block->getTerminatorStmt(); terminator && isa<ContinueStmt>(terminator))
      state_.process.protocol.leaveIteration(toLocation(terminator->getSourceRange()));
    if (visits[block->getBlockID()] > 1 && state_.sameAs(out[block->getBlockID()])) continue;
    out[block->getBlockID()] = state_;
    for (const CFGBlock::AdjacentBlock& succ : block->succs())
      if (succ.isReachable() && edgeFeasible(block, succ, state_)) enqueue(succ);
  }
  return truncated;
}

FunctionResult FunctionAnalysis::run() {
  const FlowState entry = entryState();

  // Phase 1: the fixpoint, silently. An early visit of a block sees only some
  // of the paths into it, and a fact that holds "on every path" there may not.
  tu_.beginSilent();
  std::vector<FlowState> out(cfg_.getNumBlockIDs());
  findTryRegions();
  const bool stoppedEarly = iterateToFixpoint(entry, out);
  tu_.endSilent();
  collectingThrows_ = false;
  if (stoppedEarly) tu_.noteTruncation(fn_, Truncation::BlockVisits);

  // Phase 2: every reached block once more, from its fixpoint state, reporting.
  for (const CFGBlock* block : cfg_) {
    state_ = stateEntering(block, entry, out);
    if (!state_.reached) continue;
    transferBlock(*block);
  }

  const FlowState& exit = out[cfg_.getExit().getBlockID()];
  result_.exitReached = exit.reached;
  result_.neverReturns = !exit.reached && !stoppedEarly;
  result_.exit = exit.reached ? exit.process : ctx_.process;
  // The optimizers and scalers that were this function's locals end with it.
  containsStmt(fn_->getBody(), [&](const Stmt* s) {
    if (const auto* decl = dyn_cast<DeclStmt>(s))
      for (const Decl* d : decl->decls())
        if (const auto* var = dyn_cast<VarDecl>(d); var && var->hasLocalStorage() && !var->getType()->isReferenceType())
          result_.exit.protocol.forgetDestroyed(reinterpret_cast<uintptr_t>(var->getCanonicalDecl()));
    return false;
  });
  result_.members = MemberFacts::of(exit.reached ? exit : entry);
  if (exit.reached)
    for (unsigned i = 0; i < fn_->getNumParams(); ++i) {
      const ParmVarDecl* param = fn_->getParamDecl(i);
      const QualType type = param->getType();
      const CXXRecordDecl* impl = moduleImplClass(type);
      // The caller's module: in a holder (a shared pointer to it) however
      // passed, or the module itself by non-const reference or pointer.
      const QualType value = type.getNonReferenceType();
      const bool holder = !value->isPointerType() && value->getAsCXXRecordDecl() != impl;
      const bool shared = holder || type->isPointerType() || (type->isReferenceType() && !value.isConstQualified());
      auto converted = exit.modules.find(param);
      if (!impl || !shared || converted == exit.modules.end()) continue;
      auto before = entry.modules.find(param);
      if (before == entry.modules.end() || !(before->second.dtype == converted->second.dtype))
        result_.convertedModuleArgs[i] = converted->second;
    }
  if (ctx_.enclosing && exit.reached) result_.enclosingAtExit = enclosingAfter(exit);
  // A tensor returned on no path is unknown; one that is bottom on every path
  // is the result of an op that raises (a module's forward called with the
  // wrong dtype): its caller's value is bottom too, as the op's would be.
  if (result_.returned.dtype.isBottom() && !returnsTensor_) result_.returned = TensorFact{};
  return std::move(result_);
}

}  // namespace dtype_lint::analyzer::flow
