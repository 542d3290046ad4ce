// The driver of the dtype flow over one translation unit: which functions are
// roots, the memo of callee analyses by context, and where events go.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "dtype_flow.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "flow/abstract_values.h"
#include "flow/call_kind.h"
#include "flow/settings.h"
#include "clang/AST/ASTContext.h"
#include "clang/Analysis/CFG.h"

namespace dtype_lint::analyzer::flow {

// Why the analysis of a function was cut short.
enum class Truncation { BlockVisits, CallDepth, Budget, UnitBudget };

class TranslationUnitAnalysis {
 public:
  TranslationUnitAnalysis(clang::ASTContext& context, TorchVersion torch, const ScalerApi& api,
                          const AnalysisLimits& limits)
      : context_(context), torch_(torch), api_(api), limits_(limits), budget_(limits.functionBudget) {}

  DtypeFlowResult run();
  const FunctionResult* analyze(const clang::FunctionDecl* fn, const CallContext& ctx);

  clang::ASTContext& context() { return context_; }
  TorchVersion torch() const { return torch_; }
  const DtypeFlowRules& rules() const { return rules_; }
  const AnalysisLimits& limits() const { return limits_; }
  // While any analysis on the stack is still iterating to its fixpoint, what
  // it sees is a subset of the paths: events go to a scratch list.
  void beginSilent() { ++silent_; }
  void endSilent() {
    if (--silent_ == 0) scratch_ = AnalysisEvents{};
  }
  bool recording() const { return silent_ == 0; }
  const ScalerApi& scalerApi() const { return api_; }
  AnalysisEvents& events() { return recording() ? events_ : scratch_; }
  const CallClassification& classify(const clang::CallExpr* call);
  // The analysis of `fn` stopped early; noted once per function and reason, while recording.
  void noteTruncation(const clang::FunctionDecl* fn, Truncation why);

  // What the constructors of a user class establish for its members and the
  // scalers and optimizers it owns, joined over them: what holds in a method
  // whose object's construction the analysis did not see. nullptr for a
  // class without analyzable constructors, or while it is being computed.
  struct ClassInvariant {
    MemberFacts members;
    ScalerProtocol protocol;
  };
  // Under the runtime flags the caller assumes.
  const ClassInvariant* classInvariant(const clang::CXXRecordDecl* record, const CallContext& assuming);
  // Whether user code writes the field or variable anywhere (an assignment,
  // an initializer list, a constructor's member initializer); if not, a
  // field's default member initializer is its value everywhere (a config's defaults).
  bool written(const clang::ValueDecl* d);
  // Whether the flag is a state its own code sets to a constant
  // (`first_step_ = false` in a method of its class, or under a test of it),
  // not a setting chosen once.
  bool stateFlag(const clang::ValueDecl* d);
  // A tensor member of a user module that is neither a registered parameter
  // nor a buffer: module->to(dtype) leaves it as it is.
  bool unregisteredModuleTensor(const clang::ValueDecl* d);
  // The flag test under which every write of a pointer sits
  // (`if (cfg_.amp) scaler_ = std::make_unique<GradScaler>()`): where the test
  // fails, the pointer is null. nullptr when there is no one such test.
  const clang::Expr* pointerSetOnlyUnder(const clang::ValueDecl* d);
  // Whether every write of the pointer (or optional) `d` is in a constructor:
  // set there under pointerSetOnlyUnder's test, it is set whenever the test holds.
  bool pointerSetOnlyByConstructors(const clang::ValueDecl* d);
  // A config's field that no code writes (`bool use_half = true;`): its
  // default member initializer, its value everywhere.
  const clang::Expr* unwrittenFieldDefault(const clang::Expr* e);
  // A local variable that no code assigns after its initializer
  // (`const bool half = cfg.precision == "fp16";`): that initializer.
  const clang::Expr* unwrittenLocalInit(const clang::ValueDecl* d);
  // A dtype member that only one constructor's member initializer gives a
  // value (`dtype_(kDtypes.at(cfg.precision))`): that initializer.
  const clang::Expr* constructorDtype(const clang::Expr* e);
  // A dtype field that code gives only dtype constants
  // (`torch::Dtype amp_dtype = kBFloat16;`, `cfg.amp_dtype = kHalf` when a
  // flag says so, `cfg.amp_dtype = it->second` of a map of dtypes): those
  // dtypes, a setting when two or more, the field's dtype when one. Null otherwise.
  const std::vector<ScalarType>* dtypeChoices(const clang::ValueDecl* d);
  // The settings whose map lookups give such a field some of its dtypes
  // (`s.amp_dtype = dtypes.find(name)->second`), with the dtype each key
  // gives: where one of them is analyzed per value, the field follows it.
  using KeyedDtypes = std::map<const clang::ValueDecl*, std::map<std::string, ScalarType>>;
  const KeyedDtypes* dtypeChoiceKeys(const clang::ValueDecl* d);
  // An enum field that code gives only enumerators, two or more, directly or
  // through a parser (`cfg.precision = parse_precision(s)`): their names, a
  // setting. Null otherwise.
  const std::vector<std::string>* enumChoices(const clang::ValueDecl* d);
  // The parameters of the parsers that give such a field (dtype or enum) its
  // values (`o.storage = parse_dtype(argv[++i])`, whose if-chain returns only
  // constants): the field, analyzed per value, stands for them.
  const std::set<const clang::ValueDecl*>* choiceParsers(const clang::ValueDecl* d);
  // A condition's value when it is known: a constant, an unwritten config flag.
  std::optional<bool> knownCondition(const clang::Expr* condition);
  // The overrides of a virtual method that user code defines, below every class that declares it.
  const std::vector<const clang::CXXMethodDecl*>& overridersOf(const clang::CXXMethodDecl* method);

 private:
  clang::CFG* cfgFor(const clang::FunctionDecl* fn);
  // A root, once per assignment of the runtime flags its paths test.
  void analyzeRoot(const clang::FunctionDecl* fn, CallContext ctx);
  std::vector<Finding> findingsOfRun(const clang::FunctionDecl* fn, const CallContext& ctx);
  std::vector<Finding> findingsOf(AnalysisEvents events);
  struct Writes {
    std::set<const clang::ValueDecl*> written;
    std::set<const clang::ValueDecl*> stateFlags;
    // std::function variables and members by the lambda they hold, when one.
    std::map<const clang::ValueDecl*, const clang::FunctionDecl*> callables;
    std::map<const clang::ValueDecl*, const clang::Expr*> nullUnless;
    std::set<const clang::ValueDecl*> pointersSetOutsideConstructors;
    std::set<const clang::ValueDecl*> registered;
    std::map<const clang::ValueDecl*, const clang::Expr*> constructorDtypes;  // see constructorDtype
    std::map<const clang::ValueDecl*, std::vector<ScalarType>> dtypeChoices;  // see dtypeChoices
    std::map<const clang::ValueDecl*, KeyedDtypes> dtypeChoiceKeys;  // see dtypeChoiceKeys
    std::map<const clang::ValueDecl*, std::set<const clang::ValueDecl*>> choiceParsers;  // see choiceParsers
    std::map<const clang::ValueDecl*, std::vector<std::string>> enumChoices;  // see enumChoices
    // A virtual method's overrides defined in user code (by its canonical
    // declaration), in every class below its own.
    std::map<const clang::CXXMethodDecl*, std::vector<const clang::CXXMethodDecl*>> overriders;
  };
  const Writes& writes();

  clang::ASTContext& context_;
  KeyedSettings keyedSettings_{context_};
  TorchVersion torch_;
  DtypeFlowRules rules_{torch_};
  const ScalerApi& api_;
  const AnalysisLimits limits_;
  AnalysisEvents events_;
  AnalysisEvents scratch_;
  int silent_ = 0;
  std::map<const clang::FunctionDecl*, std::unique_ptr<clang::CFG>> cfgs_;
  std::map<const clang::CallExpr*, CallClassification> calls_;
  struct Memo {
    FunctionResult result;
    bool silent;  // analyzed while events were not recorded: redo when they are
  };
  std::map<std::string, Memo> memo_;
  std::set<const clang::FunctionDecl*> onStack_;
  std::set<const clang::FunctionDecl*> analyzedOnce_;
  std::set<const clang::FunctionDecl*> recordedOnce_;  // analyzed while recording events
  size_t budget_;  // callee analyses left in this translation unit
  std::optional<std::string> unitBudgetSpent_;  // the TU's time or memory is spent: why
  std::set<std::pair<const clang::FunctionDecl*, Truncation>> truncated_;
  // By class and assumed flags; nullopt: being computed.
  std::map<std::pair<const clang::CXXRecordDecl*, std::string>, std::optional<ClassInvariant>> invariants_;
  std::optional<ClassInvariant> partialInvariant_;  // the last one computed from inside one of its methods
  std::optional<Writes> writes_;
  std::vector<Finding> findings_;  // of the roots other TUs cannot call
  std::vector<CallableRootFindings> callableRoots_;
};

}  // namespace dtype_lint::analyzer::flow
