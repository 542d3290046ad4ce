#include "flow/flag_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "flow/ast_helpers.h"
#include "flow/settings.h"
#include "torch_api.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

namespace {

// Whether a branch does work beyond printing: calls something outside std,
// or leaves early (`if (!active) return;` skips what follows).
bool doesWork(const Stmt* branch) {
  return containsStmt(branch, [](const Stmt* s) {
    if (isa<ReturnStmt, BreakStmt, ContinueStmt, CXXThrowExpr>(s)) return true;
    if (const auto* call = dyn_cast<CallExpr>(s)) {
      const FunctionDecl* callee = call->getDirectCallee();
      return !callee || !(callee->isInStdNamespace() || callee->getOverloadedOperator() == OO_LessLess);
    }
    if (const auto* construct = dyn_cast<CXXConstructExpr>(s)) return !construct->getConstructor()->isInStdNamespace();
    return false;
  });
}

// Whether a branch chooses a dtype: returns one (`if (s == "fp16") return
// torch::kHalf;`), assigns one (`dtype = torch::kHalf;`) or converts to one
// (`teacher->to(torch::kHalf)`).
bool choosesDtype(const Stmt* branch) {
  return containsStmt(branch, [](const Stmt* s) {
    if (const auto* conversion = dyn_cast<CXXMemberCallExpr>(s); conversion && calleeName(conversion) == "to")
      return llvm::any_of(conversion->arguments(), [](const Expr* arg) { return isScalarTypeType(arg->getType()); });
    if (const auto* r = dyn_cast<ReturnStmt>(s))
      return r->getRetValue() && isScalarTypeType(r->getRetValue()->getType());
    if (const auto* op = dyn_cast<BinaryOperator>(s))
      return op->isAssignmentOp() && isScalarTypeType(op->getLHS()->getType());
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(s))
      return op->isAssignmentOp() && op->getNumArgs() == 2 && isScalarTypeType(op->getArg(0)->getType());
    return false;
  });
}

// A local computed from a tensor's values (`const bool finite =
// found_inf.item<float>() == 0.f;`): data of one step, not a setting of the run.
bool readsTensorData(const Expr* init) {
  return containsStmt(init, [](const Stmt* s) {
    const auto* call = dyn_cast<CallExpr>(s);
    const std::string name = call ? calleeName(call) : "";
    return name == "item" || name == "equal" || name == "allclose" || name == "is_nonzero";
  });
}

class FlagCollector : public RecursiveASTVisitor<FlagCollector> {
 public:
  explicit FlagCollector(TranslationUnitAnalysis& tu) : tu_(tu) {}
  bool shouldVisitTemplateInstantiations() const { return false; }

  void collect(const FunctionDecl* root) {
    std::deque<std::pair<const FunctionDecl*, int>> queue{{root, 0}};
    visited_.insert(root);
    for (const FunctionDecl* ctor : constructorsBehind(root))
      if (visited_.insert(ctor).second) queue.emplace_back(ctor, 1);
    while (!queue.empty()) {
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
    if (!doesWork(s->getThen()) && !doesWork(s->getElse())) return true;
    addTests(s->getCond());
    // A setting that picks the dtype ranks first, as a map of dtypes' key does.
    if (choosesDtype(s->getThen()) || choosesDtype(s->getElse()))
      forEachTest(s->getCond(), [&](const Expr* test) {
        if (const auto tested = settingTest(test)) markChoosesDtype(tested->setting);
      });
    return true;
  }
  bool VisitSwitchStmt(SwitchStmt* s) {
    if (const auto chosen = doesWork(s->getBody()) ? settingSwitch(s) : std::nullopt) {
      std::vector<std::string> values;
      for (const auto& [label, value] : chosen->cases)
        if (value) values.push_back(*value);
      addSetting(chosen->setting, chosen->read, values);
      if (choosesDtype(s->getBody())) markChoosesDtype(chosen->setting);
    }
    return true;
  }
  bool VisitConditionalOperator(ConditionalOperator* c) {
    addTests(c->getCond());
    return true;
  }
  bool VisitCallExpr(CallExpr* call) {
    follow(call->getDirectCallee());
    if (const std::string name = calleeName(call); name == "make_unique" || name == "make_shared")
      addScalerFlags(call->getType(), llvm::ArrayRef(call->getArgs(), call->getNumArgs()));
    // block(x) through its holder: the user module's forward.
    if (const auto& module = tu_.classify(call).module; module && module->op.empty())
      follow(moduleForward(module->impl));
    addLookup(call);
    // at::autocast::set_enabled(cfg.amp.enabled): the flag chooses the region.
    if (const FunctionDecl* callee = call->getDirectCallee();
        isAutocastFunction(callee) && callee->getDeclName().isIdentifier() && callee->getName().startswith("set_") &&
        callee->getName().endswith("enabled"))
      for (const Expr* arg : call->arguments())
        if (arg->getType()->isBooleanType()) addTests(arg);
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* construct) {
    follow(construct->getConstructor());
    addScalerFlags(construct->getType(), llvm::ArrayRef(construct->getArgs(), construct->getNumArgs()));
    return true;
  }
  // GradScaler(cfg.amp == "fp16"), make_unique<GradScaler>(...): the flag
  // that makes the scaler work or do nothing.
  void addScalerFlags(QualType made, llvm::ArrayRef<const Expr*> args) {
    const CXXRecordDecl* record = pointeeRecord(made);
    if (!record || !record->getDeclName().isIdentifier() || !record->getName().contains_insensitive("scaler")) return;
    for (const Expr* arg : args)
      if (!isa<CXXDefaultArgExpr>(arg) && arg->IgnoreImpCasts()->getType()->isBooleanType()) addTests(arg);
  }
  bool VisitMemberExpr(MemberExpr* member) {
    addLookup(member);  // it->second of a map's find()
    // cfg_.amp_dtype, which the program sets to one of a few dtypes;
    // cfg_.precision, which it sets to one of a few enumerators.
    if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl()->getCanonicalDecl())) {
      if (const std::vector<ScalarType>* dtypes = tu_.dtypeChoices(field); dtypes && dtypes->size() > 1) {
        std::vector<std::string> values;
        for (ScalarType dtype : *dtypes) values.emplace_back(name(dtype));
        addSetting(field, member, values, /*closed=*/true);
      }
      if (const std::vector<std::string>* enumerators = tu_.enumChoices(field))
        addSetting(field, member, *enumerators, /*closed=*/true);
    }
    return true;
  }

  std::vector<RuntimeFlag> flags;

 private:
  void follow(const FunctionDecl* callee) {
    const FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
    if (!def || !isAnalyzable(def)) return;
    callees_.push_back(def);
    for (const FunctionDecl* ctor : constructorsBehind(def)) callees_.push_back(ctor);
  }
  // A method starts from what its class's constructors make of the members
  // (a model built in the precision a setting chooses): their settings decide too.
  static std::vector<const FunctionDecl*> constructorsBehind(const FunctionDecl* fn) {
    std::vector<const FunctionDecl*> out;
    if (const auto* method = dyn_cast<CXXMethodDecl>(fn);
        method && !isa<CXXConstructorDecl>(method) && !method->isStatic())
      for (const CXXConstructorDecl* ctor : method->getParent()->ctors())
        if (const FunctionDecl* def = ctor->getDefinition(); def && isAnalyzable(def)) out.push_back(def);
    return out;
  }

  // The flags a condition combines with !, && and ||. A state its own code
  // sets (`first_step_ = false`) is not a setting chosen once per run.
  void addTests(const Expr* condition) {
    forEachTest(condition, [&](const Expr* test) { addTest(test); });
  }
  // One test: a setting compared with a value, or a flag that is not known and not a state.
  void addTest(const Expr* condition) {
    if (const Expr* predicate = predicateBody(condition)) return addTests(predicate);
    if (const auto test = settingTest(condition)) return addSetting(test->setting, test->read, {test->value});
    if (const auto membership = settingMembership(condition)) return addLookup(membership->lookup);
    const ValueDecl* flag = testedFlag(condition);
    if (!flag || tu_.knownCondition(condition) || tu_.stateFlag(flag)) return;
    // `const bool half = cfg.precision == "fp16";`: the setting decides, even
    // where the local is declared in a loop. An initializer that tests none
    // (`env_flag("USE_AMP", true)`): the flag does.
    if (const Expr* init = tu_.unwrittenLocalInit(flag)) {
      if (readsTensorData(init)) return;
      bool decides = false;
      forEachTest(init, [&](const Expr* test) { decides |= settingTest(test) || testedFlag(test); });
      if (decides) return addTests(init);
    }
    if (!declaredInLoop(flag)) add(flag, condition, {});
  }
  // A map from the values a setting names: its keys are the values.
  void addLookup(const Expr* e) {
    if (const auto lookup = settingLookup(e)) addLookup(*lookup);
  }
  void addLookup(const SettingLookup& lookup) {
    std::vector<std::string> keys;
    bool dtypes = false;
    for (const auto& [key, mapped] : lookup.entries) {
      keys.push_back(key);
      dtypes |= mapped && isScalarTypeType(mapped->getType());
    }
    addSetting(lookup.setting, lookup.read, keys);
    if (dtypes) markChoosesDtype(lookup.setting);
  }
  void markChoosesDtype(const ValueDecl* setting) {
    for (RuntimeFlag& flag : flags)
      if (flag.decl == setting) flag.choosesDtype = true;
  }
  void addSetting(const ValueDecl* setting, const Expr* read, const std::vector<std::string>& values,
                  bool closed = false) {
    if (tu_.stateFlag(setting) || declaredInLoop(setting)) return;
    add(setting, read, values, closed);
  }
  // `for (...) { std::string arg = argv[i]; if (arg == "--fp16") ... }`: a
  // value per iteration (a command line being parsed), not one per run.
  bool declaredInLoop(const ValueDecl* d) {
    const auto* var = dyn_cast<VarDecl>(d);
    if (!var || !var->isLocalVarDecl()) return false;
    DynTypedNode node = DynTypedNode::create(*var);
    for (int up = 0; up < 32; ++up) {
      const auto parents = tu_.context().getParents(node);
      if (parents.empty() || parents[0].get<FunctionDecl>()) return false;
      if (parents[0].get<ForStmt>() || parents[0].get<WhileStmt>() || parents[0].get<DoStmt>() ||
          parents[0].get<CXXForRangeStmt>())
        return true;
      node = parents[0];
    }
    return false;
  }
  void add(const ValueDecl* decl, const Expr* read, const std::vector<std::string>& values, bool closed = false) {
    for (RuntimeFlag& known : flags)
      if (known.decl == decl) {
        for (const std::string& value : values)
          if (std::find(known.values.begin(), known.values.end(), value) == known.values.end())
            known.values.push_back(value);
        return;
      }
    const SourceManager& sm = tu_.context().getSourceManager();
    const LangOptions& lang = tu_.context().getLangOpts();
    flags.push_back(
        RuntimeFlag{decl, quotedSource(read, sm, lang), toLocation(read->getSourceRange(), sm, lang), values, closed});
  }

  TranslationUnitAnalysis& tu_;
  std::set<const FunctionDecl*> visited_;
  std::vector<const FunctionDecl*> callees_;
};

}  // namespace

FlagAssumption RuntimeFlag::assume(size_t choice) const {
  if (values.empty()) return FlagAssumption{decl, choice == 1, false, ""};
  const bool named = choice < values.size();
  return FlagAssumption{decl, named, true, named ? values[choice] : ""};
}

std::string RuntimeFlag::describe(size_t choice) const {
  if (values.empty()) return choice == 1 ? "true" : "false";
  if (choice < values.size()) return values[choice];
  std::string none;
  for (const std::string& value : values) none += (none.empty() ? "" : ", ") + value;
  return "none of " + none;
}

std::vector<RuntimeFlag> runtimeFlags(const FunctionDecl* root, TranslationUnitAnalysis& tu, bool& capped) {
  FlagCollector collector(tu);
  collector.collect(root);
  // Within the limits, the settings looked up in a map of dtypes first (they
  // choose the precision), then a config's fields and keys (what a user sets),
  // then variables, then a helper's parameters (`parse_precision(s)` compares
  // the string a field is parsed from) and the device's availability
  // (torch::cuda::is_available): each kept whole, in the order found.
  auto rank = [](const RuntimeFlag& flag) {
    return flag.choosesDtype                                                ? 0
           : isa<FieldDecl>(flag.decl) || KeyedSettings::isKeyed(flag.decl) ? 1
           : isa<ParmVarDecl, FunctionDecl>(flag.decl)                      ? 3
                                                                            : 2;
  };
  // Flags another flag stands for: a parser helper's parameter, where the
  // dtype or enum field it fills is a flag (analyzed per value, the field holds
  // the parsed one on every path; the parameter, per name, would still meet the
  // path that parsed nothing), and a helper's enum parameter, which holds the
  // value of the enum field it is called with (`autocast_dtype(cfg_.precision)`).
  std::set<const ValueDecl*> followers;
  std::set<const Type*> enumSettings;
  auto enumType = [](const ValueDecl* d) { return d->getType().getNonReferenceType().getCanonicalType().getTypePtr(); };
  for (const RuntimeFlag& flag : collector.flags) {
    if (const auto* parsers = tu.choiceParsers(flag.decl)) followers.insert(parsers->begin(), parsers->end());
    if (tu.enumChoices(flag.decl)) enumSettings.insert(enumType(flag.decl));
  }
  for (const RuntimeFlag& flag : collector.flags)
    if (isa<ParmVarDecl>(flag.decl) && enumSettings.count(enumType(flag.decl))) followers.insert(flag.decl);
  // Most important first: the leading ones are analyzed under every
  // combination, the later ones pairwise (configurations.h). A helper's
  // parameter stands for what its callers pass, which may be another flag's
  // value: it joins only where every combination is still analyzed, so that
  // no run pairs it with a value its callers cannot pass.
  std::vector<size_t> kept;
  std::vector<SettingChoices> settings;
  const size_t cap = tu.limits().maxConfigurations;
  size_t combinations = 1;
  for (int level = 0; level < 4; ++level)
    for (size_t i = 0; i < collector.flags.size(); ++i) {
      const RuntimeFlag& flag = collector.flags[i];
      if (rank(flag) != level || followers.count(flag.decl) || kept.size() >= tu.limits().maxRuntimeFlags) continue;
      if (level == 3 && combinations * flag.choices() > cap) continue;
      combinations *= flag.choices();
      settings.push_back(flag.settingChoices());
      if (configurationRuns(settings, cap).size() > cap) {
        combinations /= flag.choices();
        settings.pop_back();
        continue;
      }
      kept.push_back(i);
    }
  // A dtype field looked up by a setting that is analyzed per value follows
  // that setting on each path: as a flag of its own it would pair values no
  // run can (the key "fp32" with the field Half).
  std::vector<RuntimeFlag> flags;
  for (size_t i : kept) {
    const auto* keys = tu.dtypeChoiceKeys(collector.flags[i].decl);
    if (!keys || std::none_of(kept.begin(), kept.end(), [&](size_t j) { return keys->count(collector.flags[j].decl); }))
      flags.push_back(collector.flags[i]);
  }
  capped = flags.size() < collector.flags.size();
  return flags;
}

SettingChoices RuntimeFlag::settingChoices() const {
  SettingChoices setting{spelling, firstTest, {}};
  for (size_t choice = 0; choice < choices(); ++choice) setting.choices.push_back(describe(choice));
  return setting;
}

}  // namespace dtype_lint::analyzer::flow
