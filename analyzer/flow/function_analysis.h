// One function in one context: a worklist over the Clang CFG to a fixpoint
// (silently), then every reached block once more from its fixpoint state,
// reporting events.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flow/call_kind.h"
#include "flow/flow_queries.h"
#include "flow/scaler_tracking.h"
#include "flow/translation_unit.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"

namespace dtype_lint::analyzer::flow {

// What a callee's context takes over from its caller's, besides the call
// chain and the depth.
enum class Inherit {
  // A helper called from here: the process state, whether it runs in a custom
  // backward, and under a scaler's test of its own state.
  ProcessAndBackwardContext,
  // A module's forward, a constructor, a destructor, a custom Function's
  // forward: the process state only.
  ProcessOnly,
  // A custom Function's backward: nothing; the autograd engine runs it later,
  // with autocast off.
  Nothing,
};

class FunctionAnalysis final : public FlowQueries {
 public:
  FunctionAnalysis(TranslationUnitAnalysis& tu, const clang::FunctionDecl* fn, const CallContext& ctx, clang::CFG& cfg);

  FunctionResult run();

  // FlowQueries
  TensorFact evalTensor(const clang::Expr* e) override;
  TensorFact evalModule(const clang::Expr* e) override;
  ListFact evalList(const clang::Expr* e) override;
  const FunctionResult* userCallResult(const clang::Expr* e) override;
  SourceLocation loc(const clang::Expr* e) override { return toLocation(e->getSourceRange()); }
  std::string describe(const clang::Expr* e) override;
  std::optional<bool> evalFlag(const clang::Expr* condition) override;
  FlowState& state() override { return state_; }
  const CallContext& callContext() const override { return ctx_; }
  const clang::FunctionDecl* function() const override { return fn_; }
  clang::ASTContext& astContext() override { return tu_.context(); }
  AnalysisEvents& events() override { return tu_.events(); }

 private:
  // The worklist
  FlowState entryState();
  void seedClassInvariant(FlowState& entry);
  FlowState enclosingAfter(const FlowState& exit) const;
  // Whether control can flow from pred to succ: not when pred branches on a
  // flag whose value is known (a config's default, a constant, an assumed
  // runtime flag, a scaler pointer this path set).
  bool edgeFeasible(const clang::CFGBlock* pred, const clang::CFGBlock* succ, const FlowState& predExit);
  bool caseFeasible(const clang::SwitchStmt* s, const clang::CFGBlock* succ);
  FlowState stateEntering(const clang::CFGBlock* block, const FlowState& entry, const std::vector<FlowState>& out);
  // Whether some block was visited too often: the fixpoint was not reached.
  bool iterateToFixpoint(const FlowState& entry, std::vector<FlowState>& out);

  // Exceptions. Clang's CFG has no edges into catch handlers, so the state a
  // handler starts from is collected here: the join of the states before each
  // call in its try block.
  struct TryRegion {
    const clang::CFGBlock* dispatch = nullptr;  // the block whose successors are the handlers
    FlowState thrown;
  };
  void findTryRegions();
  const clang::CXXTryStmt* enclosingTry(const clang::Stmt* s);
  bool underTestOfOwnMembers(const clang::Stmt* s);
  void noteThrowPoint(const clang::CFGElement& element);
  void transferBlock(const clang::CFGBlock& block);

  // Transfer functions
  void transfer(const clang::CFGElement& element);
  void transferStmt(const clang::Stmt* s);
  void transferReturn(const clang::ReturnStmt* ret);
  void transferCall(const clang::CallExpr* call);
  void transferCallEffect(const clang::CallExpr* call, const CallClassification& c);
  void transferOperator(const clang::CXXOperatorCallExpr* op);
  void transferSaveForBackward(const clang::CallExpr* call);
  void transferModuleConversion(const clang::CXXMemberCallExpr* call);
  void transferParameterReplacement(const clang::CXXMemberCallExpr* call);
  void transferSetData(const clang::Expr* object, const clang::CXXMemberCallExpr* call);
  void transferParameterReplacementLoop(const clang::DeclStmt* rangeDecl);
  void forgetConvertedMembers(const clang::CXXRecordDecl* impl);
  void forgetAliasedModules(const clang::ValueDecl* target, const clang::CXXRecordDecl* impl);
  void convertListElement(const clang::Expr* container, const TensorFact& converted);
  bool followsOwningModule(const clang::Expr* container);
  std::optional<TensorFact> accessedElement(const ListFact& list, const clang::CallExpr* access);
  bool placeAtCall(Finding& finding);
  bool createdInPlace(const clang::Expr* module);
  void transferTensorMethod(const clang::CXXMemberCallExpr* call, const std::string& name);
  void assumeLazyInitialization(const clang::CXXMemberCallExpr* defined);
  void transferTorchFunction(const clang::CallExpr* call, const std::string& name);
  void transferBackward(const clang::Expr* loss, const clang::Expr* at);
  void transferConstruct(const clang::CXXConstructExpr* construct);
  void transferUserCall(const clang::FunctionDecl* callee, const CallContext& calleeCtx,
                        const clang::CallExpr* call = nullptr);
  void applyCalleeExit(const FunctionResult& result);
  void assign(const clang::Expr* lhs, const clang::Expr* rhs, const clang::Expr* at);
  void assignElement(const clang::Expr* lhs, const clang::Expr* rhs);
  void transferListMethod(const clang::CXXMemberCallExpr* call, const std::string& name);
  void transferListMethod(const clang::CXXMemberCallExpr* call, const std::string& name, const clang::Expr* object);
  void forgetListsPassedByReference(const clang::CallExpr* call);
  // A variable's or a member's initialization: `init` may be null.
  void bindDeclaration(const clang::ValueDecl* d, const clang::Expr* init, SourceLocation at);
  bool bindLoopElement(const clang::VarDecl* var);
  void bindModule(const clang::ValueDecl* d, const clang::Expr* init);
  void bindBool(const clang::ValueDecl* d, const clang::Expr* value);
  static bool disablesGrad(clang::QualType type);
  void seedDtypeFields(const clang::CXXRecordDecl* record, FieldFacts& fields);
  std::optional<FieldFacts> structFieldsOf(const clang::Expr* e);
  std::optional<FieldFacts> aggregateFields(const clang::Expr* init);
  bool createsFloatParameters(const clang::CXXRecordDecl* impl, const clang::Expr* init);
  void bindSavedData(const clang::Expr* lhs, const clang::Expr* rhs);
  bool isUserStruct(clang::QualType type);
  void handleAutocastCall(const clang::FunctionDecl* fn, const clang::CallExpr* call);
  const clang::Expr* asWritten(const clang::Expr* e);
  bool fullyReduced(const clang::Expr* e);
  void emitOp(const std::string& op, const clang::Expr* at, std::vector<const clang::Expr*> inputs,
              const clang::Expr* destination, bool explicitDtype, bool reducesAllDims);
  void emitModuleCall(const std::string& op, const clang::Expr* at, const clang::Expr* input,
                      const clang::Expr* moduleExpr);
  void pushOp(OpEvent event, const clang::Expr* at);
  bool convertsAnotherObjectsField(const clang::Expr* module);
  std::optional<size_t> callChoosingOperands(const std::vector<Operand>& operands, bool parametersLast) const;
  // Records the call into a user module from code outside one (ModuleEntry).
  void enterModule(CallContext& callee) const;
  void endPathIfItRaises(const OpEvent& event, const clang::Expr* at);

  // Evaluation (pure: never changes the state or emits events)
  TensorFact evalCallResult(const clang::CallExpr* call);
  TensorFact evalModuleCall(const ModuleCall& module, const clang::CallExpr* call);
  TensorFact evalOperator(const clang::CXXOperatorCallExpr* op);
  TensorFact evalScaledLoss(const clang::CXXMemberCallExpr* call);
  TensorFact evalTensorMethod(const clang::CXXMemberCallExpr* call, const std::string& name);
  TensorFact evalTorchFunction(const clang::CallExpr* call, const std::string& name);
  std::optional<TensorFact> evalFactory(const clang::CallExpr* call, const std::string& name);
  TensorFact evalElement(const clang::Expr* range);
  std::optional<TensorFact> evalElementAccess(const clang::Expr* e);
  std::optional<TensorFact> evalTupleElement(const clang::Expr* e);
  std::vector<TensorFact> evalInputs(const clang::CallExpr* call);
  std::optional<size_t> constantIndex(const clang::Expr* e);
  std::optional<TensorFact> evalSavedData(const clang::CXXMemberCallExpr* call);
  // A dtype argument that is a dtype constant written in the file (torch::kHalf).
  std::optional<SourceLocation> writtenDtypeConstant(const clang::Expr* argument);
  std::optional<TensorFact> evalDtypeArgument(const clang::Expr* e);
  // Whether an optional<Dtype> holds a dtype on this path (`amp_dtype_ =
  // modes.at(precision)` where the assumed value maps to nullopt: no).
  std::optional<bool> evalDtypeEngaged(const clang::Expr* optional);
  std::optional<TensorFact> evalDtypeCall(const clang::CallExpr* call, const std::string& name);
  Value evalValue(const clang::Expr* e, clang::QualType paramType);
  TensorFact opResult(std::string_view op, const std::vector<TensorFact>& inputs, const clang::Expr* at);
  TensorFact opResultOf(std::string_view op, const std::vector<TensorFact>& inputs, const clang::Expr* at);
  // loss * K: the dtype is the tensor's; DL203 remembers K.
  TensorFact scaledByScalar(TensorFact tensor, const clang::Expr* factor, const clang::Expr* at);
  std::optional<TensorFact> autocastResult(std::string_view op, const std::vector<TensorFact>& inputs,
                                           const clang::Expr* at);

  // Calls the analysis follows into
  std::optional<CallContext> calleeContext(Inherit inherit, std::optional<Note> calledFrom);
  // The functions a call may run: a virtual method's override in the class
  // of the object when the call shows it; where it does not, each override
  // the program defines (when few do); else `definition`.
  std::vector<const clang::FunctionDecl*> calledDefinitions(const clang::CallExpr* call,
                                                            const clang::FunctionDecl* definition);
  const clang::CXXRecordDecl* objectClass(const clang::Expr* object);
  // The destructors that run when an object of `record` goes out of scope, its bases' after its own.
  void runDestructor(const clang::CXXRecordDecl* record);
  std::optional<CallContext> userCallContext(const clang::CallExpr* call, const clang::FunctionDecl* callee);
  bool moduleOfUnknownOrigin(const clang::Expr* module);
  const clang::Expr* loopRange(const clang::ValueDecl* variable);
  std::optional<bool> autocastQuery(const clang::Expr* value, const FlowState& state);
  void transferModuleCall(const ModuleCall& module, const clang::CallExpr* call);
  const FunctionResult* analyzeModuleCall(const ModuleCall& module, const clang::Expr* at);
  const FunctionResult* analyzeAutogradApply(const clang::CallExpr* call, const clang::CXXRecordDecl* function);
  void analyzeCustomBackward(const clang::FunctionDecl* backward, const FunctionResult& forward,
                             const clang::CallExpr* call, const clang::CXXRecordDecl* function);

  // Helpers
  // The local struct or struct parameter a member expression reads (ws.proj).
  const clang::ValueDecl* structBase(const clang::MemberExpr* member);
  // The result of a call to a user function, analyzed in this context.
  SourceLocation toLocation(clang::SourceRange range) const;
  Note note(const clang::Expr* e, std::string message) { return Note{loc(e), std::move(message)}; }
  Operand operand(std::string description, const TensorFact& fact);
  bool hasExplicitDtype(const clang::CallExpr* call);
  bool isScaler(clang::QualType type) const { return isScalerType(tu_.scalerApi(), type); }

  TranslationUnitAnalysis& tu_;
  const clang::FunctionDecl* fn_;
  const CallContext& ctx_;
  clang::CFG& cfg_;
  const clang::SourceManager& sm_;
  const clang::LangOptions& lang_;
  FlowState state_;
  const FlowState* branchState_ = nullptr;  // the state a branch condition is read in, when not state_
  FunctionResult result_;
  bool returnsTensor_ = false;  // a return statement of a tensor or module was reached
  ScalerTracking scalers_;
  std::map<const clang::CXXTryStmt*, TryRegion> tries_;
  bool collectingThrows_ = true;  // false once the fixpoint is reached
  std::vector<const clang::CFGBlock*> reopenedHandlers_;  // dispatch blocks whose thrown state grew
};

// Names the variable in an anonymous origin: "'x' became Half here".
TensorFact named(TensorFact fact, const clang::NamedDecl* variable);

}  // namespace dtype_lint::analyzer::flow
