#include "flow/translation_unit.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "flow/ast_helpers.h"
#include "flow/flag_paths.h"
#include "flow/function_analysis.h"
#include "flow/settings.h"
#include "torch_api.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Index/USRGeneration.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace flow {
namespace {

std::optional<std::string> usrOf(const FunctionDecl* fn) {
  llvm::SmallString<128> usr;
  if (index::generateUSRForDecl(fn, usr)) return std::nullopt;  // true: no USR
  return std::string(usr);
}

void addUsr(const FunctionDecl* fn, std::vector<std::string>& into) {
  if (auto usr = usrOf(fn)) into.push_back(std::move(*usr));
}

// Functions defined in user code, and the ones some user code calls directly.
class UserFunctionCollector : public RecursiveASTVisitor<UserFunctionCollector> {
 public:
  UserFunctionCollector(ASTContext& context) : context_(context) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitLambdaBody() const { return false; }

  bool TraverseDecl(Decl* d) {
    if (d && !isa<TranslationUnitDecl>(d) && !isUserCode(d->getLocation(), context_.getSourceManager()))
      return true;  // never descend into LibTorch or system headers
    return RecursiveASTVisitor::TraverseDecl(d);
  }
  bool VisitFunctionDecl(FunctionDecl* fn) {
    if (fn->isThisDeclarationADefinition() && isAnalyzable(fn)) defined.push_back(fn);
    return true;
  }
  bool VisitCallExpr(CallExpr* call) {
    if (const FunctionDecl* callee = call->getDirectCallee()) called.insert(callee->getCanonicalDecl());
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* construct) {
    called.insert(construct->getConstructor()->getCanonicalDecl());
    return true;
  }
  // The user classes the TU uses, also behind a module holder or a smart
  // pointer (LoRALinear, std::unique_ptr<Trainer>) and a custom Function
  // applied: LibTorch's templates call their methods, not user code.
  bool VisitDeclaratorDecl(DeclaratorDecl* d) {
    addUserRecords(d->getType());
    return true;
  }
  bool VisitExpr(Expr* e) {
    addUserRecords(e->getType());
    if (const auto* call = dyn_cast<CallExpr>(e))
      if (const CXXRecordDecl* function = autogradFunctionOfApply(call)) usedRecords.insert(function);
    return true;
  }

  std::vector<const FunctionDecl*> defined;
  std::set<const FunctionDecl*> called;
  std::set<const CXXRecordDecl*> usedRecords;

  // The functions the main file defines for other files, and the user
  // functions called here without a body anywhere in the TU.
  // `reachedFromCallers`: the analyzed functions no root analysis started at.
  Linkage linkage(const std::set<const FunctionDecl*>& reachedFromCallers) const {
    const SourceManager& sm = context_.getSourceManager();
    Linkage out;
    for (const FunctionDecl* fn : defined)
      if (reachedFromCallers.count(fn) && !sm.isInMainFile(sm.getExpansionLoc(fn->getLocation())))
        addUsr(fn, out.reached);
    for (const FunctionDecl* fn : defined)
      if (fn->isExternallyVisible() && sm.isInMainFile(sm.getExpansionLoc(fn->getLocation()))) addUsr(fn, out.defines);
    std::set<const FunctionDecl*> reached = called;
    for (const CXXRecordDecl* record : usedRecords)
      for (const CXXMethodDecl* method : record->methods()) reached.insert(method->getCanonicalDecl());
    for (const FunctionDecl* fn : reached)
      if (!fn->isDefined() && !fn->isDeleted() && !fn->isPure() && !fn->isImplicit() &&
          isUserCode(fn->getLocation(), sm))
        addUsr(fn, out.calls);
    for (auto* usrs : {&out.defines, &out.calls, &out.reached}) {
      std::sort(usrs->begin(), usrs->end());
      usrs->erase(std::unique(usrs->begin(), usrs->end()), usrs->end());
    }
    return out;
  }

 private:
  void addUserRecords(QualType type) {
    // Some expressions in templates have no type (a parameter pack's substitution).
    if (type.isNull() || type->isDependentType()) return;
    type = type.getNonReferenceType();
    while (type->isPointerType()) type = type->getPointeeType();
    const auto* record = type->getAsCXXRecordDecl();
    if (!record || !usedRecords.insert(record).second) return;
    if (const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(record))
      for (const TemplateArgument& arg : spec->getTemplateArgs().asArray())
        if (arg.getKind() == TemplateArgument::Type) addUserRecords(arg.getAsType());
    // A module holder's Impl is its base's argument (LoRALinear is ModuleHolder<LoRALinearImpl>).
    // A class only declared here (`class Optimizer;` before a pointer to it) has no bases to read.
    if (!record->hasDefinition()) return;
    for (const CXXBaseSpecifier& base : record->bases()) addUserRecords(base.getType());
  }

  ASTContext& context_;
};

// The fields and variables user code writes: assigned, incremented, given in
// an initializer list or by a constructor's member initializer; which of them
// some write gives a constant (`first_step_ = false`); and the lambda each
// std::function is given, when one.
class WriteCollector : public RecursiveASTVisitor<WriteCollector> {
 public:
  explicit WriteCollector(ASTContext& context) : context_(context) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }

  bool VisitBinaryOperator(BinaryOperator* op) {
    if (op->isAssignmentOp()) add(op->getLHS(), op->getRHS(), op);
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* op) {
    if (op->isAssignmentOp() && op->getNumArgs() >= 1)
      add(op->getArg(0), op->getNumArgs() > 1 ? op->getArg(1) : nullptr, op);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) add(op->getSubExpr(), nullptr, op);
    return true;
  }
  bool VisitInitListExpr(InitListExpr* list) {
    forEachFieldInit(list, [&](const FieldDecl* field, const Expr* init) {
      if (init && !isa<CXXDefaultInitExpr, ImplicitValueInitExpr>(init)) note(field, init);
    });
    return true;
  }
  // A user class's override, under each virtual method it overrides, directly or not.
  bool VisitCXXMethodDecl(CXXMethodDecl* method) {
    if (!method->isThisDeclarationADefinition() || method->size_overridden_methods() == 0) return true;
    std::vector<const CXXMethodDecl*> pending(method->begin_overridden_methods(), method->end_overridden_methods());
    std::set<const CXXMethodDecl*> seen;
    while (!pending.empty()) {
      const CXXMethodDecl* overridden = pending.back()->getCanonicalDecl();
      pending.pop_back();
      if (!seen.insert(overridden).second) continue;
      overriders[overridden].push_back(method);
      pending.insert(pending.end(), overridden->begin_overridden_methods(), overridden->end_overridden_methods());
    }
    return true;
  }
  bool VisitCXXConstructorDecl(CXXConstructorDecl* ctor) {
    for (const CXXCtorInitializer* init : ctor->inits())
      if (init->isWritten() && init->getMember()) {
        note(init->getMember(), init->getInit());
        if (isScalarTypeType(init->getMember()->getType()))
          dtypeInitializers[cast<ValueDecl>(init->getMember()->getCanonicalDecl())].push_back(init->getInit());
      }
    return true;
  }

  bool VisitVarDecl(VarDecl* var) {
    if (var->getInit()) noteCallable(var, var->getInit());
    return true;
  }
  bool VisitCallExpr(CallExpr* call) {
    // scaler_.emplace(...), scaler_.reset(new ...), scaler_.reset(): a write of an optional or smart pointer.
    if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
      const std::string name = calleeName(member);
      const Expr* object = ignoreWrappers(member->getImplicitObjectArgument());
      if ((name == "emplace" || name == "reset") &&
          (isOptional(object->getType()) || isSmartPointer(object->getType())))
        if (const ValueDecl* d = declOf(object); d && isa<FieldDecl, VarDecl>(d))
          note(d, name == "emplace" || call->getNumArgs() > 0 ? call : nullptr, call);
    }
    if (const FunctionDecl* callee = call->getDirectCallee(); callee && !isa<CXXOperatorCallExpr>(call)) {
      noteArguments(callee, {call->getArgs(), call->getNumArgs()});
      // register_buffer("stats", stats_): the module's conversions reach it.
      if (isRegistration(call) && call->getNumArgs() >= 2)
        if (const ValueDecl* d = declOf(ignoreConversions(call->getArg(1))))
          registered.insert(cast<ValueDecl>(d->getCanonicalDecl()));
    }
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* construct) {
    noteArguments(construct->getConstructor(), {construct->getArgs(), construct->getNumArgs()});
    return true;
  }

  // A std::function stored from a setter's parameter (`hook_ = std::move(fn)`)
  // has the targets the setter's callers pass: resolved once every call is seen.
  void resolveForwardedCallables() {
    for (const auto& [slot, held] : passedHolders) {
      auto target = callables.find(held);
      argumentTargets[slot].push_back(target == callables.end() ? nullptr : target->second);
    }
    // A std::function parameter called in its function (`clip_fn()`): what its callers pass.
    for (const auto& [slot, targets] : argumentTargets) {
      const FunctionDecl* def = cast<FunctionDecl>(slot.first)->getDefinition();
      if (!def || slot.second >= def->getNumParams()) continue;
      for (const FunctionDecl* target : targets) mergeTarget(def->getParamDecl(slot.second), target);
    }
    for (const auto& [d, param] : forwarded) {
      auto passed = argumentTargets.find(param);
      if (passed == argumentTargets.end()) mergeTarget(d, nullptr);
      else
        for (const FunctionDecl* target : passed->second) mergeTarget(d, target);
    }
  }
  bool VisitFieldDecl(FieldDecl* field) {
    if (field->hasInClassInitializer()) noteCallable(field, field->getInClassInitializer());
    return true;
  }

  std::set<const ValueDecl*> written;
  std::set<const ValueDecl*> stateFlags;
  std::map<const ValueDecl*, const FunctionDecl*> callables;  // null: more than one target, or one not seen
  std::map<const ValueDecl*, const Expr*> nullUnless;  // null: some write is not under one flag test
  std::set<const ValueDecl*> pointersSetOutsideConstructors;  // or reset there
  std::set<const ValueDecl*> registered;  // tensors given to or taken from register_parameter/register_buffer
  std::map<const ValueDecl*, std::vector<const Expr*>> dtypeInitializers;  // dtype fields by constructor initializers
  std::map<const ValueDecl*, std::vector<const Expr*>> dtypeWrites;  // every value a dtype field is given
  std::map<const CXXMethodDecl*, std::vector<const CXXMethodDecl*>> overriders;  // see Writes::overriders
  std::map<const ValueDecl*, std::vector<const Expr*>> enumWrites;  // every value an enum field is given
  std::set<const ValueDecl*> assignedOutsideConstructors;

 private:
  // A parameter by its function and position: a declaration and the
  // definition have parameters of their own.
  using ParameterSlot = std::pair<const Decl*, unsigned>;
  static ParameterSlot parameterSlot(const ParmVarDecl* param) {
    return {cast<Decl>(param->getDeclContext())->getCanonicalDecl(), param->getFunctionScopeIndex()};
  }
  std::vector<std::pair<const ValueDecl*, ParameterSlot>> forwarded;
  std::map<ParameterSlot, std::vector<const FunctionDecl*>> argumentTargets;
  std::vector<std::pair<ParameterSlot, const ValueDecl*>> passedHolders;

  static bool isStdFunction(QualType type) {
    const auto* record = type.getNonReferenceType()->getAsCXXRecordDecl();
    return record && record->getQualifiedNameAsString() == "std::function";
  }
  // The lambda a std::function is given, through conversions and std::move,
  // or through a local `auto clip = [&] {...};` (a closure is never reassigned).
  static const Expr* passedCallable(const Expr* value) {
    value = ignoreConversions(value);
    if (const auto* move = dyn_cast_or_null<CallExpr>(value);
        move && move->getNumArgs() == 1 && move->getDirectCallee() &&
        move->getDirectCallee()->getQualifiedNameAsString() == "std::move")
      value = ignoreConversions(move->getArg(0));
    if (const auto* closure = dyn_cast_or_null<VarDecl>(declOf(value));
        closure && closure->getType()->getAsCXXRecordDecl() && closure->getType()->getAsCXXRecordDecl()->isLambda() &&
        closure->getInit())
      value = ignoreConversions(closure->getInit());
    return value;
  }
  // A std::function variable or member given a lambda: its call operator.
  void noteCallable(const ValueDecl* d, const Expr* value) {
    if (!isStdFunction(d->getType()) || !value) return;
    d = cast<ValueDecl>(d->getCanonicalDecl());
    value = passedCallable(value);
    if (const auto* param = dyn_cast_or_null<ParmVarDecl>(declOf(value)); param && isStdFunction(param->getType())) {
      forwarded.emplace_back(d, parameterSlot(param));
      return;
    }
    const auto* lambda = dyn_cast_or_null<LambdaExpr>(value);
    mergeTarget(d, lambda ? lambda->getCallOperator() : nullptr);
  }
  void mergeTarget(const ValueDecl* d, const FunctionDecl* target) {
    auto [it, inserted] = callables.try_emplace(d, target);
    if (!inserted && it->second != target) it->second = nullptr;
  }
  void noteArguments(const FunctionDecl* callee, llvm::ArrayRef<const Expr*> args) {
    for (unsigned i = 0; i < args.size() && i < callee->getNumParams(); ++i) {
      const ParmVarDecl* param = callee->getParamDecl(i);
      if (!isStdFunction(param->getType())) continue;
      const Expr* passed = passedCallable(args[i]);
      // A std::function variable or member passed on: its target, once every write is seen.
      if (const ValueDecl* held = declOf(passed);
          held && !isa<ParmVarDecl>(held) && isa<VarDecl, FieldDecl>(held) && isStdFunction(held->getType())) {
        passedHolders.emplace_back(parameterSlot(param), cast<ValueDecl>(held->getCanonicalDecl()));
        continue;
      }
      const auto* lambda = dyn_cast_or_null<LambdaExpr>(passed);
      argumentTargets[parameterSlot(param)].push_back(lambda ? lambda->getCallOperator() : nullptr);
    }
  }
  void add(const Expr* target, const Expr* value, const Stmt* write) {
    if (const ValueDecl* d = declOf(target->IgnoreParenImpCasts()); d && isa<FieldDecl, VarDecl>(d)) {
      note(d, value, write);
      const auto* canonical = cast<ValueDecl>(d->getCanonicalDecl());
      // `enc_dtype_ = cfg.half ? kHalf : kFloat;` as a statement of a
      // constructor's body: as good as a member initializer.
      if (value && isa<FieldDecl>(d) && isScalarTypeType(d->getType()) && isConstructorStatement(write))
        dtypeInitializers[canonical].push_back(value);
      else assignedOutsideConstructors.insert(canonical);
    }
  }
  // Whether a statement is one of a constructor body's own, run by every construction.
  bool isConstructorStatement(const Stmt* s) {
    DynTypedNode node = DynTypedNode::create(*s);
    for (int up = 0; up < 2; ++up) {
      const auto parents = context_.getParents(node);
      if (parents.size() != 1) return false;
      node = parents[0];
      if (node.get<ExprWithCleanups>()) continue;
      if (!node.get<CompoundStmt>()) return false;
      const auto owners = context_.getParents(node);
      return owners.size() == 1 && owners[0].get<CXXConstructorDecl>();
    }
    return false;
  }
  // The flag test of the `if` whose then-branch holds a write, when it is one.
  const Expr* enclosingFlagTest(const Stmt* write) {
    DynTypedNode node = DynTypedNode::create(*write);
    for (int up = 0; up < 8; ++up) {
      const auto parents = context_.getParents(node);
      if (parents.size() != 1) return nullptr;
      node = parents[0];
      if (const auto* branch = node.get<IfStmt>()) {
        const Expr* test = branch->getCond();
        const Expr* flag = test->IgnoreParenImpCasts();
        if (const auto* negation = dyn_cast<UnaryOperator>(flag); negation && negation->getOpcode() == UO_LNot)
          flag = negation->getSubExpr();
        // A dtype comparison (`precision == torch::kHalf`) is known on a path where a setting is assumed.
        return testedFlag(flag) || settingTest(flag) || dtypeComparison(flag) ? test : nullptr;
      }
      if (node.get<FunctionDecl>() || node.get<LambdaExpr>()) return nullptr;
    }
    return nullptr;
  }
  // A pointer (or optional) every non-null write of which sits under one flag or setting test.
  void noteGuard(const ValueDecl* d, const Expr* value, const Stmt* write) {
    const QualType type = d->getType().getNonReferenceType();
    if (!type->isPointerType() && !isSmartPointer(type) && !isOptional(type)) return;
    if (!write || !inConstructor(write)) pointersSetOutsideConstructors.insert(d);
    if (!value || isa<CXXNullPtrLiteralExpr>(ignoreConversions(value))) return;
    const Expr* test = write ? enclosingFlagTest(write) : nullptr;
    auto [it, inserted] = nullUnless.try_emplace(d, test);
    if (!inserted && (!it->second || !test || !sameTest(it->second, test))) it->second = nullptr;
  }
  static bool sameTest(const Expr* a, const Expr* b) {
    a = a->IgnoreParenImpCasts(), b = b->IgnoreParenImpCasts();
    if (const auto x = dtypeComparison(a))
      if (const auto y = dtypeComparison(b))
        return x->isEqual == y->isEqual && Expr::isSameComparisonOperand(x->lhs, y->lhs) &&
               Expr::isSameComparisonOperand(x->rhs, y->rhs);
    if (const auto x = settingTest(a))
      if (const auto y = settingTest(b))
        return x->setting == y->setting && x->value == y->value && x->holdsOnValue == y->holdsOnValue;
    return testedFlag(a) && testedFlag(a) == testedFlag(b);
  }
  bool inConstructor(const Stmt* write) {
    DynTypedNode node = DynTypedNode::create(*write);
    for (int up = 0; up < 64; ++up) {
      const auto parents = context_.getParents(node);
      if (parents.empty()) return false;
      node = parents[0];
      if (const auto* fn = node.get<FunctionDecl>()) return isa<CXXConstructorDecl>(fn);
      if (node.get<LambdaExpr>()) return false;
    }
    return false;
  }
  static bool isRegistration(const CallExpr* call) { return registersTensor(calleeName(call)); }
  void note(const ValueDecl* d, const Expr* value, const Stmt* write = nullptr) {
    d = cast<ValueDecl>(d->getCanonicalDecl());
    written.insert(d);
    if (isa<FieldDecl>(d) && isScalarTypeType(d->getType())) dtypeWrites[d].push_back(value);
    if (isa<FieldDecl>(d) && d->getType()->isEnumeralType()) enumWrites[d].push_back(value);
    if (const auto* call = value ? dyn_cast<CallExpr>(ignoreConversions(value)) : nullptr; call && isRegistration(call))
      registered.insert(d);
    noteGuard(d, value, write);
    noteCallable(d, value);
    bool constant = false;
    if (write && value && !value->isValueDependent() &&
        (value->EvaluateAsBooleanCondition(constant, context_) || isEnumeratorWrite(d, value)) &&
        writtenByItsOwnCode(d, write))
      stateFlags.insert(d);
  }
  static bool isEnumeratorWrite(const ValueDecl* d, const Expr* value) {
    const auto* ref = dyn_cast<DeclRefExpr>(value->IgnoreParenImpCasts());
    return d->getType()->isEnumeralType() && ref && isa<EnumConstantDecl>(ref->getDecl());
  }
  // A constant write that makes a flag a state, not a setting: in a method
  // of the flag's own class (`first_step_ = false`) or of a class it is nested
  // in (a scaler's per-optimizer `st.stage = Stage::Unscaled`), or under a
  // test of the flag itself (`if (first) { ...; first = false; }`). A switch
  // parsed into a config (`cfg.amp = true` in main) is a setting.
  bool writtenByItsOwnCode(const ValueDecl* d, const Stmt* write) {
    DynTypedNode node = DynTypedNode::create(*write);
    for (int up = 0; up < 64; ++up) {
      const auto parents = context_.getParents(node);
      if (parents.empty()) return false;
      node = parents[0];
      if (const auto* branch = node.get<IfStmt>(); branch && testsFlag(branch->getCond(), d)) return true;
      // (A static factory, `static Options from_env()`, parses settings into another object.)
      if (const auto* method = node.get<CXXMethodDecl>())
        return isa<FieldDecl>(d) && !method->isStatic() &&
               method->getParent()->Encloses(cast<FieldDecl>(d)->getParent());
      if (node.get<FunctionDecl>()) return false;
    }
    return false;
  }
  static bool testsFlag(const Expr* condition, const ValueDecl* d) {
    bool found = false;
    forEachTest(condition, [&](const Expr* test) {
      const ValueDecl* flag = testedFlag(test);
      found = found || (flag && flag->getCanonicalDecl() == d);
    });
    return found;
  }

  ASTContext& context_;
};

bool isModuleMember(const FunctionDecl* fn) {
  const auto* method = dyn_cast<CXXMethodDecl>(fn);
  return method && isUserModule(method->getParent());
}

}  // namespace

CFG* TranslationUnitAnalysis::cfgFor(const FunctionDecl* fn) {
  auto [it, inserted] = cfgs_.try_emplace(fn);
  // A declaration Sema gave up on (a TU stopped by a fatal error) has no CFG worth building.
  const auto* method = dyn_cast<CXXMethodDecl>(fn);
  if (inserted && !fn->isInvalidDecl() && !(method && method->getParent()->isInvalidDecl())) {
    CFG::BuildOptions options;
    options.setAllAlwaysAdd();
    options.AddImplicitDtors = true;
    options.AddInitializers = true;
    it->second = CFG::buildCFG(fn, fn->getBody(), &context_, options);
  }
  return it->second.get();
}

const CallClassification& TranslationUnitAnalysis::classify(const CallExpr* call) {
  auto [it, inserted] = calls_.try_emplace(call);
  if (!inserted) return it->second;
  it->second = classifyCall(call, api_);
  // A std::function whose one target is a lambda this file gives it: followed like the lambda.
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() == OO_Call) {
    const ValueDecl* d = declOf(op->getArg(0));
    auto target = d ? writes().callables.find(cast<ValueDecl>(d->getCanonicalDecl())) : writes().callables.end();
    if (target != writes().callables.end() && target->second && isAnalyzable(target->second)) {
      it->second.definition = target->second;
      it->second.effect = it->second.value = CallKind::UserFunction;
    }
  }
  return it->second;
}

void TranslationUnitAnalysis::noteTruncation(const FunctionDecl* fn, Truncation why) {
  // The TU's budget stops every analysis, silent ones too: it is said once.
  // The function budget is said once too, at the first function it leaves
  // out (a file of 100,000 functions must not get 96,000 notes).
  if ((!recording() && why != Truncation::UnitBudget) ||
      !truncated_.insert({why == Truncation::Budget ? nullptr : fn, why}).second)
    return;
  const std::string name = fn->getQualifiedNameAsString();
  std::string message;
  switch (why) {
  case Truncation::BlockVisits:
    message = fmt::format("analysis of '{}' stopped early: a block was visited more than {} times (loops, or "
                          "branches nested deeply)",
                          name, limits_.maxBlockVisits);
    break;
  case Truncation::CallDepth:
    message = fmt::format("calls deeper than {} levels are not followed (from '{}')", limits_.maxCallDepth, name);
    break;
  case Truncation::Budget:
    message = fmt::format("the per-file budget of {} function analyses was spent at '{}': it and the functions "
                          "reached after it have no findings",
                          limits_.functionBudget, name);
    break;
  case Truncation::UnitBudget:
    message = fmt::format("the file's analysis stopped at '{}': {} was spent; the functions not analyzed yet "
                          "have no findings",
                          name, *unitBudgetSpent_);
    break;
  }
  events_.truncations.push_back(Note{nameLocation(fn), std::move(message)});
}

const TranslationUnitAnalysis::ClassInvariant* TranslationUnitAnalysis::classInvariant(const CXXRecordDecl* record,
                                                                                       const CallContext& assuming) {
  const auto key = std::make_pair(record, assuming.assumptionsKey());
  auto [it, inserted] = invariants_.try_emplace(key);
  if (!inserted) return it->second ? &*it->second : nullptr;
  std::optional<ClassInvariant> invariant;
  CallContext constructing;
  constructing.assumptions = assuming.assumptions;
  bool complete = true;  // no constructor or method skipped for being under analysis already
  for (const CXXConstructorDecl* ctor : record->ctors()) {
    const FunctionDecl* def = ctor->getDefinition();
    if (!def || !isAnalyzable(def) || ctor->isCopyOrMoveConstructor()) continue;
    // Asked from a method the constructor calls (`refresh()` in the constructor):
    // what it establishes is not known yet, and must not be remembered as nothing.
    if (onStack_.count(def)) {
      complete = false;
      continue;
    }
    const FunctionResult* r = analyze(def, constructing);
    if (!r || !r->exitReached) continue;
    if (!invariant) {
      invariant = ClassInvariant{r->members, r->exit.protocol};
    } else {
      invariant->members.join(r->members);
      invariant->protocol.join(r->exit.protocol);
    }
  }
  // What the other methods may leave in the members (a setup() that converts
  // the model) holds too, in a method whose caller is not seen: each is
  // followed once from the constructors' facts, silently.
  if (invariant) {
    CallContext afterConstruction = constructing;
    afterConstruction.members = invariant->members;
    MemberFacts members = invariant->members;
    beginSilent();
    for (const CXXMethodDecl* method : record->methods()) {
      const FunctionDecl* def = method->getDefinition();
      if (isa<CXXConstructorDecl, CXXDestructorDecl>(method) || method->isStatic() || method->isConst() || !def ||
          !isAnalyzable(def))
        continue;
      if (onStack_.count(def)) {
        complete = false;
        continue;
      }
      if (const FunctionResult* r = analyze(def, afterConstruction); r && r->exitReached) members.join(r->members);
    }
    endSilent();
    invariant->members = std::move(members);
  }
  auto& slot = invariants_[key];
  slot = std::move(invariant);
  if (complete) return slot ? &*slot : nullptr;
  // Asked from inside one of its methods: this caller gets what is known so
  // far; the next asks again.
  partialInvariant_ = std::move(slot);
  invariants_.erase(key);
  return partialInvariant_ ? &*partialInvariant_ : nullptr;
}

namespace {
// The declaration the collectors saw for `d`: they walk the code as written,
// so a field of a class template's instantiation (the flow runs there) is
// looked up as the template's own field of that name. Only for what is
// known of its writes: an expression the collectors kept is the template's,
// and cannot be evaluated in the instantiation.
const ValueDecl* asWritten(const ValueDecl* d) {
  d = cast<ValueDecl>(d->getCanonicalDecl());
  const auto* field = dyn_cast<FieldDecl>(d);
  const auto* instance = field ? dyn_cast<ClassTemplateSpecializationDecl>(field->getParent()) : nullptr;
  const auto* pattern = instance ? instance->getTemplateInstantiationPattern() : nullptr;
  if (!pattern) return d;
  for (const FieldDecl* written : pattern->fields())
    if (written->getDeclName() == field->getDeclName()) return cast<ValueDecl>(written->getCanonicalDecl());
  return d;
}

// What a function's return statements return; a lookup in a map the program
// fills with constants (`return table.at(name);`, `return it->second;`) returns
// one of its mapped values.
std::vector<const Expr*> returnedValues(const FunctionDecl* fn) {
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const Expr*> values;
    bool VisitReturnStmt(ReturnStmt* r) {
      const auto entries = r->getRetValue() ? lookedUpEntries(r->getRetValue()) : decltype(lookedUpEntries(nullptr)){};
      if (entries.empty()) values.push_back(r->getRetValue());
      for (const auto& [key, mapped] : entries) values.push_back(mapped);
      return true;
    }
    bool TraverseLambdaExpr(LambdaExpr*) { return true; }  // a lambda's returns are its own
  };
  Finder finder;
  finder.TraverseStmt(fn->getBody());
  return finder.values;
}

// A user function that parses its arguments into one of a few constants: its
// returns are all dtype constants (`if (s == "fp16") return torch::kHalf;`)
// or all enumerators (`return Precision::kBF16;`).
const FunctionDecl* constantParser(const Expr* value) {
  const auto* call = dyn_cast<CallExpr>(ignoreConversions(value));
  const FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
  const FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
  if (!def || !def->hasBody() || def->getNumParams() == 0 || !isAnalyzable(def)) return nullptr;
  const bool dtypes = isScalarTypeType(def->getReturnType());
  if (!dtypes && !def->getReturnType()->isEnumeralType()) return nullptr;
  const std::vector<const Expr*> returned = returnedValues(def);
  const bool parses = !returned.empty() && llvm::all_of(returned, [&](const Expr* e) {
    return e && (dtypes ? evaluateScalarTypeConstant(e).has_value() : namedValue(e).has_value());
  });
  return parses ? def : nullptr;
}

// The parameters of a parser: the field it fills stands for them.
void addParameters(const FunctionDecl* parser, std::set<const ValueDecl*>& into) {
  for (const ParmVarDecl* param : parser->parameters()) into.insert(cast<ValueDecl>(param->getCanonicalDecl()));
}
}  // namespace

const std::vector<const CXXMethodDecl*>& TranslationUnitAnalysis::overridersOf(const CXXMethodDecl* method) {
  static const std::vector<const CXXMethodDecl*> kNone;
  const auto& overriders = writes().overriders;
  auto it = overriders.find(method->getCanonicalDecl());
  return it != overriders.end() ? it->second : kNone;
}

const TranslationUnitAnalysis::Writes& TranslationUnitAnalysis::writes() {
  if (!writes_) {
    WriteCollector collector(context_);
    collector.TraverseAST(context_);  // the user declarations the consumer set as traversal scope
    collector.resolveForwardedCallables();
    writes_ = Writes{std::move(collector.written),
                     std::move(collector.stateFlags),
                     std::move(collector.callables),
                     std::move(collector.nullUnless),
                     std::move(collector.pointersSetOutsideConstructors),
                     std::move(collector.registered),
                     {},
                     {},
                     {},
                     {},
                     {},
                     std::move(collector.overriders)};
    for (const auto& [field, inits] : collector.dtypeInitializers)
      if (inits.size() == 1 && !collector.assignedOutsideConstructors.count(field))
        writes_->constructorDtypes[field] = inits.front();
    for (const auto& [field, values] : collector.dtypeWrites) {
      std::vector<ScalarType> constants;
      std::vector<const Expr*> all = values;
      if (const Expr* init = cast<FieldDecl>(field)->getInClassInitializer()) all.push_back(init);
      // A dtype literal, or a lookup in a map of the program's dtypes (`it->second`): each it holds.
      KeyedDtypes keys;
      std::set<const ValueDecl*> parsers;
      auto addChoices = [&](const Expr* value) {
        std::vector<const Expr*> named{value};
        if (const FunctionDecl* parser = value ? constantParser(value) : nullptr) {
          named = returnedValues(parser);
          addParameters(parser, parsers);
        } else if (const auto lookup = value ? settingLookup(value) : std::nullopt) {
          named.clear();
          for (const auto& [key, mapped] : lookup->entries) {
            named.push_back(mapped);
            if (const auto constant = mapped ? evaluateScalarTypeConstant(mapped) : std::nullopt)
              keys[lookup->setting][key] = *constant;
          }
        } else if (const auto entries = value ? lookedUpEntries(value) : decltype(lookedUpEntries(value)){};
                   !entries.empty()) {
          // Looked up with a key that is no setting (`dtypes.at(argv[i + 1])`): any of the map's dtypes.
          named.clear();
          for (const auto& [key, mapped] : entries) named.push_back(mapped);
        }
        for (const Expr* e : named) {
          const auto constant = e ? evaluateScalarTypeConstant(e) : std::nullopt;
          if (!constant) return false;
          if (std::find(constants.begin(), constants.end(), *constant) == constants.end())
            constants.push_back(*constant);
        }
        return true;
      };
      if (!llvm::all_of(all, addChoices) || constants.empty()) continue;
      writes_->dtypeChoices[field] = std::move(constants);
      if (!keys.empty()) writes_->dtypeChoiceKeys[field] = std::move(keys);
      if (!parsers.empty()) writes_->choiceParsers[field] = std::move(parsers);
    }
    // An enum field given only enumerators, by its initializer or a parser:
    // a setting whose values are those enumerators.
    for (const auto& [field, values] : collector.enumWrites) {
      std::vector<std::string> named;
      std::set<const ValueDecl*> parsers;
      std::vector<const Expr*> all = values;
      if (const Expr* init = cast<FieldDecl>(field)->getInClassInitializer()) all.push_back(init);
      auto addChoices = [&](const Expr* value) {
        std::vector<const Expr*> returned{value};
        if (const FunctionDecl* parser = value ? constantParser(value) : nullptr) {
          returned = returnedValues(parser);
          addParameters(parser, parsers);
        } else if (const auto entries = value ? lookedUpEntries(value) : decltype(lookedUpEntries(value)){};
                   !entries.empty()) {
          // `a.precision = modes.at(next())`: any of the table's enumerators.
          returned.clear();
          for (const auto& [key, mapped] : entries) returned.push_back(mapped);
        }
        for (const Expr* e : returned) {
          const auto name = e ? namedValue(e) : std::nullopt;
          if (!name) return false;
          if (std::find(named.begin(), named.end(), *name) == named.end()) named.push_back(*name);
        }
        return true;
      };
      if (!llvm::all_of(all, addChoices) || named.size() <= 1) continue;
      writes_->enumChoices[field] = std::move(named);
      if (!parsers.empty()) writes_->choiceParsers[field] = std::move(parsers);
    }
  }
  return *writes_;
}

bool TranslationUnitAnalysis::written(const ValueDecl* d) { return writes().written.count(asWritten(d)) != 0; }

bool TranslationUnitAnalysis::stateFlag(const ValueDecl* d) { return writes().stateFlags.count(asWritten(d)) != 0; }

bool TranslationUnitAnalysis::unregisteredModuleTensor(const ValueDecl* d) {
  const auto* field = dyn_cast<FieldDecl>(d);
  return field && isTensorType(field->getType()) && isUserModule(dyn_cast<CXXRecordDecl>(field->getParent())) &&
         !writes().registered.count(asWritten(field));
}

bool TranslationUnitAnalysis::pointerSetOnlyByConstructors(const ValueDecl* d) {
  return !writes().pointersSetOutsideConstructors.count(asWritten(d));
}

const Expr* TranslationUnitAnalysis::pointerSetOnlyUnder(const ValueDecl* d) {
  auto it = writes().nullUnless.find(asWritten(d));
  return it == writes().nullUnless.end() ? nullptr : it->second;
}

const std::vector<ScalarType>* TranslationUnitAnalysis::dtypeChoices(const ValueDecl* d) {
  auto it = writes().dtypeChoices.find(cast<ValueDecl>(d->getCanonicalDecl()));
  return it == writes().dtypeChoices.end() ? nullptr : &it->second;
}

const std::set<const ValueDecl*>* TranslationUnitAnalysis::choiceParsers(const ValueDecl* d) {
  auto it = writes().choiceParsers.find(cast<ValueDecl>(d->getCanonicalDecl()));
  return it == writes().choiceParsers.end() ? nullptr : &it->second;
}

const std::vector<std::string>* TranslationUnitAnalysis::enumChoices(const ValueDecl* d) {
  auto it = writes().enumChoices.find(asWritten(d));
  return it == writes().enumChoices.end() ? nullptr : &it->second;
}

const TranslationUnitAnalysis::KeyedDtypes* TranslationUnitAnalysis::dtypeChoiceKeys(const ValueDecl* d) {
  auto it = writes().dtypeChoiceKeys.find(cast<ValueDecl>(d->getCanonicalDecl()));
  return it == writes().dtypeChoiceKeys.end() ? nullptr : &it->second;
}

namespace {
// The field `cfg.x`, `this->x_` reads.
const FieldDecl* fieldRead(const Expr* e) {
  const auto* member = dyn_cast_or_null<MemberExpr>(ignoreConversions(e));
  return member ? dyn_cast<FieldDecl>(member->getMemberDecl()) : nullptr;
}
}  // namespace

const Expr* TranslationUnitAnalysis::unwrittenLocalInit(const ValueDecl* d) {
  const auto* var = dyn_cast<VarDecl>(d);
  return var && var->isLocalVarDecl() && var->getInit() && !written(var) ? var->getInit() : nullptr;
}

const Expr* TranslationUnitAnalysis::constructorDtype(const Expr* e) {
  const FieldDecl* field = fieldRead(e);
  if (!field) return nullptr;
  auto it = writes().constructorDtypes.find(cast<ValueDecl>(field->getCanonicalDecl()));
  return it == writes().constructorDtypes.end() ? nullptr : it->second;
}

const Expr* TranslationUnitAnalysis::unwrittenFieldDefault(const Expr* e) {
  const FieldDecl* field = fieldRead(e);
  return field && field->getInClassInitializer() && !written(field) ? field->getInClassInitializer() : nullptr;
}

std::optional<bool> TranslationUnitAnalysis::knownCondition(const Expr* condition) {
  if (const Expr* fallback = condition->getType()->isBooleanType() ? unwrittenFieldDefault(condition) : nullptr)
    condition = fallback;
  bool value = false;
  if (!condition->isValueDependent() && condition->EvaluateAsBooleanCondition(value, context_)) return value;
  return std::nullopt;
}

const FunctionResult* TranslationUnitAnalysis::analyze(const FunctionDecl* fn, const CallContext& ctx) {
  if (!isAnalyzable(fn) || onStack_.count(fn)) return nullptr;
  const std::string key = ctx.key(fn);
  if (auto it = memo_.find(key); it != memo_.end() && (!it->second.silent || !recording())) return &it->second.result;
  if (budget_ == 0) {
    noteTruncation(fn, Truncation::Budget);
    return nullptr;
  }
  if (unitBudgetSpent_) return nullptr;
  if (limits_.unitBudget && (unitBudgetSpent_ = limits_.unitBudget->spent(context_))) {
    noteTruncation(fn, Truncation::UnitBudget);
    return nullptr;
  }
  --budget_;
  CFG* cfg = cfgFor(fn);
  if (!cfg) return nullptr;
  analyzedOnce_.insert(fn);
  if (recording()) recordedOnce_.insert(fn);
  onStack_.insert(fn);
  FunctionResult result = FunctionAnalysis(*this, fn, ctx, *cfg).run();
  onStack_.erase(fn);
  Memo& memo = memo_[key];
  memo = Memo{std::move(result), !recording()};
  return &memo.result;
}

std::vector<Finding> TranslationUnitAnalysis::findingsOf(AnalysisEvents events) {
  std::vector<Finding> findings = std::move(events.protocolFindings);
  for (const OpEvent& op : events.ops) rules_.onOp(op, findings);
  for (const OptimizerStepEvent& step : events.steps) rules_.onOptimizerStep(step, findings);
  return findings;
}

void TranslationUnitAnalysis::analyzeRoot(const FunctionDecl* fn, CallContext ctx) {
  bool capped = false;
  const std::vector<RuntimeFlag> flags = runtimeFlags(fn, *this, capped);
  std::vector<SettingChoices> settings;
  for (const RuntimeFlag& flag : flags) settings.push_back(flag.settingChoices());
  const ConfigurationRuns choices = configurationRuns(settings, limits_.maxConfigurations);
  if (capped && recording())
    events_.truncations.push_back(Note{nameLocation(fn), fmt::format("analyzed under {} configurations of its settings "
                                                                     "(at most {}); further settings were left unknown",
                                                                     choices.size(), limits_.maxConfigurations)});
  std::vector<Finding> found;
  if (flags.empty()) {
    found = findingsOfRun(fn, ctx);
  } else {
    std::vector<std::vector<Finding>> runs;
    for (const std::vector<size_t>& run : choices) {
      ctx.assumptions.clear();
      for (size_t i = 0; i < flags.size(); ++i) ctx.assumptions.push_back(flags[i].assume(run[i]));
      runs.push_back(findingsOfRun(fn, ctx));
    }
    found = mergeConfigurationRuns(settings, choices, std::move(runs));
  }
  std::optional<std::string> usr = fn->isExternallyVisible() ? usrOf(fn) : std::nullopt;
  if (!usr) {
    std::move(found.begin(), found.end(), std::back_inserter(findings_));
    return;
  }
  callableRoots_.push_back(CallableRootFindings{std::move(*usr), std::move(found)});
}

// The findings of one analysis from a root, kept apart from the other roots'.
std::vector<Finding> TranslationUnitAnalysis::findingsOfRun(const FunctionDecl* fn, const CallContext& ctx) {
  AnalysisEvents outer = std::exchange(events_, AnalysisEvents{});
  analyze(fn, ctx);
  AnalysisEvents mine = std::exchange(events_, std::move(outer));
  events_.truncations.insert(events_.truncations.end(), mine.truncations.begin(), mine.truncations.end());
  return findingsOf(std::move(mine));
}

DtypeFlowResult TranslationUnitAnalysis::run() {
  UserFunctionCollector collector(context_);
  collector.TraverseAST(context_);  // the user declarations the consumer set as traversal scope
  // Roots start with autocast off, as every process does; the rest are reached
  // through their callers, in the caller's context.
  std::set<const FunctionDecl*> roots;
  for (const FunctionDecl* fn : collector.defined) {
    if (collector.called.count(fn->getCanonicalDecl()) || isModuleMember(fn)) continue;
    if (const auto* method = dyn_cast<CXXMethodDecl>(fn); method && isCustomAutogradFunction(method->getParent()))
      continue;
    analyzeRoot(fn, CallContext{});
    roots.insert(fn);
  }
  std::set<const FunctionDecl*> reachedFromCallers;
  std::set_difference(recordedOnce_.begin(), recordedOnce_.end(), roots.begin(), roots.end(),
                      std::inserter(reachedFromCallers, reachedFromCallers.end()));
  // Whatever no root reached: analyzed alone, with autocast unknown.
  for (const FunctionDecl* fn : collector.defined) {
    if (analyzedOnce_.count(fn)) continue;
    CallContext unknown;
    unknown.process.autocast.cpu.enabled = unknown.process.autocast.cuda.enabled = Tristate::Unknown;
    if (const auto* method = dyn_cast<CXXMethodDecl>(fn);
        method && isCustomAutogradFunction(method->getParent()) && method->getName() == "backward")
      unknown.inCustomBackward = true;
    analyzeRoot(fn, unknown);
  }
  std::vector<Note> truncations = std::move(events_.truncations);
  std::vector<Finding> findings = std::move(findings_);
  for (Finding& f : findingsOf(std::move(events_))) findings.push_back(std::move(f));
  return DtypeFlowResult{std::move(findings), std::move(callableRoots_), std::move(truncations),
                         collector.linkage(reachedFromCallers), unitBudgetSpent_.has_value()};
}

}  // namespace flow

DtypeFlowResult analyzeDtypeFlow(ASTContext& context, TorchVersion torch, const ScalerApi& scalerApi,
                                 const AnalysisLimits& limits) {
  return flow::TranslationUnitAnalysis(context, torch, scalerApi, limits).run();
}

void forgetDtypeFlowAfterCrash() { flow::KeyedSettings::forgetAfterCrash(); }

}  // namespace dtype_lint::analyzer
