#include "flow/translation_unit.h"

#include <fmt/format.h>

#include "clang/AST/RecursiveASTVisitor.h"
#include "flow/ast_helpers.h"
#include "flow/function_analysis.h"
#include "torch_api.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace flow {
namespace {

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

  std::vector<const FunctionDecl*> defined;
  std::set<const FunctionDecl*> called;

 private:
  ASTContext& context_;
};

// The fields user code writes: assigned, incremented, given in an initializer
// list or by a constructor's member initializer.
class FieldWriteCollector : public RecursiveASTVisitor<FieldWriteCollector> {
 public:
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }

  bool VisitBinaryOperator(BinaryOperator* op) {
    if (op->isAssignmentOp()) add(op->getLHS());
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* op) {
    if (op->isAssignmentOp() && op->getNumArgs() >= 1) add(op->getArg(0));
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) add(op->getSubExpr());
    return true;
  }
  bool VisitInitListExpr(InitListExpr* list) {
    const InitListExpr* semantic = list->isSemanticForm() ? list : list->getSemanticForm();
    const RecordDecl* record = semantic ? semantic->getType()->getAsRecordDecl() : nullptr;
    if (!record) return true;
    unsigned i = 0;
    for (const FieldDecl* field : record->fields()) {
      if (i >= semantic->getNumInits()) break;
      const Expr* init = semantic->getInit(i++);
      if (init && !isa<CXXDefaultInitExpr, ImplicitValueInitExpr>(init)) written.insert(field->getCanonicalDecl());
    }
    return true;
  }
  bool VisitCXXConstructorDecl(CXXConstructorDecl* ctor) {
    for (const CXXCtorInitializer* init : ctor->inits())
      if (init->isWritten() && init->getMember()) written.insert(init->getMember()->getCanonicalDecl());
    return true;
  }

  std::set<const FieldDecl*> written;

 private:
  void add(const Expr* e) {
    if (const auto* member = dyn_cast<MemberExpr>(e->IgnoreParenImpCasts()))
      if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl())) written.insert(field->getCanonicalDecl());
  }
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
  if (inserted) it->second = classifyCall(call, api_);
  return it->second;
}

void TranslationUnitAnalysis::noteTruncation(const FunctionDecl* fn, Truncation why) {
  if (!recording() || !truncated_.insert({fn, why}).second) return;
  const std::string name = fn->getQualifiedNameAsString();
  std::string message;
  switch (why) {
    case Truncation::BlockVisits:
      message = fmt::format("analysis of '{}' stopped early: a loop block was visited more than {} times", name,
                            limits_.maxBlockVisits);
      break;
    case Truncation::CallDepth:
      message = fmt::format("calls deeper than {} levels are not followed (from '{}')", limits_.maxCallDepth, name);
      break;
    case Truncation::Budget:
      message = fmt::format("the per-file budget of {} function analyses was spent: '{}' was not analyzed",
                            limits_.functionBudget, name);
      break;
  }
  events_.truncations.push_back(Note{nameLocation(fn), std::move(message)});
}

const TranslationUnitAnalysis::ClassInvariant* TranslationUnitAnalysis::classInvariant(const CXXRecordDecl* record) {
  auto [it, inserted] = invariants_.try_emplace(record);
  if (!inserted) return it->second ? &*it->second : nullptr;
  std::optional<ClassInvariant> invariant;
  for (const CXXConstructorDecl* ctor : record->ctors()) {
    const FunctionDecl* def = ctor->getDefinition();
    if (!def || !isAnalyzable(def) || ctor->isCopyOrMoveConstructor()) continue;
    const FunctionResult* r = analyze(def, CallContext{});
    if (!r || !r->exitReached) continue;
    if (!invariant) {
      invariant = ClassInvariant{r->members, r->exit.protocol};
    } else {
      invariant->members.join(r->members);
      invariant->protocol.join(r->exit.protocol);
    }
  }
  auto& slot = invariants_[record];
  slot = std::move(invariant);
  return slot ? &*slot : nullptr;
}

bool TranslationUnitAnalysis::fieldWritten(const FieldDecl* field) {
  if (!writtenFields_) {
    FieldWriteCollector collector;
    collector.TraverseAST(context_);  // the user declarations the consumer set as traversal scope
    writtenFields_ = std::move(collector.written);
  }
  return writtenFields_->count(field->getCanonicalDecl()) != 0;
}

const FunctionResult* TranslationUnitAnalysis::analyze(const FunctionDecl* fn, const CallContext& ctx) {
  if (!isAnalyzable(fn) || onStack_.count(fn)) return nullptr;
  const std::string key = ctx.key(fn);
  if (auto it = memo_.find(key); it != memo_.end() && (!it->second.silent || !recording())) return &it->second.result;
  if (budget_ == 0) {
    noteTruncation(fn, Truncation::Budget);
    return nullptr;
  }
  --budget_;
  CFG* cfg = cfgFor(fn);
  if (!cfg) return nullptr;
  analyzedOnce_.insert(fn);
  onStack_.insert(fn);
  FunctionResult result = FunctionAnalysis(*this, fn, ctx, *cfg).run();
  onStack_.erase(fn);
  Memo& memo = memo_[key];
  memo = Memo{std::move(result), !recording()};
  return &memo.result;
}

AnalysisEvents TranslationUnitAnalysis::run() {
  UserFunctionCollector collector(context_);
  collector.TraverseAST(context_);  // the user declarations the consumer set as traversal scope
  // Roots start with autocast off, as every process does; the rest are reached
  // through their callers, in the caller's context.
  for (const FunctionDecl* fn : collector.defined) {
    if (collector.called.count(fn->getCanonicalDecl()) || isModuleMember(fn)) continue;
    if (const auto* method = dyn_cast<CXXMethodDecl>(fn); method && isCustomAutogradFunction(method->getParent()))
      continue;
    analyze(fn, CallContext{});
  }
  // Whatever no root reached: analyzed alone, with autocast unknown.
  for (const FunctionDecl* fn : collector.defined) {
    if (analyzedOnce_.count(fn)) continue;
    CallContext unknown;
    unknown.process.autocast.cpu.enabled = unknown.process.autocast.cuda.enabled = Tristate::Unknown;
    if (const auto* method = dyn_cast<CXXMethodDecl>(fn); method && isCustomAutogradFunction(method->getParent()) &&
                                                          method->getName() == "backward")
      unknown.inCustomBackward = true;
    analyze(fn, unknown);
  }
  return std::move(events_);
}

}  // namespace flow

AnalysisEvents analyzeDtypeFlow(ASTContext& context, TorchVersion torch, const ScalerApi& scalerApi,
                                const AnalysisLimits& limits) {
  return flow::TranslationUnitAnalysis(context, torch, scalerApi, limits).run();
}

}  // namespace dtype_lint::analyzer
