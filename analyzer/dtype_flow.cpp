#include "dtype_flow.h"

#include <fmt/format.h>

#include <deque>
#include <map>
#include <memory>
#include <set>

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "clang/Lex/Lexer.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/scaler_protocol.h"
#include "torch_api.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace {

// ---------------------------------------------------------------------------
// Abstract values

struct TensorFact {
  TensorFact(DtypeSet dtype = DtypeSet::unknown(), std::optional<Note> origin = std::nullopt, bool originNamed = false)
      : dtype(dtype), origin(std::move(origin)), originNamed(originNamed) {}

  DtypeSet dtype;
  std::optional<Note> origin;  // where the dtype was established ("became Half here")
  bool originNamed;            // the origin's message names the variable ("'x' became Half here")
  std::optional<ObjectRef> scaledBy;            // the result of scaler.scale(loss)
  std::optional<ManualScaling> manualScaling;   // loss * K
  const ValueDecl* scalingFactor = nullptr;     // K's variable, when K is one
  bool isGradient = false;                      // p.grad(), p.mutable_grad()

  friend bool operator==(const TensorFact& a, const TensorFact& b) {
    return a.dtype == b.dtype && a.scaledBy.has_value() == b.scaledBy.has_value() &&
           a.manualScaling.has_value() == b.manualScaling.has_value() && a.isGradient == b.isGradient;
  }
};

TensorFact joinFacts(const TensorFact& a, const TensorFact& b) {
  TensorFact out = a;
  out.dtype = a.dtype.join(b.dtype);
  if (a.dtype != b.dtype) out.origin.reset();
  if (!b.scaledBy || b.scaledBy->id != (a.scaledBy ? a.scaledBy->id : 0)) out.scaledBy.reset();
  if (!b.manualScaling || a.scalingFactor != b.scalingFactor) {
    out.manualScaling.reset();
    out.scalingFactor = nullptr;
  }
  out.isGradient = a.isGradient && b.isGradient;
  return out;
}

using ListFact = std::vector<TensorFact>;
// The tensor members of one struct value: cache.feats, ws.proj.
using FieldFacts = std::map<const FieldDecl*, TensorFact>;

// The value of an argument or parameter as far as the analysis follows it.
struct Value {
  enum class Kind { None, Tensor, Module, List, Object, Struct } kind = Kind::None;
  TensorFact fact;  // tensors, and the parameters of modules
  ListFact list;
  ObjectRef object;  // scalers and optimizers, by the caller's identity
  FieldFacts fields;  // the tensor members of a struct
};

// A loss multiplied by hand before backward(), waiting for its gradients to be divided back.
struct PendingManualScaling {
  ManualScaling scaling;
  SourceLocation backwardAt;
};

// The part of the state that outlives a call: autocast and its cache, the
// scaler protocol, manual scaling. Callees start from the caller's and hand
// theirs back.
struct ProcessState {
  AutocastState autocast;
  std::optional<SourceLocation> cacheFilledAt;
  std::optional<SourceLocation> regionLeftAt;
  ScalerProtocol protocol;
  std::map<const ValueDecl*, PendingManualScaling> manualBackwards;  // by the factor's variable

  void join(const ProcessState& other) {
    for (auto [mine, theirs] : {std::pair{&autocast.cpu, &other.autocast.cpu}, std::pair{&autocast.cuda, &other.autocast.cuda}}) {
      if (mine->enabled != theirs->enabled) mine->enabled = Tristate::Unknown;
      mine->dtype = mine->dtype.join(theirs->dtype);
      if (!mine->enabledAt) mine->enabledAt = theirs->enabledAt;
    }
    // The cache is reported only when it is filled on every path (precision first).
    if (!other.cacheFilledAt) cacheFilledAt.reset();
    if (!other.regionLeftAt) regionLeftAt.reset();
    protocol.join(other.protocol);
    for (auto it = manualBackwards.begin(); it != manualBackwards.end();)
      it = other.manualBackwards.count(it->first) ? std::next(it) : manualBackwards.erase(it);
  }
  bool sameAs(const ProcessState& o) const {
    return autocast == o.autocast && cacheFilledAt.has_value() == o.cacheFilledAt.has_value() &&
           regionLeftAt.has_value() == o.regionLeftAt.has_value() && protocol == o.protocol &&
           manualBackwards.size() == o.manualBackwards.size();
  }
  std::string key() const {
    return fmt::format("{}{}{}{}|{}{}|{}|{}", int(autocast.cpu.enabled), autocast.cpu.dtype.toString(),
                       int(autocast.cuda.enabled), autocast.cuda.dtype.toString(), cacheFilledAt.has_value(),
                       regionLeftAt.has_value(), protocol.key(), manualBackwards.size());
  }
};

struct FlowState {
  bool reached = false;
  std::map<const ValueDecl*, TensorFact> tensors;
  std::map<const ValueDecl*, TensorFact> modules;  // the dtype of each module's parameters
  std::map<const ValueDecl*, ListFact> lists;
  std::map<const ValueDecl*, FieldFacts> structs;  // local structs and struct parameters
  ProcessState process;

  template <typename Map, typename Join>
  static void joinMap(Map& into, const Map& other, Join join) {
    for (auto it = into.begin(); it != into.end();) {
      auto found = other.find(it->first);
      if (found == other.end()) {
        it = into.erase(it);  // unknown on the other path
        continue;
      }
      it->second = join(it->second, found->second);
      ++it;
    }
  }

  void join(const FlowState& other) {
    if (!other.reached) return;
    if (!reached) {
      *this = other;
      return;
    }
    joinMap(tensors, other.tensors, joinFacts);
    joinMap(modules, other.modules, joinFacts);
    joinMap(structs, other.structs, [](const FieldFacts& a, const FieldFacts& b) {
      FieldFacts out = a;
      joinMap(out, b, joinFacts);
      return out;
    });
    joinMap(lists, other.lists, [](const ListFact& a, const ListFact& b) {
      ListFact out;
      for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(joinFacts(a[i], b[i]));
      return out;
    });
    process.join(other.process);
  }

  bool sameAs(const FlowState& o) const {
    return reached == o.reached && tensors == o.tensors && modules == o.modules && lists == o.lists &&
           structs == o.structs &&
           process.sameAs(o.process);
  }
};

struct CallContext {
  std::vector<Value> args;
  ProcessState process;
  std::optional<TensorFact> thisModule;  // for member functions of modules
  std::optional<ObjectRef> thisObject;   // the caller's object of a member call
  bool inCustomBackward = false;
  // Called by a scaler's own method under a test of its own state
  // (`if (!unscaled_) unscale_(opt)` in step()): an unscale here is skipped
  // when it was done already.
  bool guardedByScalerState = false;
  std::optional<Note> forwardUnderAutocast;
  ListFact savedVariables;  // what forward saved, for backward
  std::vector<Note> callChain;
  int depth = 0;

  std::string key(const FunctionDecl* fn) const {
    std::string k =
        fmt::format("{}|{}|{}{}|", static_cast<const void*>(fn), process.key(), inCustomBackward, guardedByScalerState);
    if (thisModule) k += "m" + thisModule->dtype.toString();
    if (thisObject) k += fmt::format("t{:x}", thisObject->id);
    for (const Value& v : args) {
      k += fmt::format("{}:{}:{}:{:x};", int(v.kind), v.fact.dtype.toString(), v.list.size(), v.object.id);
      for (const auto& [field, fact] : v.fields) k += fmt::format("{}={},", static_cast<const void*>(field), fact.dtype.toString());
    }
    for (const TensorFact& s : savedVariables) k += s.dtype.toString() + ",";
    return k;
  }
};

struct FunctionResult {
  TensorFact returned{DtypeSet(), std::nullopt};  // bottom until a return is seen
  ListFact savedForBackward;
  std::optional<FieldFacts> returnedFields;  // when a struct is returned
  bool exitReached = false;
  ProcessState exit;
};

// ---------------------------------------------------------------------------
// Translation-unit driver

class FunctionAnalysis;

class TranslationUnitAnalysis {
 public:
  TranslationUnitAnalysis(ASTContext& context, TorchVersion torch, const ScalerApi& api)
      : context_(context), torch_(torch), api_(api) {}

  AnalysisEvents run();
  const FunctionResult* analyze(const FunctionDecl* fn, const CallContext& ctx);

  ASTContext& context() { return context_; }
  TorchVersion torch() const { return torch_; }
  const DtypeFlowRules& rules() const { return rules_; }
  // While any analysis on the stack is still iterating to its fixpoint, what
  // it sees is a subset of the paths: events go to a scratch list.
  void beginSilent() { ++silent_; }
  void endSilent() {
    if (--silent_ == 0) scratch_ = AnalysisEvents{};
  }
  bool recording() const { return silent_ == 0; }
  const ScalerApi& scalerApi() const { return api_; }
  AnalysisEvents& events() { return recording() ? events_ : scratch_; }
  bool analyzable(const FunctionDecl* fn) const {
    return fn && fn->hasBody() && isUserCode(fn->getLocation(), context_.getSourceManager()) &&
           !fn->isDependentContext();
  }

 private:
  CFG* cfgFor(const FunctionDecl* fn);

  ASTContext& context_;
  TorchVersion torch_;
  DtypeFlowRules rules_{torch_};
  const ScalerApi& api_;
  AnalysisEvents events_;
  AnalysisEvents scratch_;
  int silent_ = 0;
  std::map<const FunctionDecl*, std::unique_ptr<CFG>> cfgs_;
  struct Memo {
    FunctionResult result;
    bool silent;  // analyzed while events were not recorded: redo when they are
  };
  std::map<std::string, Memo> memo_;
  std::set<const FunctionDecl*> onStack_;
  std::set<const FunctionDecl*> analyzedOnce_;
  size_t budget_ = 4000;  // callee analyses per translation unit

  friend class FunctionAnalysis;
};

constexpr int kMaxCallDepth = 6;
constexpr int kMaxBlockVisits = 40;

SourceLocation toLocation(SourceRange range, const SourceManager& sm, const LangOptions& lang) {
  SourceLocation out;
  clang::SourceLocation begin = sm.getExpansionLoc(range.getBegin());
  clang::SourceLocation end = sm.getExpansionLoc(range.getEnd());
  if (begin.isInvalid()) return out;
  PresumedLoc b = sm.getPresumedLoc(begin);
  if (b.isInvalid()) return out;
  out.file = b.getFilename();
  out.line = b.getLine();
  out.column = b.getColumn();
  PresumedLoc e = sm.getPresumedLoc(end);
  if (e.isValid() && e.getFileID() == b.getFileID()) {
    out.endLine = e.getLine();
    const unsigned length = Lexer::MeasureTokenLength(end, sm, lang);
    out.endColumn = e.getColumn() + (length > 0 ? length - 1 : 0);
  } else {
    out.endLine = out.line;
    out.endColumn = out.column;
  }
  return out;
}

// T for a call of T::apply(...), where T derives from torch::autograd::Function<T>.
const CXXRecordDecl* autogradFunctionOfApply(const CallExpr* call) {
  const auto* method = dyn_cast_or_null<CXXMethodDecl>(call->getDirectCallee());
  if (!method || !method->getDeclName().isIdentifier() || method->getName() != "apply") return nullptr;
  const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(method->getParent());
  if (!spec || spec->getQualifiedNameAsString() != "torch::autograd::Function" || spec->getTemplateArgs().size() != 1)
    return nullptr;
  return spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
}

// The record behind a value, a pointer or a smart pointer.
const CXXRecordDecl* pointeeRecord(QualType type) {
  type = type.getNonReferenceType().getCanonicalType();
  if (const auto* ptr = type->getAs<PointerType>()) type = ptr->getPointeeType().getCanonicalType();
  const CXXRecordDecl* r = type->getAsCXXRecordDecl();
  if (const auto* spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(r)) {
    const std::string name = spec->getQualifiedNameAsString();
    if ((name == "std::unique_ptr" || name == "std::shared_ptr") && spec->getTemplateArgs().size() >= 1)
      return pointeeRecord(spec->getTemplateArgs()[0].getAsType());
  }
  return r;
}

bool named(const std::vector<std::string>& names, llvm::StringRef name) {
  return std::find(names.begin(), names.end(), name.str()) != names.end();
}

// Looks through wrappers and converting constructions (double -> c10::Scalar).
const Expr* ignoreConversions(const Expr* e) {
  for (e = ignoreWrappers(e); const auto* construct = dyn_cast_or_null<CXXConstructExpr>(e);
       e = ignoreWrappers(construct->getArg(0)))
    if (construct->getNumArgs() != 1) break;
  return e;
}

// A numeric constant: a literal, a constant expression, or a local initialized with one.
std::optional<double> numericConstant(const Expr* e, ASTContext& context) {
  e = ignoreConversions(e);
  Expr::EvalResult result;
  if (!e->isValueDependent() && e->EvaluateAsRValue(result, context)) {
    if (result.Val.isInt()) return double(result.Val.getInt().getSExtValue());
    if (result.Val.isFloat()) return result.Val.getFloat().convertToDouble();
  }
  if (const auto* ref = dyn_cast<DeclRefExpr>(e))
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->isLocalVarDecl() && var->getInit())
      return numericConstant(var->getInit(), context);
  return std::nullopt;
}

// The variable an expression names, looking through casts and member access.
const ValueDecl* referencedVariable(const Expr* e) {
  e = ignoreConversions(e);
  if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(e)) return ref->getDecl();
  if (const auto* member = dyn_cast_or_null<MemberExpr>(e)) return member->getMemberDecl();
  return nullptr;
}

// ---------------------------------------------------------------------------
// One function in one context

class FunctionAnalysis {
 public:
  FunctionAnalysis(TranslationUnitAnalysis& tu, const FunctionDecl* fn, const CallContext& ctx, CFG& cfg)
      : tu_(tu), fn_(fn), ctx_(ctx), cfg_(cfg), sm_(tu.context().getSourceManager()),
        lang_(tu.context().getLangOpts()) {}

  FunctionResult run();

 private:
  // Transfer functions
  void transfer(const CFGElement& element);
  void transferStmt(const Stmt* s);
  void transferCall(const CallExpr* call);
  void transferConstruct(const CXXConstructExpr* construct);
  void transferUserCall(const FunctionDecl* callee, const CallContext& calleeCtx);
  void applyCalleeExit(const FunctionResult& result);
  void assign(const Expr* lhs, const Expr* rhs, const Expr* at);
  void bindVariable(const VarDecl* var, const Expr* init);
  void handleAutocastCall(const FunctionDecl* fn, const CallExpr* call);
  void emitOp(const std::string& op, const Expr* at, std::vector<const Expr*> inputs,
              const Expr* destination, bool explicitDtype, bool reducesAllDims);
  void emitModuleCall(const std::string& op, const Expr* at, const Expr* input, const Expr* moduleExpr);
  void endPathIfItRaises(const OpEvent& event, const Expr* at);

  // Exceptions. Clang's CFG has no edges into catch handlers, so the state a
  // handler starts from is collected here: the join of the states before each
  // call in its try block.
  struct TryRegion {
    const CFGBlock* dispatch = nullptr;  // the block whose successors are the handlers
    FlowState thrown;
  };
  void findTryRegions();
  const CXXTryStmt* enclosingTry(const Stmt* s);
  bool underTestOfOwnMembers(const Stmt* s);
  void noteThrowPoint(const CFGElement& element);
  void transferBlock(const CFGBlock& block);

  // Evaluation (pure: never changes the state or emits events)
  TensorFact evalTensor(const Expr* e);
  TensorFact evalCallResult(const CallExpr* call);
  TensorFact evalModule(const Expr* e);
  ListFact evalList(const Expr* e);
  std::optional<TensorFact> evalDtypeArgument(const Expr* e);
  Value evalValue(const Expr* e, QualType paramType);
  TensorFact opResult(std::string_view op, const std::vector<TensorFact>& inputs, const Expr* at);
  // loss * K: the dtype is the tensor's; DL203 remembers K.
  TensorFact scaledByScalar(TensorFact tensor, const Expr* factor, const Expr* at);
  std::optional<TensorFact> autocastResult(std::string_view op, const std::vector<TensorFact>& inputs, const Expr* at);

  // Calls the analysis follows into
  std::optional<CallContext> userCallContext(const CallExpr* call, const FunctionDecl* callee);
  const FunctionDecl* moduleForward(const CXXRecordDecl* impl);
  // fc(x), fc->forward(x), model(x): a module applied to tensors.
  struct ModuleCall {
    const CXXRecordDecl* impl = nullptr;
    const Expr* module = nullptr;
    std::vector<const Expr*> args;
    std::string op;  // the ATen op of a built-in module; empty for user modules
  };
  std::optional<ModuleCall> asModuleCall(const CallExpr* call);
  void transferModuleCall(const ModuleCall& module, const CallExpr* call);
  const FunctionResult* analyzeModuleCall(const ModuleCall& module, const Expr* at);
  const FunctionResult* analyzeAutogradApply(const CallExpr* call, const CXXRecordDecl* function);

  // Gradient scaler protocol (DL2xx), manual scaling (DL203), optimizer eps (DL304)
  enum class ScalerCall { None, Scale, Unscale, Step, Update };
  bool isScalerType(QualType type) const;
  ScalerCall scalerCall(const std::string& method) const;
  ObjectRef objectRef(const Expr* e);
  bool transferScalerCall(const CXXMemberCallExpr* call, const std::string& name);
  bool transferOptimizerCall(const CXXMemberCallExpr* call, const std::string& name);
  bool transferRawAmpOp(const CallExpr* call, const std::string& name);
  void transferAnnotation(const CallExpr* call, const std::string& name);
  void transferClip(const CallExpr* call);
  void transferBackward(const Expr* loss, const Expr* at);
  void checkGradientsDividedBack(const Expr* gradient, const Expr* divisor, bool reciprocal, const Expr* at);
  void declareScalerOrOptimizer(const VarDecl* var, const Expr* init);
  void refreshOptimizerDtype(const ObjectRef& optimizer);
  std::optional<ObjectRef> optimizerOfFunction();
  std::optional<SourceLocation> bfloat16AutocastAt() const;
  std::vector<Finding>& findings() { return tu_.events().protocolFindings; }

  // Helpers
  const ValueDecl* declOf(const Expr* e);
  // The local struct or struct parameter a member expression reads (ws.proj).
  const ValueDecl* structBase(const MemberExpr* member);
  // The result of a call to a user function, analyzed in this context.
  const FunctionResult* userCallResult(const Expr* e);
  const Expr* moduleObject(const Expr* e);
  std::string describe(const Expr* e);
  SourceLocation loc(const Expr* e) { return toLocation(e->getSourceRange(), sm_, lang_); }
  Note note(const Expr* e, std::string message) { return Note{loc(e), std::move(message)}; }
  Operand operand(std::string description, const TensorFact& fact);
  std::vector<const Expr*> tensorArgs(const CallExpr* call, unsigned first = 0);
  bool hasExplicitDtype(const CallExpr* call);
  static std::string calleeName(const CallExpr* call);

  TranslationUnitAnalysis& tu_;
  const FunctionDecl* fn_;
  const CallContext& ctx_;
  CFG& cfg_;
  const SourceManager& sm_;
  const LangOptions& lang_;
  FlowState state_;
  FunctionResult result_;
  std::map<const CXXTryStmt*, TryRegion> tries_;
  bool collectingThrows_ = true;                // false once the fixpoint is reached
  std::vector<const CFGBlock*> reopenedHandlers_;  // dispatch blocks whose thrown state grew
  std::map<const ValueDecl*, ObjectRef> aliases_;  // parameters naming the caller's scalers and optimizers
};

// ---- helpers --------------------------------------------------------------

std::string FunctionAnalysis::calleeName(const CallExpr* call) {
  const FunctionDecl* fn = call->getDirectCallee();
  if (!fn || !fn->getDeclName().isIdentifier()) return "";
  return fn->getName().str();
}

const ValueDecl* FunctionAnalysis::declOf(const Expr* e) {
  e = ignoreWrappers(e);
  if (!e) return nullptr;
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) return ref->getDecl();
  if (const auto* member = dyn_cast<MemberExpr>(e)) {
    // Fields of this object, or of a module reached through a holder.
    return dyn_cast<FieldDecl>(member->getMemberDecl());
  }
  return nullptr;
}

const ValueDecl* FunctionAnalysis::structBase(const MemberExpr* member) {
  const Expr* base = ignoreWrappers(member->getBase());
  const auto* ref = dyn_cast<DeclRefExpr>(base);
  if (!ref || !isa<VarDecl>(ref->getDecl())) return nullptr;
  const QualType type = ref->getDecl()->getType().getNonReferenceType();
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record || isTensorType(type) || moduleImplClass(type) || isOptimizerType(type) || isScalerType(type))
    return nullptr;
  return ref->getDecl();
}

const FunctionResult* FunctionAnalysis::userCallResult(const Expr* e) {
  const auto* call = dyn_cast_or_null<CallExpr>(ignoreWrappers(e));
  const FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
  const FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
  if (!def || !tu_.analyzable(def)) return nullptr;
  auto c = userCallContext(call, def);
  return c ? tu_.analyze(def, *c) : nullptr;
}

// `model->x`, `(*model).x`, `model.get()->x`: the expression naming the module.
const Expr* FunctionAnalysis::moduleObject(const Expr* e) {
  e = ignoreWrappers(e);
  if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(e);
      op && (op->getOperator() == OO_Arrow || op->getOperator() == OO_Star))
    return moduleObject(op->getArg(0));
  if (const auto* unary = dyn_cast_or_null<UnaryOperator>(e); unary && unary->getOpcode() == UO_Deref)
    return moduleObject(unary->getSubExpr());
  if (const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(e);
      call && call->getMethodDecl() && call->getMethodDecl()->getName() == "get")
    return moduleObject(call->getImplicitObjectArgument());
  return e;
}

std::string FunctionAnalysis::describe(const Expr* e) {
  e = ignoreWrappers(e);
  CharSourceRange range = sm_.getExpansionRange(e->getSourceRange());
  std::string text = Lexer::getSourceText(range, sm_, lang_).str();
  std::string collapsed;
  for (char c : text) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !collapsed.empty() && collapsed.back() == ' ') continue;
    collapsed += c;
  }
  if (collapsed.size() > 48) collapsed = collapsed.substr(0, 45) + "...";
  return "'" + collapsed + "'";
}

Operand FunctionAnalysis::operand(std::string description, const TensorFact& fact) {
  Operand out{std::move(description), fact.dtype, fact.origin};
  if (fact.origin && !fact.originNamed) out.origin->message = out.description + " " + fact.origin->message;
  return out;
}

// Names the variable in an anonymous origin: "'x' became Half here".
TensorFact named(TensorFact fact, const NamedDecl* variable) {
  if (fact.origin && !fact.originNamed) {
    fact.origin->message = "'" + variable->getNameAsString() + "' " + fact.origin->message;
    fact.originNamed = true;
  }
  return fact;
}

std::vector<const Expr*> FunctionAnalysis::tensorArgs(const CallExpr* call, unsigned first) {
  std::vector<const Expr*> out;
  for (unsigned i = first; i < call->getNumArgs(); ++i) {
    const Expr* arg = ignoreWrappers(call->getArg(i));
    if (isa<CXXDefaultArgExpr>(arg)) continue;
    if (isTensorType(arg->getType())) {
      out.push_back(arg);
      continue;
    }
    // {a, b} for TensorList parameters.
    const Expr* list = arg;
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(list)) list = ignoreWrappers(std->getSubExpr());
    if (const auto* construct = dyn_cast<CXXConstructExpr>(list); construct && construct->getNumArgs() >= 1)
      list = ignoreWrappers(construct->getArg(0));
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(list)) list = ignoreWrappers(std->getSubExpr());
    if (const auto* init = dyn_cast<InitListExpr>(list))
      for (const Expr* element : init->inits())
        if (isTensorType(element->getType())) out.push_back(ignoreWrappers(element));
  }
  return out;
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

// ---- evaluation -------------------------------------------------------------

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
  if (const auto* call = dyn_cast<CallExpr>(e)) {
    const std::string name = calleeName(call);
    if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
      const Expr* object = ignoreWrappers(member->getImplicitObjectArgument());
      // x.dtype(), x.scalar_type(), x.options()
      if (isTensorType(object->getType()) && (name == "dtype" || name == "scalar_type" || name == "options")) {
        TensorFact f = evalTensor(object);
        return f;
      }
      // TensorOptions().dtype(kHalf).device(...): the innermost dtype() wins.
      if (isTensorOptionsType(object->getType()) || isTensorOptionsType(call->getType())) {
        if (name == "dtype" && call->getNumArgs() == 1) return evalDtypeArgument(call->getArg(0));
        if (name == "dtype" && call->getNumArgs() == 0) return std::nullopt;
        return evalDtypeArgument(object);
      }
      if (name == "value" || name == "toScalarType") return evalDtypeArgument(object);
    }
    // torch::dtype(kHalf), at::device(kCUDA).dtype(...)
    if (name == "dtype" && call->getNumArgs() == 1) return evalDtypeArgument(call->getArg(0));
    if (name == "typeMetaToScalarType" || name == "scalarTypeToTypeMeta") return evalDtypeArgument(call->getArg(0));
    if (isTensorOptionsType(call->getType())) return std::nullopt;  // torch::device(...), requires_grad()
    if (isScalarTypeType(call->getType())) return TensorFact{};
    return std::nullopt;
  }
  const bool dtypeValued = isScalarTypeType(e->getType()) || isTensorOptionsType(e->getType());
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
    // A local options or dtype variable: auto opts = torch::TensorOptions().dtype(torch::kHalf);
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->getInit() && var->hasLocalStorage() &&
                                                              !isa<ParmVarDecl>(var) && dtypeValued)
      return evalDtypeArgument(var->getInit());
  }
  // Options or a dtype the analysis cannot see into (a parameter, a member):
  // some dtype, unknown which.
  if (dtypeValued) return TensorFact{};
  return std::nullopt;
}

TensorFact FunctionAnalysis::evalModule(const Expr* e) {
  e = moduleObject(e);
  if (!e) return {};
  if (const ValueDecl* d = declOf(e)) {
    if (auto it = state_.modules.find(d); it != state_.modules.end()) return it->second;
    // model->fc1: a submodule shares its parent's dtype.
    if (const auto* member = dyn_cast<MemberExpr>(e);
        member && !isa<CXXThisExpr>(member->getBase()->IgnoreImpCasts()) && moduleImplClass(member->getBase()->getType()))
      return evalModule(member->getBase());
    // Submodules of the module whose member function this is share its dtype.
    if (isa<FieldDecl>(d) && ctx_.thisModule) return *ctx_.thisModule;
    return {};
  }
  if (const auto* member = dyn_cast<MemberExpr>(e)) return evalModule(member->getBase());
  if (isa<CXXThisExpr>(e) && ctx_.thisModule) return *ctx_.thisModule;
  return {};
}

ListFact FunctionAnalysis::evalList(const Expr* e) {
  e = ignoreWrappers(e);
  if (const ValueDecl* d = declOf(e))
    if (auto it = state_.lists.find(d); it != state_.lists.end()) return it->second;
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(e)) {
    if (calleeName(member) == "get_saved_variables") return ctx_.savedVariables;
  }
  return {};
}

TensorFact FunctionAnalysis::evalTensor(const Expr* e) {
  e = ignoreWrappers(e);
  if (!e) return {};
  if (const auto* cond = dyn_cast<ConditionalOperator>(e))
    return joinFacts(evalTensor(cond->getTrueExpr()), evalTensor(cond->getFalseExpr()));
  if (const auto* member = dyn_cast<MemberExpr>(e))
    if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl()))
      if (const ValueDecl* base = structBase(member))
        if (auto it = state_.structs.find(base); it != state_.structs.end()) {
          auto fact = it->second.find(field);
          return fact != it->second.end() ? fact->second : TensorFact{};
        }
  if (const ValueDecl* d = declOf(e)) {
    if (auto it = state_.tensors.find(d); it != state_.tensors.end()) return it->second;
    // fc->weight, fc->bias: the module's parameter dtype.
    if (const auto* member = dyn_cast<MemberExpr>(e)) {
      const Expr* base = member->getBase();
      if (moduleImplClass(base->getType()) || moduleImplClass(ignoreWrappers(base)->getType()))
        return evalModule(base);
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
  for (auto [device, autocast] : {std::pair{Device::CPU, &state_.process.autocast.cpu}, std::pair{Device::CUDA, &state_.process.autocast.cuda}}) {
    if (autocast->enabled == Tristate::Off) continue;
    const AutocastPolicy policy = autocastPolicy(op, device, tu_.torch());
    if (policy == AutocastPolicy::None) continue;
    if (autocast->enabled == Tristate::Unknown) return TensorFact{};
    bool floating = true;
    for (const TensorFact& f : inputs) floating = floating && (f.dtype.allFloating() || f.dtype.isUnknown());
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
  if (auto cast = autocastResult(op, inputs, at)) return *cast;
  if (returnsBool(op)) return TensorFact{DtypeSet(ScalarType::Bool), std::nullopt};
  if (returnsLong(op)) return TensorFact{DtypeSet(ScalarType::Int64), std::nullopt};
  if (inputs.empty()) return {};
  if (isMatmulFamily(op) || promotesOperands(op)) {
    TensorFact out = inputs.front();
    for (size_t i = 1; i < inputs.size(); ++i) {
      DtypeSet promoted = out.dtype.promoteWith(inputs[i].dtype);
      out = promoted == inputs[i].dtype && promoted != out.dtype ? inputs[i] : TensorFact{promoted, out.origin};
    }
    return out;
  }
  if (preservesDtype(op) || isPrecisionSensitive(op) || inPlaceBase(op)) return inputs.front();
  return {};
}

TensorFact FunctionAnalysis::scaledByScalar(TensorFact tensor, const Expr* factor, const Expr* at) {
  ManualScaling scaling;
  scaling.multipliedAt = loc(at);
  const auto value = numericConstant(factor, tu_.context());
  const ValueDecl* variable = referencedVariable(factor);
  scaling.largeConstant = value && *value >= kLargeLossScale;
  scaling.namedAsScale = variable && llvm::StringRef(variable->getName()).contains_insensitive("scale");
  scaling.factor = value && !variable ? fmt::format("{:g}", *value) : describe(factor);
  tensor.manualScaling = scaling;
  tensor.scalingFactor = variable;
  tensor.scaledBy.reset();
  tensor.isGradient = false;
  return tensor;
}

TensorFact FunctionAnalysis::evalCallResult(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  const std::string name = calleeName(call);

  if (auto module = asModuleCall(call)) {
    if (module->args.empty()) return {};
    if (module->op.empty()) {
      const FunctionResult* r = analyzeModuleCall(*module, call);
      return r ? r->returned : TensorFact{};
    }
    std::vector<TensorFact> inputs;
    for (const Expr* arg : module->args) inputs.push_back(evalTensor(arg));
    if (isMatmulFamily(module->op)) inputs = {inputs.front(), evalModule(module->module)};
    return opResult(module->op, inputs, call);
  }

  // Operators on tensors: a + b, a * 2, saved[0].
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    const OverloadedOperatorKind kind = op->getOperator();
    if (kind == OO_Subscript) {
      if (isTensorType(op->getArg(0)->getType())) return evalTensor(op->getArg(0));  // x[0] keeps x's dtype
      ListFact list = evalList(op->getArg(0));
      if (auto index = op->getArg(1)->getIntegerConstantExpr(tu_.context());
          index && index->getExtValue() >= 0 && size_t(index->getExtValue()) < list.size())
        return list[size_t(index->getExtValue())];
      return {};
    }
    if (kind == OO_Call) return {};
    static const std::map<OverloadedOperatorKind, std::string_view> kArithmetic = {
        {OO_Plus, "add"}, {OO_Minus, "sub"}, {OO_Star, "mul"}, {OO_Slash, "div"}};
    if (kind == OO_Star && op->getNumArgs() == 2 &&
        isTensorType(op->getArg(0)->getType()) != isTensorType(op->getArg(1)->getType())) {
      const bool tensorFirst = isTensorType(op->getArg(0)->getType());
      return scaledByScalar(evalTensor(op->getArg(tensorFirst ? 0 : 1)), op->getArg(tensorFirst ? 1 : 0), call);
    }
    if (auto it = kArithmetic.find(kind); it != kArithmetic.end()) {
      std::vector<TensorFact> inputs;
      for (const Expr* arg : op->arguments())
        if (isTensorType(arg->getType())) inputs.push_back(evalTensor(arg));
      if (kind == OO_Minus && op->getNumArgs() == 1) return inputs.empty() ? TensorFact{} : inputs.front();
      return opResult(it->second, inputs, call);
    }
    if (kind == OO_PlusEqual || kind == OO_MinusEqual || kind == OO_StarEqual || kind == OO_SlashEqual ||
        kind == OO_Equal)
      return evalTensor(op->getArg(0));
    return {};
  }

  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    const Expr* object = ignoreWrappers(member->getImplicitObjectArgument());
    const bool scales = (isScalerType(object->getType()) && scalerCall(name) == ScalerCall::Scale) ||
                        (!isTensorType(object->getType()) && announcesScale(member->getMethodDecl()));
    if (scales && call->getNumArgs() >= 1) {
      TensorFact scaled = evalTensor(call->getArg(0));
      scaled.scaledBy = objectRef(object);
      scaled.manualScaling.reset();
      return scaled;
    }
    if (isTensorType(object->getType()) && !(object->getType()->isPointerType())) {
      TensorFact self = evalTensor(object);
      if (name == "grad" || name == "mutable_grad") {
        self.isGradient = true;
        return self;
      }
      if (name == "mul" && call->getNumArgs() == 1 && !isTensorType(call->getArg(0)->getType()))
        return scaledByScalar(self, call->getArg(0), call);
      if (name == "to" || name == "type" || name == "toType" || name == "type_as") {
        for (const Expr* arg : call->arguments()) {
          if (isa<CXXDefaultArgExpr>(ignoreWrappers(arg))) continue;
          if (isTensorType(arg->getType())) return evalTensor(arg);  // x.to(other), x.type_as(other)
          if (auto d = evalDtypeArgument(arg)) return d->dtype.isUnknown() ? TensorFact{} : *d;
        }
        return self;  // x.to(device)
      }
      if (name == "item" || name == "size" || name == "dim") return {};
      if (hasExplicitDtype(call)) {
        for (const Expr* arg : call->arguments())
          if (auto d = evalDtypeArgument(arg); d && !d->dtype.isUnknown()) return *d;
      }
      std::vector<TensorFact> inputs{self};
      for (const Expr* arg : tensorArgs(call)) inputs.push_back(evalTensor(arg));
      return opResult(name, inputs, call);
    }
  }

  if (const CXXRecordDecl* function = autogradFunctionOfApply(call)) {
    if (const FunctionResult* r = analyzeAutogradApply(call, function)) return r->returned;
    return {};
  }

  if (callee && isTorchFunction(callee)) {
    // Factories: torch::randn({2, 3}, torch::kHalf), torch::zeros_like(x)
    const FactoryKind factory = factoryKind(name);
    if (factory != FactoryKind::NotFactory) {
      for (const Expr* arg : call->arguments())
        if (!isTensorType(arg->getType()))
          if (auto d = evalDtypeArgument(arg)) {
            if (d->dtype.isUnknown()) return {};
            if (d->origin) d->origin->message = fmt::format("created as {} here", d->dtype.toString());
            return *d;
          }
      switch (factory) {
        case FactoryKind::DefaultFloat:
          return TensorFact{DtypeSet(ScalarType::Float), Note{loc(call), "created as Float here"}};
        case FactoryKind::Long: return TensorFact{DtypeSet(ScalarType::Int64), std::nullopt};
        case FactoryKind::Like: return call->getNumArgs() ? evalTensor(call->getArg(0)) : TensorFact{};
        case FactoryKind::NotFactory: break;
      }
    }
    if (hasExplicitDtype(call))
      for (const Expr* arg : call->arguments())
        if (auto d = evalDtypeArgument(arg); d && !d->dtype.isUnknown()) return *d;
    std::vector<TensorFact> inputs;
    for (const Expr* arg : tensorArgs(call)) inputs.push_back(evalTensor(arg));
    return opResult(atenOpName(callee), inputs, call);
  }

  // A user function: its result in this context.
  if (callee && tu_.analyzable(callee->getDefinition() ? callee->getDefinition() : callee)) {
    const FunctionDecl* def = callee->getDefinition();
    if (auto calleeCtx = userCallContext(call, def))
      if (const FunctionResult* r = tu_.analyze(def, *calleeCtx)) return r->returned;
  }
  return {};
}

Value FunctionAnalysis::evalValue(const Expr* e, QualType paramType) {
  Value v;
  if (isTensorListType(paramType)) {
    v.kind = Value::Kind::List;
    v.list = evalList(e);
  } else if (isTensorType(paramType)) {
    v.kind = Value::Kind::Tensor;
    v.fact = evalTensor(e);
  } else if (moduleImplClass(paramType)) {
    v.kind = Value::Kind::Module;
    v.fact = evalModule(e);
  } else if (isScalerType(paramType) || isOptimizerType(paramType)) {
    v.kind = Value::Kind::Object;
    v.object = objectRef(e);
  } else if (const ValueDecl* d = declOf(e)) {
    if (auto it = state_.structs.find(d); it != state_.structs.end()) {
      v.kind = Value::Kind::Struct;
      v.fields = it->second;
    }
  }
  return v;
}

// ---- calls the analysis follows ---------------------------------------------

std::optional<CallContext> FunctionAnalysis::userCallContext(const CallExpr* call, const FunctionDecl* callee) {
  if (!callee || ctx_.depth >= kMaxCallDepth) return std::nullopt;
  CallContext c;
  c.process = state_.process;
  c.depth = ctx_.depth + 1;
  c.inCustomBackward = ctx_.inCustomBackward;
  c.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  c.callChain = ctx_.callChain;
  c.callChain.insert(c.callChain.begin(),
                     note(call, fmt::format("in the call to '{}' from here", callee->getNameAsString())));
  unsigned firstArg = isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(callee) ? 1 : 0;
  for (unsigned i = 0; i < callee->getNumParams(); ++i) {
    const unsigned argIndex = i + firstArg;
    c.args.push_back(argIndex < call->getNumArgs() ? evalValue(call->getArg(argIndex), callee->getParamDecl(i)->getType())
                                                   : Value{});
  }
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    if (moduleImplClass(member->getImplicitObjectArgument()->getType()))
      c.thisModule = evalModule(member->getImplicitObjectArgument());
    else if (!isa<CXXThisExpr>(member->getImplicitObjectArgument()->IgnoreImpCasts()))
      c.thisObject = objectRef(member->getImplicitObjectArgument());
    else
      c.thisObject = ctx_.thisObject;
  }
  c.guardedByScalerState = ctx_.guardedByScalerState;
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call);
      member && isa<CXXThisExpr>(member->getImplicitObjectArgument()->IgnoreImpCasts()) && underTestOfOwnMembers(call))
    c.guardedByScalerState = true;
  if (!c.thisModule && isa<CXXMethodDecl>(callee) && ctx_.thisModule &&
      cast<CXXMethodDecl>(callee)->getParent() == dyn_cast<CXXMethodDecl>(fn_)->getParent())
    c.thisModule = ctx_.thisModule;
  return c;
}

const FunctionDecl* FunctionAnalysis::moduleForward(const CXXRecordDecl* impl) {
  for (const CXXMethodDecl* method : impl->methods())
    if (method->getDeclName().isIdentifier() && method->getName() == "forward" && method->hasBody())
      return method->getDefinition();
  return nullptr;
}

std::optional<FunctionAnalysis::ModuleCall> FunctionAnalysis::asModuleCall(const CallExpr* call) {
  ModuleCall out;
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() == OO_Call) {
    out.module = op->getArg(0);
    out.args = tensorArgs(op, 1);
  } else if (const auto* member = dyn_cast<CXXMemberCallExpr>(call); member && calleeName(call) == "forward") {
    out.module = member->getImplicitObjectArgument();
    out.args = tensorArgs(call);
  } else {
    return std::nullopt;
  }
  out.impl = moduleImplClass(out.module->getType());
  if (!out.impl) return std::nullopt;
  out.op = builtinModuleOp(out.impl);
  if (out.op.empty() && !isUserModule(out.impl)) return std::nullopt;  // built-in modules not modeled
  return out;
}

void FunctionAnalysis::transferModuleCall(const ModuleCall& module, const CallExpr* call) {
  if (module.args.empty()) return;
  if (module.op.empty()) {
    if (const FunctionResult* r = analyzeModuleCall(module, call)) applyCalleeExit(*r);
    return;
  }
  if (isMatmulFamily(module.op)) return emitModuleCall(module.op, call, module.args.front(), module.module);
  // Norm and loss modules: the op runs on the inputs.
  emitOp(module.op, call, module.args, nullptr, false, false);
}

void FunctionAnalysis::applyCalleeExit(const FunctionResult& r) {
  // Helpers, forwards and RAII guards that switch autocast, clear its cache or drive the scaler.
  if (r.exitReached) state_.process = r.exit;
}

const FunctionResult* FunctionAnalysis::analyzeModuleCall(const ModuleCall& module, const Expr* at) {
  const CXXRecordDecl* impl = module.impl;
  const Expr* moduleExpr = module.module;
  const std::vector<const Expr*>& args = module.args;
  if (!isUserModule(impl) || ctx_.depth >= kMaxCallDepth) return nullptr;
  const FunctionDecl* forward = moduleForward(impl);
  if (!tu_.analyzable(forward)) return nullptr;
  CallContext c;
  c.process = state_.process;
  c.depth = ctx_.depth + 1;
  c.thisModule = evalModule(moduleExpr);
  c.callChain = ctx_.callChain;
  c.callChain.insert(c.callChain.begin(), note(at, fmt::format("in the call to module {} from here", describe(moduleExpr))));
  size_t next = 0;
  for (unsigned i = 0; i < forward->getNumParams(); ++i) {
    Value v;
    if (isTensorType(forward->getParamDecl(i)->getType()) && next < args.size()) {
      v.kind = Value::Kind::Tensor;
      v.fact = evalTensor(args[next++]);
    }
    c.args.push_back(v);
  }
  return tu_.analyze(forward, c);
}

const FunctionResult* FunctionAnalysis::analyzeAutogradApply(const CallExpr* call, const CXXRecordDecl* function) {
  if (!isCustomAutogradFunction(function) || ctx_.depth >= kMaxCallDepth) return nullptr;
  const FunctionDecl* forward = nullptr;
  const FunctionDecl* backward = nullptr;
  for (const CXXMethodDecl* m : function->methods()) {
    if (!m->getDeclName().isIdentifier() || !m->hasBody()) continue;
    if (m->getName() == "forward") forward = m->getDefinition();
    if (m->getName() == "backward") backward = m->getDefinition();
  }
  if (!tu_.analyzable(forward)) return nullptr;
  CallContext fwd;
  fwd.process = state_.process;
  fwd.depth = ctx_.depth + 1;
  fwd.callChain = ctx_.callChain;
  fwd.callChain.insert(fwd.callChain.begin(),
                       note(call, fmt::format("in '{}::forward' called from here", function->getName().str())));
  // forward(AutogradContext* ctx, args...): apply's arguments start at the second parameter.
  fwd.args.push_back(Value{});
  for (unsigned i = 1; i < forward->getNumParams(); ++i)
    fwd.args.push_back(i - 1 < call->getNumArgs() ? evalValue(call->getArg(i - 1), forward->getParamDecl(i)->getType())
                                                  : Value{});
  const FunctionResult* forwardResult = tu_.analyze(forward, fwd);
  if (!forwardResult) return nullptr;
  if (tu_.analyzable(backward)) {
    CallContext bwd;
    bwd.depth = ctx_.depth + 1;
    bwd.inCustomBackward = true;
    bwd.process.autocast.cpu.enabled = bwd.process.autocast.cuda.enabled = Tristate::Off;
    if (state_.process.autocast.anyOn())
      bwd.forwardUnderAutocast = note(call, fmt::format("'{}::forward' ran under autocast from here", function->getName().str()));
    bwd.savedVariables = forwardResult->savedForBackward;
    bwd.callChain = ctx_.callChain;
    bwd.args.push_back(Value{});
    Value grads;
    grads.kind = Value::Kind::List;
    grads.list.push_back(forwardResult->returned.dtype.isBottom() ? TensorFact{} : forwardResult->returned);
    if (grads.list.front().origin) grads.list.front().origin->message = "(the gradient of forward's output) " + grads.list.front().origin->message;
    bwd.args.push_back(grads);
    tu_.analyze(backward, bwd);
  }
  return forwardResult;
}

// ---- gradient scaler protocol ----------------------------------------------------

bool FunctionAnalysis::isScalerType(QualType type) const {
  const CXXRecordDecl* r = pointeeRecord(type);
  return r && r->getDeclName().isIdentifier() && named(tu_.scalerApi().classes, r->getName());
}

FunctionAnalysis::ScalerCall FunctionAnalysis::scalerCall(const std::string& method) const {
  const ScalerApi& api = tu_.scalerApi();
  if (named(api.scale, method)) return ScalerCall::Scale;
  if (named(api.unscale, method)) return ScalerCall::Unscale;
  if (named(api.step, method)) return ScalerCall::Step;
  if (named(api.update, method)) return ScalerCall::Update;
  return ScalerCall::None;
}

// Id 0 is an object the analysis cannot tell apart from others (an element of
// a container, a reference member): the protocol follows no transition on it.
ObjectRef FunctionAnalysis::objectRef(const Expr* e) {
  e = moduleObject(e);
  if (const auto* addressOf = dyn_cast_or_null<UnaryOperator>(e); addressOf && addressOf->getOpcode() == UO_AddrOf)
    e = moduleObject(addressOf->getSubExpr());
  const ValueDecl* d = declOf(e);
  if (!d) return ObjectRef{0, describe(e)};
  if (auto it = aliases_.find(d); it != aliases_.end()) return it->second;
  if (const auto* var = dyn_cast<VarDecl>(d)) {
    if (var->isCXXForRangeDecl()) return ObjectRef{0, describe(e)};
    // A local reference or pointer: auto& opt = *optimizer; auto* s = &scaler;
    if (var->getType()->isReferenceType() || var->getType()->isPointerType())
      return var->getInit() && !isa<ParmVarDecl>(var) ? objectRef(var->getInit()) : ObjectRef{isa<ParmVarDecl>(var) ? reinterpret_cast<uintptr_t>(var) : 0, describe(e)};
  }
  if (isa<FieldDecl>(d) && d->getType()->isReferenceType()) return ObjectRef{0, describe(e)};
  return ObjectRef{reinterpret_cast<uintptr_t>(d->getCanonicalDecl()), "'" + d->getNameAsString() + "'"};
}

std::optional<SourceLocation> FunctionAnalysis::bfloat16AutocastAt() const {
  std::optional<SourceLocation> at;
  for (const DeviceAutocast* device : {&state_.process.autocast.cpu, &state_.process.autocast.cuda}) {
    if (device->enabled != Tristate::On) continue;
    if (device->dtype.single() != ScalarType::BFloat16) return std::nullopt;
    at = device->enabledAt;
  }
  return at;
}

void FunctionAnalysis::refreshOptimizerDtype(const ObjectRef& optimizer) {
  // model->to(kHalf) after the optimizer was built converts the same parameters.
  const OptimizerFacts* facts = state_.process.protocol.optimizer(optimizer.id);
  if (!facts || !facts->module) return;
  for (const auto& [decl, fact] : state_.modules)
    if (reinterpret_cast<uintptr_t>(decl->getCanonicalDecl()) == facts->module && fact.dtype != facts->parameterDtype)
      state_.process.protocol.declareOptimizer(optimizer, fact.dtype, fact.origin, facts->module);
}

bool FunctionAnalysis::transferScalerCall(const CXXMemberCallExpr* call, const std::string& name) {
  const Expr* object = call->getImplicitObjectArgument();
  if (!isScalerType(object->getType())) return false;
  const ObjectRef scaler = objectRef(object);
  ScalerProtocol& protocol = state_.process.protocol;
  auto optimizerArg = [&]() -> std::optional<ObjectRef> {
    for (const Expr* arg : call->arguments())
      if (isOptimizerType(arg->getType())) {
        ObjectRef optimizer = objectRef(arg);
        if (optimizer.id && scaler.id) return optimizer;
      }
    return std::nullopt;
  };
  switch (scalerCall(name)) {
    case ScalerCall::Scale:
      checkScalerWithBFloat16(scaler, loc(call), bfloat16AutocastAt(), findings());
      if (call->getNumArgs() >= 1)
        if (TensorFact loss = evalTensor(call->getArg(0)); loss.manualScaling)
          checkScalingInsideScaler(*loss.manualScaling, loc(call), findings());
      return true;
    case ScalerCall::Unscale:
      if (auto optimizer = optimizerArg()) {
        refreshOptimizerDtype(*optimizer);
        protocol.unscale(scaler, *optimizer, loc(call), findings());
      }
      return true;
    case ScalerCall::Step:
      if (auto optimizer = optimizerArg()) {
        refreshOptimizerDtype(*optimizer);
        protocol.step(scaler, *optimizer, loc(call), findings());
      } else if (scaler.id) {
        protocol.stepUnidentifiedOptimizer(scaler);
      }
      return true;
    case ScalerCall::Update:
      if (scaler.id) protocol.update(scaler, loc(call), findings());
      return true;
    case ScalerCall::None: return false;
  }
  return false;
}

bool FunctionAnalysis::transferOptimizerCall(const CXXMemberCallExpr* call, const std::string& name) {
  const Expr* object = ignoreWrappers(call->getImplicitObjectArgument());
  if (!isOptimizerType(object->getType())) return false;
  if (name == "step") {
    OptimizerStepEvent step;
    step.location = loc(call);
    step.optimizer = describe(moduleObject(object));
    step.autocast = state_.process.autocast;
    step.cacheFilledAt = state_.process.cacheFilledAt;
    step.regionLeftAt = state_.process.regionLeftAt;
    step.callChain = ctx_.callChain;
    tu_.events().steps.push_back(std::move(step));
    if (const ObjectRef optimizer = objectRef(object); optimizer.id)
      state_.process.protocol.optimizerStep(optimizer, loc(call), findings());
  } else if (name == "zero_grad") {
    state_.process.protocol.zeroGrad(objectRef(object));
  }
  return true;
}

std::optional<ObjectRef> FunctionAnalysis::optimizerOfFunction() {
  // The optimizer whose param_groups() this function walks, else its only optimizer parameter.
  struct Finder : RecursiveASTVisitor<Finder> {
    const Expr* found = nullptr;
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr* call) {
      if (!found && call->getMethodDecl() && call->getMethodDecl()->getDeclName().isIdentifier() &&
          call->getMethodDecl()->getName() == "param_groups" && isOptimizerType(call->getImplicitObjectArgument()->getType()))
        found = call->getImplicitObjectArgument();
      return true;
    }
  } finder;
  finder.TraverseStmt(const_cast<Stmt*>(fn_->getBody()));
  if (finder.found) return objectRef(finder.found);
  std::optional<ObjectRef> only;
  for (const ParmVarDecl* param : fn_->parameters())
    if (isOptimizerType(param->getType())) {
      if (only) return std::nullopt;
      auto it = aliases_.find(param);
      only = it != aliases_.end() ? it->second : ObjectRef{reinterpret_cast<uintptr_t>(param), "'" + param->getNameAsString() + "'"};
    }
  return only;
}

bool FunctionAnalysis::transferRawAmpOp(const CallExpr* call, const std::string& name) {
  // The scaler is the object whose method runs the op, else the scale tensor's variable.
  auto scalerFrom = [&](unsigned arg) -> std::optional<ObjectRef> {
    if (ctx_.thisObject) return ctx_.thisObject;
    if (arg >= call->getNumArgs()) return std::nullopt;
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
    finder.TraverseStmt(const_cast<Expr*>(call->getArg(arg)));
    if (!finder.found) return std::nullopt;
    return ObjectRef{reinterpret_cast<uintptr_t>(finder.found->getCanonicalDecl()),
                     "the scaler of '" + finder.found->getNameAsString() + "'"};
  };
  if (name == "_amp_foreach_non_finite_check_and_unscale_") {
    auto scaler = scalerFrom(2);
    auto optimizer = optimizerOfFunction();
    if (scaler && optimizer) {
      refreshOptimizerDtype(*optimizer);
      if (ctx_.guardedByScalerState) state_.process.protocol.unscaleUnlessDone(*scaler, *optimizer, loc(call), findings());
      else state_.process.protocol.unscale(*scaler, *optimizer, loc(call), findings());
    } else if (scaler) {
      state_.process.protocol.unscaleUnidentifiedOptimizer(*scaler);
    }
    return true;
  }
  if (name == "_amp_update_scale_") {
    // The op sees inf checks (unscales), not step(): a skipped optimizer step is still a checked update.
    if (auto scaler = scalerFrom(0)) state_.process.protocol.updateFromInfChecks(*scaler, loc(call), findings());
    return true;
  }
  return false;
}

void FunctionAnalysis::transferAnnotation(const CallExpr* call, const std::string& name) {
  if (call->getNumArgs() == 0) return;
  auto refOf = [&](const Expr* e) -> ObjectRef {
    e = ignoreWrappers(e);
    if (isa<CXXThisExpr>(e)) return ctx_.thisObject.value_or(ObjectRef{0, "the scaler"});
    if (const auto* addressOf = dyn_cast<UnaryOperator>(e); addressOf && addressOf->getOpcode() == UO_AddrOf)
      e = addressOf->getSubExpr();
    return objectRef(e);
  };
  const ObjectRef scaler = refOf(call->getArg(0));
  if (!scaler.id) return;
  // The method that announces itself is where the user calls it: report there, as the runtime does.
  const SourceLocation at = ctx_.callChain.empty() ? loc(call) : ctx_.callChain.front().location;
  ScalerProtocol& protocol = state_.process.protocol;
  if (name == "update") return protocol.update(scaler, at, findings());
  // scale() is followed at its caller: the method that announces it returns a scaled loss.
  if (name == "scale" || call->getNumArgs() < 2) return;
  const ObjectRef optimizer = refOf(call->getArg(1));
  if (!optimizer.id) return;
  refreshOptimizerDtype(optimizer);
  if (name == "unscale") protocol.unscale(scaler, optimizer, at, findings());
  if (name == "step") protocol.step(scaler, optimizer, at, findings());
}

void FunctionAnalysis::transferClip(const CallExpr* call) {
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
  SourceLocation at = loc(call);
  if (finder.optimizer) {
    ObjectRef optimizer = objectRef(finder.optimizer);
    return state_.process.protocol.clip(&optimizer, 0, at, findings());
  }
  uintptr_t module = 0;
  if (finder.module)
    if (const ValueDecl* d = declOf(moduleObject(finder.module))) module = reinterpret_cast<uintptr_t>(d->getCanonicalDecl());
  state_.process.protocol.clip(nullptr, module, at, findings());
}

void FunctionAnalysis::transferBackward(const Expr* loss, const Expr* at) {
  emitOp("backward", at, {loss}, nullptr, false, false);
  const TensorFact fact = evalTensor(loss);
  ScalerProtocol& protocol = state_.process.protocol;
  if (fact.scaledBy) {
    protocol.scaledBackward(*fact.scaledBy, loc(at));
    return;
  }
  protocol.unscaledBackward(loc(at));
  // Scaling by hand with an inf/NaN check in the same function is a hand-written dynamic scaler.
  if (!fact.manualScaling || checksForNonFinite(fn_)) return;
  checkManualScalingAtBackward(*fact.manualScaling, loc(at), findings());
  if (fact.scalingFactor)
    state_.process.manualBackwards[fact.scalingFactor] = PendingManualScaling{*fact.manualScaling, loc(at)};
}

void FunctionAnalysis::checkGradientsDividedBack(const Expr* gradient, const Expr* divisor, bool reciprocal,
                                                 const Expr* at) {
  if (!evalTensor(gradient).isGradient) return;
  divisor = ignoreWrappers(divisor);
  // g.mul_(1.0 / s) divides by s too.
  if (reciprocal) {
    const auto* div = dyn_cast<BinaryOperator>(divisor);
    if (!div || div->getOpcode() != BO_Div) return;
    divisor = div->getRHS();
  }
  const ValueDecl* factor = referencedVariable(divisor);
  auto it = factor ? state_.process.manualBackwards.find(factor) : state_.process.manualBackwards.end();
  if (it == state_.process.manualBackwards.end()) return;
  reportGradientsDividedBack(it->second.scaling, it->second.backwardAt, loc(at), findings());
}

void FunctionAnalysis::declareScalerOrOptimizer(const VarDecl* var, const Expr* init) {
  if (var->getType()->isReferenceType() || var->getType()->isPointerType()) return;
  const ObjectRef ref{reinterpret_cast<uintptr_t>(var->getCanonicalDecl()), "'" + var->getNameAsString() + "'"};
  if (isScalerType(var->getType())) return state_.process.protocol.declareScaler(ref);
  if (!isOptimizerType(var->getType())) return;
  // Optimizer(model->parameters(), Options(...).eps(...)), directly or through make_unique.
  std::vector<const Expr*> args;
  const Expr* e = init ? ignoreWrappers(init) : nullptr;
  if (const auto* construct = dyn_cast_or_null<CXXConstructExpr>(e))
    args.assign(construct->arg_begin(), construct->arg_end());
  else if (const auto* call = dyn_cast_or_null<CallExpr>(e); call && (calleeName(call) == "make_unique" || calleeName(call) == "make_shared"))
    args.assign(call->arg_begin(), call->arg_end());
  if (args.empty()) return;
  DtypeSet dtype = DtypeSet::unknown();
  std::optional<Note> origin;
  uintptr_t module = 0;
  const Expr* params = ignoreWrappers(args.front());
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(params); member && calleeName(member) == "parameters") {
    const Expr* object = member->getImplicitObjectArgument();
    const TensorFact fact = evalModule(object);
    dtype = fact.dtype;
    origin = fact.origin;
    if (const ValueDecl* d = declOf(moduleObject(object))) module = reinterpret_cast<uintptr_t>(d->getCanonicalDecl());
  } else if (const auto* list = dyn_cast<CXXConstructExpr>(params); list && list->getNumArgs() >= 1) {
    // Optimizer({w, b}, ...): the tensors' dtypes.
    const Expr* inner = ignoreWrappers(list->getArg(0));
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(inner)) inner = ignoreWrappers(std->getSubExpr());
    if (const auto* elements = dyn_cast<InitListExpr>(inner); elements && elements->getNumInits() > 0) {
      dtype = DtypeSet();
      for (const Expr* element : elements->inits()) {
        const TensorFact fact = evalTensor(element);
        dtype = dtype.join(fact.dtype);
        if (!origin) origin = fact.origin;
      }
    }
  }
  state_.process.protocol.declareOptimizer(ref, dtype, origin, module);

  // DL304: Adam and AdamW take eps from their options (default 1e-8).
  const CXXRecordDecl* record = pointeeRecord(var->getType());
  if (!record || !record->getDeclName().isIdentifier() || (record->getName() != "Adam" && record->getName() != "AdamW"))
    return;
  double eps = 1e-8;
  for (size_t i = 1; i < args.size(); ++i)
    for (const Expr* option = ignoreWrappers(args[i]); const auto* member = dyn_cast_or_null<CXXMemberCallExpr>(option);
         option = ignoreWrappers(member->getImplicitObjectArgument()))
      if (calleeName(member) == "eps" && member->getNumArgs() == 1)
        if (auto value = numericConstant(member->getArg(0), tu_.context())) {
          eps = *value;
          break;
        }
  checkOptimizerEpsilon(fmt::format("{} '{}'", record->getName().str(), var->getName().str()), eps, dtype, origin,
                        toLocation(var->getSourceRange(), sm_, lang_), findings());
}

// ---- transfer -----------------------------------------------------------------

void FunctionAnalysis::bindVariable(const VarDecl* var, const Expr* init) {
  QualType type = var->getType();
  declareScalerOrOptimizer(var, init);
  if (const CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl();
      record && !isTensorType(type) && !isTensorListType(type) && !moduleImplClass(type) && !isOptimizerType(type) &&
      !isScalerType(type) && isUserCode(record->getLocation(), sm_)) {
    // A struct of the user's: its tensor members are followed (auto ws = make_workspace();).
    FieldFacts fields;
    if (const FunctionResult* r = userCallResult(init); r && r->returnedFields) fields = *r->returnedFields;
    else if (const ValueDecl* source = init ? declOf(init) : nullptr; source && state_.structs.count(source))
      fields = state_.structs[source];
    state_.structs[var] = std::move(fields);
    return;
  }
  if (isTensorType(type)) {
    state_.tensors[var] = init ? named(evalTensor(init), var) : TensorFact{};
  } else if (isTensorListType(type)) {
    state_.lists[var] = init ? evalList(init) : ListFact{};
  } else if (moduleImplClass(type)) {
    const Expr* e = init ? ignoreWrappers(init) : nullptr;
    const auto* construct = e ? dyn_cast<CXXConstructExpr>(e) : nullptr;
    const auto* call = e ? dyn_cast<CallExpr>(e) : nullptr;
    const bool created = !e || (construct && !construct->getConstructor()->isCopyOrMoveConstructor()) ||
                         (call && calleeName(call) == "make_shared");
    if (created) {
      state_.modules[var] = TensorFact{DtypeSet(ScalarType::Float),
                                       Note{toLocation(var->getSourceRange(), sm_, lang_),
                                            fmt::format("the parameters of '{}' are Float (module created here)", var->getName().str())},
                                       true};
    } else if (init) {
      state_.modules[var] = evalModule(init);
    }
  }
}

void FunctionAnalysis::assign(const Expr* lhs, const Expr* rhs, const Expr* at) {
  if (const auto* member = dyn_cast<MemberExpr>(ignoreWrappers(lhs)); member && isTensorType(lhs->getType()))
    if (const ValueDecl* base = structBase(member)) {
      state_.structs[base][cast<FieldDecl>(member->getMemberDecl())] = evalTensor(rhs);
      return;
    }
  const ValueDecl* target = declOf(lhs);
  if (!target) return;
  if (isTensorType(lhs->getType())) {
    state_.tensors[target] = named(evalTensor(rhs), target);
  } else if (isTensorListType(lhs->getType())) {
    state_.lists[target] = evalList(rhs);
  } else if (moduleImplClass(lhs->getType())) {
    // fc = register_module("fc", torch::nn::Linear(4, 4)) creates Float parameters.
    state_.modules[target] =
        TensorFact{DtypeSet(ScalarType::Float),
                   note(at, fmt::format("the parameters of '{}' are Float (module created here)", target->getName().str())),
                   true};
  }
}

void FunctionAnalysis::handleAutocastCall(const FunctionDecl* fn, const CallExpr* call) {
  const std::string name = fn->getName().str();
  auto boolArg = [&](unsigned i) {
    if (i >= call->getNumArgs()) return Tristate::Unknown;
    if (const auto* lit = dyn_cast<CXXBoolLiteralExpr>(ignoreWrappers(call->getArg(i))))
      return lit->getValue() ? Tristate::On : Tristate::Off;
    return Tristate::Unknown;
  };
  auto deviceArg = [&](unsigned i) -> DeviceAutocast* {
    auto device = i < call->getNumArgs() ? evaluateDeviceTypeConstant(call->getArg(i)) : std::nullopt;
    if (device == "CUDA") return &state_.process.autocast.cuda;
    if (device == "CPU") return &state_.process.autocast.cpu;
    return nullptr;
  };
  auto setEnabled = [&](DeviceAutocast* device, Tristate enabled) {
    if (!device) {
      // An unknown device: both become unknown.
      state_.process.autocast.cpu.enabled = state_.process.autocast.cuda.enabled = Tristate::Unknown;
      return;
    }
    if (enabled == Tristate::Off && device->enabled != Tristate::Off && state_.process.cacheFilledAt)
      state_.process.regionLeftAt = loc(call);
    device->enabled = enabled;
    if (enabled != Tristate::Off) device->enabledAt = loc(call);
  };
  auto setDtype = [&](DeviceAutocast* device, unsigned argIndex) {
    auto d = argIndex < call->getNumArgs() ? evalDtypeArgument(call->getArg(argIndex)) : std::nullopt;
    DtypeSet dtype = d ? d->dtype : DtypeSet::unknown();
    if (device) device->dtype = dtype;
  };
  if (name == "set_enabled") setEnabled(&state_.process.autocast.cuda, boolArg(0));
  else if (name == "set_cpu_enabled") setEnabled(&state_.process.autocast.cpu, boolArg(0));
  else if (name == "set_autocast_enabled") setEnabled(deviceArg(0), boolArg(1));
  else if (name == "set_autocast_gpu_dtype") setDtype(&state_.process.autocast.cuda, 0);
  else if (name == "set_autocast_cpu_dtype") setDtype(&state_.process.autocast.cpu, 0);
  else if (name == "set_autocast_dtype") setDtype(deviceArg(0), 1);
  else if (name == "clear_cache") {
    state_.process.cacheFilledAt.reset();
    state_.process.regionLeftAt.reset();
  }
}

void FunctionAnalysis::emitOp(const std::string& op, const Expr* at, std::vector<const Expr*> inputs,
                              const Expr* destination, bool explicitDtype, bool reducesAllDims) {
  OpEvent event;
  event.op = op;
  event.location = loc(at);
  for (const Expr* input : inputs) event.inputs.push_back(operand(describe(input), evalTensor(input)));
  if (destination) event.destination = operand(describe(destination), evalTensor(destination));
  event.explicitDtype = explicitDtype;
  event.reducesAllDims = reducesAllDims;
  event.autocast = state_.process.autocast;
  event.inCustomBackward = ctx_.inCustomBackward;
  event.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  event.callChain = ctx_.callChain;
  endPathIfItRaises(event, at);
  tu_.events().ops.push_back(std::move(event));
}

// Inside a try block, an op that raises ends its path: what follows runs only
// through a catch handler, which may fix the dtypes. Elsewhere the path goes on,
// so that every mismatch in a function is reported, not just the first.
void FunctionAnalysis::endPathIfItRaises(const OpEvent& event, const Expr* at) {
  if (tu_.rules().raises(event) && enclosingTry(at)) state_.reached = false;
}

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
  struct ReadsOwnMember : RecursiveASTVisitor<ReadsOwnMember> {
    bool found = false;
    bool VisitMemberExpr(MemberExpr* member) {
      found = found || isa<CXXThisExpr>(member->getBase()->IgnoreParenImpCasts());
      return !found;
    }
  };
  auto readsOwnMember = [](const Expr* condition) {
    ReadsOwnMember visitor;
    visitor.TraverseStmt(const_cast<Expr*>(condition));
    return visitor.found;
  };
  ASTContext& context = tu_.context();
  while (s && s != fn_->getBody()) {
    const DynTypedNodeList parents = context.getParents(*s);
    if (parents.empty()) return false;
    const Stmt* parent = parents[0].get<Stmt>();
    if (const auto* branch = dyn_cast_or_null<IfStmt>(parent); branch && branch->getCond() != s &&
                                                               readsOwnMember(branch->getCond()))
      return true;
    if (const auto* choice = dyn_cast_or_null<ConditionalOperator>(parent); choice && choice->getCond() != s &&
                                                                          readsOwnMember(choice->getCond()))
      return true;
    s = parent;
  }
  return false;
}

void FunctionAnalysis::noteThrowPoint(const CFGElement& element) {
  const auto stmt = element.getAs<CFGStmt>();
  if (!stmt || !isa<CallExpr, CXXConstructExpr, CXXThrowExpr>(stmt->getStmt())) return;
  const CXXTryStmt* tryStmt = enclosingTry(stmt->getStmt());
  if (!tryStmt) return;
  TryRegion& region = tries_[tryStmt];
  FlowState joined = region.thrown;
  joined.join(state_);
  if (joined.sameAs(region.thrown)) return;
  region.thrown = std::move(joined);
  reopenedHandlers_.push_back(region.dispatch);
}

void FunctionAnalysis::transferBlock(const CFGBlock& block) {
  for (const CFGElement& element : block) {
    if (collectingThrows_ && !tries_.empty()) noteThrowPoint(element);
    transfer(element);
    if (!state_.reached) break;
  }
}

void FunctionAnalysis::emitModuleCall(const std::string& op, const Expr* at, const Expr* input, const Expr* moduleExpr) {
  const TensorFact parameters = evalModule(moduleExpr);
  OpEvent event;
  event.op = op;
  event.location = loc(at);
  event.inputs.push_back(operand("input " + describe(input), evalTensor(input)));
  event.inputs.push_back(operand("the parameters of " + describe(moduleExpr), parameters));
  event.autocast = state_.process.autocast;
  event.inCustomBackward = ctx_.inCustomBackward;
  event.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  event.callChain = ctx_.callChain;
  endPathIfItRaises(event, at);
  tu_.events().ops.push_back(std::move(event));
  // Autocast caches the low-precision copies of Float weights it casts.
  if (parameters.dtype.contains(ScalarType::Float)) {
    for (auto [device, autocast] : {std::pair{Device::CPU, &state_.process.autocast.cpu}, std::pair{Device::CUDA, &state_.process.autocast.cuda}})
      if (autocast->enabled == Tristate::On && autocastPolicy(op, device, tu_.torch()) == AutocastPolicy::LowerPrecision) {
        state_.process.cacheFilledAt = loc(at);
        state_.process.regionLeftAt.reset();
      }
  }
}

void FunctionAnalysis::transferUserCall(const FunctionDecl* callee, const CallContext& calleeCtx) {
  if (const FunctionResult* r = tu_.analyze(callee, calleeCtx)) applyCalleeExit(*r);
}

void FunctionAnalysis::transferConstruct(const CXXConstructExpr* construct) {
  const CXXConstructorDecl* ctor = construct->getConstructor();
  const FunctionDecl* def = ctor ? ctor->getDefinition() : nullptr;
  if (!def || !tu_.analyzable(def) || ctx_.depth >= kMaxCallDepth) return;
  CallContext c;
  c.process = state_.process;
  c.depth = ctx_.depth + 1;
  c.callChain = ctx_.callChain;
  for (unsigned i = 0; i < def->getNumParams(); ++i)
    c.args.push_back(i < construct->getNumArgs() ? evalValue(construct->getArg(i), def->getParamDecl(i)->getType()) : Value{});
  transferUserCall(def, c);
}

void FunctionAnalysis::transferCall(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  const std::string name = calleeName(call);

  if (callee && isAutocastFunction(callee)) return handleAutocastCall(callee, call);
  if (auto module = asModuleCall(call)) return transferModuleCall(*module, call);
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call))
    if (transferScalerCall(member, name) || transferOptimizerCall(member, name)) return;
  if (callee && isTorchFunction(callee) && transferRawAmpOp(call, name)) return;
  if (callee && isAnnotation(callee)) return transferAnnotation(call, name);

  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    const OverloadedOperatorKind kind = op->getOperator();
    if (kind == OO_Equal && op->getNumArgs() == 2) return assign(op->getArg(0), op->getArg(1), op);
    static const std::map<OverloadedOperatorKind, std::string> kCompound = {
        {OO_PlusEqual, "add_"}, {OO_MinusEqual, "sub_"}, {OO_StarEqual, "mul_"}, {OO_SlashEqual, "div_"}};
    if (auto it = kCompound.find(kind); it != kCompound.end() && isTensorType(op->getArg(0)->getType())) {
      std::vector<const Expr*> inputs{ignoreWrappers(op->getArg(0))};
      if (isTensorType(op->getArg(1)->getType())) inputs.push_back(ignoreWrappers(op->getArg(1)));
      emitOp(it->second, op, inputs, ignoreWrappers(op->getArg(0)), false, false);
      if (kind == OO_SlashEqual || kind == OO_StarEqual)
        checkGradientsDividedBack(op->getArg(0), op->getArg(1), kind == OO_StarEqual, op);
      return;
    }
    if (kind == OO_Call) return;
    // Other operators: arithmetic is evaluated where its value is used.
    if (!callee || !tu_.analyzable(callee->getDefinition())) return;
  }

  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    const Expr* object = ignoreWrappers(member->getImplicitObjectArgument());
    const QualType objectType = object->getType();

    // ctx->save_for_backward({x, w}) in a custom Function's forward.
    if (name == "save_for_backward") {
      result_.savedForBackward.clear();
      for (const Expr* t : tensorArgs(call)) result_.savedForBackward.push_back(evalTensor(t));
      return;
    }
    if (moduleImplClass(objectType)) {
      // model->to(torch::kHalf) changes the dtype of every parameter of the module.
      if (name == "to") {
        for (const Expr* arg : call->arguments())
          if (auto d = evalDtypeArgument(arg)) {
            if (const ValueDecl* target = declOf(moduleObject(object))) {
              TensorFact f = *d;
              if (f.origin) {
                f.origin->message = fmt::format("the parameters of '{}' became {} here", target->getName().str(), f.dtype.toString());
                f.originNamed = true;
              }
              state_.modules[target] = f;
            }
            break;
          }
        return;
      }
    }
    if (isTensorType(objectType) && !objectType->isPointerType()) {
      if (name == "backward") return transferBackward(object, call);
      std::vector<const Expr*> args = tensorArgs(call);
      if ((name == "div_" || name == "mul_") && call->getNumArgs() >= 1)
        checkGradientsDividedBack(object, call->getArg(0), name == "mul_", call);
      if (auto base = inPlaceBase(name)) {
        std::vector<const Expr*> inputs;
        if (!isMatmulFamily(*base) && *base != "copy") inputs.push_back(object);
        inputs.insert(inputs.end(), args.begin(), args.end());
        emitOp(name, call, inputs, object, false, false);
        return;
      }
      std::vector<const Expr*> inputs{object};
      inputs.insert(inputs.end(), args.begin(), args.end());
      const bool allDims = call->getNumArgs() == 0 ||
                           llvm::all_of(call->arguments(), [](const Expr* a) {
                             return isScalarTypeType(a->getType()) || isa<CXXDefaultArgExpr>(ignoreWrappers(a));
                           });
      emitOp(name, call, inputs, nullptr, hasExplicitDtype(call), allDims);
      return;
    }
  }

  if (const CXXRecordDecl* function = autogradFunctionOfApply(call)) {
    analyzeAutogradApply(call, function);
    return;
  }

  if (callee && isTorchFunction(callee)) {
    std::vector<const Expr*> args = tensorArgs(call);
    if (name == "backward" && !args.empty()) return transferBackward(args.front(), call);
    if (name == "clip_grad_norm_" || name == "clip_grad_value_") return transferClip(call);
    std::string op = atenOpName(callee);
    const Expr* destination = nullptr;
    if (op.size() > 5 && op.compare(op.size() - 5, 5, "_outf") == 0) {
      op.pop_back();  // mm_outf(self, mat2, out): out comes last
      if (!args.empty()) {
        destination = args.back();
        args.pop_back();
      }
    } else if (outVariantBase(op)) {
      if (!args.empty()) {  // mm_out(out, self, mat2): out comes first
        destination = args.front();
        args.erase(args.begin());
      }
    } else if (inPlaceBase(op) && !args.empty()) {
      destination = args.front();  // at::mul_(self, other)
    }
    const bool allDims = args.size() == 1 && llvm::all_of(call->arguments(), [](const Expr* a) {
                           return isTensorType(a->getType()) || isScalarTypeType(a->getType()) ||
                                  isa<CXXDefaultArgExpr>(ignoreWrappers(a));
                         });
    emitOp(op, call, args, destination, hasExplicitDtype(call), allDims);
    return;
  }

  // User functions: follow them for their effects and events.
  if (callee && callee->getDefinition() && tu_.analyzable(callee->getDefinition())) {
    const FunctionDecl* def = callee->getDefinition();
    if (auto c = userCallContext(call, def)) transferUserCall(def, *c);
  }
}

void FunctionAnalysis::transferStmt(const Stmt* s) {
  if (const auto* decl = dyn_cast<DeclStmt>(s)) {
    for (const Decl* d : decl->decls())
      if (const auto* var = dyn_cast<VarDecl>(d)) bindVariable(var, var->getInit());
    return;
  }
  if (const auto* ret = dyn_cast<ReturnStmt>(s)) {
    if (const ValueDecl* d = ret->getRetValue() ? declOf(ret->getRetValue()) : nullptr; d && state_.structs.count(d)) {
      const FieldFacts& fields = state_.structs[d];
      if (!result_.returnedFields) {
        result_.returnedFields = fields;
      } else {
        FlowState::joinMap(*result_.returnedFields, fields, joinFacts);
      }
      return;
    }
    if (const Expr* value = ret->getRetValue(); value && isTensorType(value->getType()))
      result_.returned = result_.returned.dtype.isBottom() ? evalTensor(value) : joinFacts(result_.returned, evalTensor(value));
    else if (ret->getRetValue())
      result_.returned = TensorFact{};
    return;
  }
  if (const auto* construct = dyn_cast<CXXConstructExpr>(s)) return transferConstruct(construct);
  if (const auto* call = dyn_cast<CallExpr>(s)) return transferCall(call);
}

void FunctionAnalysis::transfer(const CFGElement& element) {
  if (auto stmt = element.getAs<CFGStmt>()) return transferStmt(stmt->getStmt());
  if (auto dtor = element.getAs<CFGAutomaticObjDtor>()) {
    // RAII guards: the destructor of a user class runs at scope exit.
    const CXXDestructorDecl* d = dtor->getDestructorDecl(tu_.context());
    const FunctionDecl* def = d ? d->getDefinition() : nullptr;
    if (!def || !tu_.analyzable(def) || ctx_.depth >= kMaxCallDepth) return;
    CallContext c;
    c.process = state_.process;
    c.depth = ctx_.depth + 1;
    c.callChain = ctx_.callChain;
    transferUserCall(def, c);
  }
}

FunctionResult FunctionAnalysis::run() {
  FlowState entry;
  entry.reached = true;
  entry.process = ctx_.process;
  for (unsigned i = 0; i < fn_->getNumParams() && i < ctx_.args.size(); ++i) {
    const ParmVarDecl* param = fn_->getParamDecl(i);
    const Value& v = ctx_.args[i];
    switch (v.kind) {
      case Value::Kind::Tensor: entry.tensors[param] = v.fact; break;
      case Value::Kind::Module: entry.modules[param] = v.fact; break;
      case Value::Kind::List: entry.lists[param] = v.list; break;
      case Value::Kind::Object: aliases_[param] = v.object; break;
      case Value::Kind::Struct: entry.structs[param] = v.fields; break;
      case Value::Kind::None: break;
    }
  }

  // Phase 1: the fixpoint, silently. An early visit of a block sees only some
  // of the paths into it, and a fact that holds "on every path" there may not.
  tu_.beginSilent();
  std::vector<FlowState> out(cfg_.getNumBlockIDs());
  findTryRegions();
  auto stateEntering = [&](const CFGBlock* block) {
    FlowState in = block == &cfg_.getEntry() ? entry : FlowState{};
    if (const auto* tryStmt = dyn_cast_or_null<CXXTryStmt>(block->getTerminatorStmt()))
      in.join(tries_[tryStmt].thrown);
    for (const CFGBlock::AdjacentBlock& pred : block->preds()) {
      // An exception no handler catches leaves the function: the caller's code after the call never runs.
      const bool uncaught = block == &cfg_.getExit() && pred.isReachable() &&
                            isa_and_nonnull<CXXTryStmt>(pred->getTerminatorStmt());
      if (pred.isReachable() && !uncaught) in.join(out[pred->getBlockID()]);
    }
    return in;
  };
  std::vector<int> visits(cfg_.getNumBlockIDs(), 0);
  std::deque<const CFGBlock*> worklist{&cfg_.getEntry()};
  std::vector<bool> queued(cfg_.getNumBlockIDs(), false);
  queued[cfg_.getEntry().getBlockID()] = true;
  while (!worklist.empty()) {
    const CFGBlock* block = worklist.front();
    worklist.pop_front();
    queued[block->getBlockID()] = false;
    if (++visits[block->getBlockID()] > kMaxBlockVisits) continue;

    state_ = stateEntering(block);
    if (!state_.reached) continue;

    transferBlock(*block);
    for (const CFGBlock* dispatch : reopenedHandlers_)
      if (!queued[dispatch->getBlockID()]) {
        queued[dispatch->getBlockID()] = true;
        worklist.push_back(dispatch);
      }
    reopenedHandlers_.clear();
    if (const Stmt* terminator = block->getTerminatorStmt(); terminator && isa<ContinueStmt>(terminator))
      state_.process.protocol.leaveIteration(toLocation(terminator->getSourceRange(), sm_, lang_));
    if (visits[block->getBlockID()] > 1 && state_.sameAs(out[block->getBlockID()])) continue;
    out[block->getBlockID()] = state_;
    for (const CFGBlock::AdjacentBlock& succ : block->succs())
      if (succ.isReachable() && !queued[succ->getBlockID()]) {
        queued[succ->getBlockID()] = true;
        worklist.push_back(succ);
      }
  }

  tu_.endSilent();
  collectingThrows_ = false;

  // Phase 2: every reached block once more, from its fixpoint state, reporting.
  for (const CFGBlock* block : cfg_) {
    state_ = stateEntering(block);
    if (!state_.reached) continue;
    transferBlock(*block);
  }

  const FlowState& exit = out[cfg_.getExit().getBlockID()];
  result_.exitReached = exit.reached;
  result_.exit = exit.reached ? exit.process : ctx_.process;
  if (result_.returned.dtype.isBottom()) result_.returned = TensorFact{};
  return std::move(result_);
}

// ---- driver ---------------------------------------------------------------------

CFG* TranslationUnitAnalysis::cfgFor(const FunctionDecl* fn) {
  auto [it, inserted] = cfgs_.try_emplace(fn);
  if (inserted) {
    CFG::BuildOptions options;
    options.setAllAlwaysAdd();
    options.AddImplicitDtors = true;
    options.AddInitializers = true;
    it->second = CFG::buildCFG(fn, fn->getBody(), &context_, options);
  }
  return it->second.get();
}

const FunctionResult* TranslationUnitAnalysis::analyze(const FunctionDecl* fn, const CallContext& ctx) {
  if (!analyzable(fn) || onStack_.count(fn)) return nullptr;
  const std::string key = ctx.key(fn);
  if (auto it = memo_.find(key); it != memo_.end() && (!it->second.silent || !recording())) return &it->second.result;
  if (budget_ == 0) return nullptr;
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

// Functions defined in user code, and the ones some user code calls directly.
class UserFunctionCollector : public RecursiveASTVisitor<UserFunctionCollector> {
 public:
  UserFunctionCollector(TranslationUnitAnalysis& tu) : tu_(tu) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitLambdaBody() const { return false; }

  bool TraverseDecl(Decl* d) {
    if (d && !isa<TranslationUnitDecl>(d) &&
        !isUserCode(d->getLocation(), tu_.context().getSourceManager()))
      return true;  // never descend into LibTorch or system headers
    return RecursiveASTVisitor::TraverseDecl(d);
  }
  bool VisitFunctionDecl(FunctionDecl* fn) {
    if (fn->isThisDeclarationADefinition() && tu_.analyzable(fn)) defined.push_back(fn);
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
  TranslationUnitAnalysis& tu_;
};

bool isModuleMember(const FunctionDecl* fn) {
  const auto* method = dyn_cast<CXXMethodDecl>(fn);
  return method && isUserModule(method->getParent());
}

AnalysisEvents TranslationUnitAnalysis::run() {
  UserFunctionCollector collector(*this);
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

}  // namespace

AnalysisEvents analyzeDtypeFlow(ASTContext& context, TorchVersion torch, const ScalerApi& scalerApi) {
  return TranslationUnitAnalysis(context, torch, scalerApi).run();
}

}  // namespace dtype_lint::analyzer
