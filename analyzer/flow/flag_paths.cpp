#include "flow/flag_paths.h"

#include <fmt/format.h>

#include <array>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "flow/ast_helpers.h"
#include "torch_api.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

namespace {

// Whether a branch does work beyond printing: calls something outside std,
// or leaves early (`if (!active) return;` skips what follows).
bool doesWork(const Stmt* branch) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool found = false;
    bool VisitStmt(Stmt* s) {
      found = found || isa<ReturnStmt, BreakStmt, ContinueStmt, CXXThrowExpr>(s);
      return !found;
    }
    bool VisitCallExpr(CallExpr* call) {
      const FunctionDecl* callee = call->getDirectCallee();
      found = found || !callee || !(callee->isInStdNamespace() || callee->getOverloadedOperator() == OO_LessLess);
      return !found;
    }
    bool VisitCXXConstructExpr(CXXConstructExpr* construct) {
      found = found || !construct->getConstructor()->isInStdNamespace();
      return !found;
    }
  };
  if (!branch) return false;
  Finder finder;
  finder.TraverseStmt(const_cast<Stmt*>(branch));
  return finder.found;
}

class FlagCollector : public RecursiveASTVisitor<FlagCollector> {
 public:
  FlagCollector(TranslationUnitAnalysis& tu, size_t limit) : tu_(tu), limit_(limit) {}
  bool shouldVisitTemplateInstantiations() const { return false; }

  void collect(const FunctionDecl* root) {
    std::deque<std::pair<const FunctionDecl*, int>> queue{{root, 0}};
    visited_.insert(root);
    while (!queue.empty() && flags.size() < limit_) {
      auto [fn, depth] = queue.front();
      queue.pop_front();
      callees_.clear();
      TraverseDecl(const_cast<FunctionDecl*>(fn));
      if (depth + 1 >= tu_.limits().maxCallDepth) continue;
      for (const FunctionDecl* callee : callees_)
        if (visited_.insert(callee).second) queue.emplace_back(callee, depth + 1);
    }
  }

  bool VisitIfStmt(IfStmt* s) {
    if (doesWork(s->getThen()) || doesWork(s->getElse())) addTests(s->getCond());
    return true;
  }
  bool VisitConditionalOperator(ConditionalOperator* c) {
    addTests(c->getCond());
    return true;
  }
  bool VisitCallExpr(CallExpr* call) {
    follow(call->getDirectCallee());
    // at::autocast::set_enabled(cfg.amp.enabled): the flag chooses the region.
    if (const FunctionDecl* callee = call->getDirectCallee(); isAutocastFunction(callee) && callee->getDeclName().isIdentifier() &&
        callee->getName().startswith("set_") && callee->getName().endswith("enabled"))
      for (const Expr* arg : call->arguments())
        if (arg->getType()->isBooleanType()) addTests(arg);
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* construct) {
    follow(construct->getConstructor());
    return true;
  }

  std::vector<RuntimeFlag> flags;

 private:
  void follow(const FunctionDecl* callee) {
    const FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
    if (def && isAnalyzable(def)) callees_.push_back(def);
  }

  // The flags a condition combines with !, && and ||. A state its own code
  // sets (`first_step_ = false`) is not a setting chosen once per run.
  void addTests(const Expr* condition) { forEachTest(condition, [&](const Expr* test) { addFlag(test); }); }
  // One test: a flag that is not known and not a state.
  void addFlag(const Expr* condition) {
    const ValueDecl* flag = testedFlag(condition);
    if (!flag || flags.size() >= limit_ || tu_.knownCondition(condition) || tu_.stateFlag(flag)) return;
    for (const RuntimeFlag& known : flags)
      if (known.decl == flag) return;
    const SourceManager& sm = tu_.context().getSourceManager();
    const LangOptions& lang = tu_.context().getLangOpts();
    flags.push_back(
        RuntimeFlag{flag, quotedSource(condition, sm, lang), toLocation(condition->getSourceRange(), sm, lang)});
  }

  TranslationUnitAnalysis& tu_;
  const size_t limit_;
  std::set<const FunctionDecl*> visited_;
  std::vector<const FunctionDecl*> callees_;
};

}  // namespace

std::vector<RuntimeFlag> runtimeFlags(const FunctionDecl* root, TranslationUnitAnalysis& tu) {
  FlagCollector collector(tu, tu.limits().maxRuntimeFlags);
  collector.collect(root);
  return std::move(collector.flags);
}

std::vector<Finding> mergeFlagRuns(const std::vector<RuntimeFlag>& flags, std::vector<std::vector<Finding>> runs) {
  struct Merged {
    Finding finding;
    std::vector<std::array<bool, 2>> valuesSeen;  // per flag: seen false, seen true
  };
  std::vector<Merged> merged;
  std::map<std::tuple<std::string, std::string, unsigned, unsigned>, size_t> index;
  for (unsigned run = 0; run < runs.size(); ++run) {
    for (Finding& f : runs[run]) {
      const auto key = std::make_tuple(std::string(f.rule->id), f.location.file, f.location.line, f.location.column);
      auto [it, inserted] = index.try_emplace(key, merged.size());
      if (inserted) merged.push_back(Merged{std::move(f), std::vector<std::array<bool, 2>>(flags.size())});
      for (size_t i = 0; i < flags.size(); ++i) merged[it->second].valuesSeen[i][(run >> i) & 1u] = true;
    }
  }
  std::vector<Finding> out;
  for (Merged& m : merged) {
    for (size_t i = 0; i < flags.size(); ++i) {
      if (m.valuesSeen[i][0] && m.valuesSeen[i][1]) continue;
      m.finding.notes.push_back(Note{flags[i].firstTest, fmt::format("assuming {} is {}", flags[i].spelling,
                                                                     m.valuesSeen[i][1] ? "true" : "false")});
    }
    out.push_back(std::move(m.finding));
  }
  return out;
}

}  // namespace dtype_lint::analyzer::flow
