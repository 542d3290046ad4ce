#include "dtype_flow.h"

#include <fmt/format.h>

#include <deque>
#include <map>
#include <memory>
#include <set>

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "clang/Lex/Lexer.h"
#include "torch_api.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace {

// ---------------------------------------------------------------------------
// Abstract values

struct TensorFact {
  DtypeSet dtype = DtypeSet::unknown();
  std::optional<Note> origin;  // where the dtype was established ("became Half here")
  bool originNamed = false;    // the origin's message names the variable ("'x' became Half here")

  friend bool operator==(const TensorFact& a, const TensorFact& b) { return a.dtype == b.dtype; }
};

TensorFact joinFacts(const TensorFact& a, const TensorFact& b) {
  TensorFact out{a.dtype.join(b.dtype), a.origin, a.originNamed};
  if (a.dtype != b.dtype) out.origin.reset();
  return out;
}

using ListFact = std::vector<TensorFact>;

// The value of an argument or parameter as far as the analysis follows it.
struct Value {
  enum class Kind { None, Tensor, Module, List } kind = Kind::None;
  TensorFact fact;  // tensors, and the parameters of modules
  ListFact list;
};

struct FlowState {
  bool reached = false;
  std::map<const ValueDecl*, TensorFact> tensors;
  std::map<const ValueDecl*, TensorFact> modules;  // the dtype of each module's parameters
  std::map<const ValueDecl*, ListFact> lists;
  AutocastState autocast;
  std::optional<SourceLocation> cacheFilledAt;
  std::optional<SourceLocation> regionLeftAt;

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
    joinMap(lists, other.lists, [](const ListFact& a, const ListFact& b) {
      ListFact out;
      for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(joinFacts(a[i], b[i]));
      return out;
    });
    for (auto [mine, theirs] : {std::pair{&autocast.cpu, &other.autocast.cpu}, std::pair{&autocast.cuda, &other.autocast.cuda}}) {
      if (mine->enabled != theirs->enabled) mine->enabled = Tristate::Unknown;
      mine->dtype = mine->dtype.join(theirs->dtype);
      if (!mine->enabledAt) mine->enabledAt = theirs->enabledAt;
    }
    // The cache is reported only when it is filled on every path (precision first).
    if (!other.cacheFilledAt) cacheFilledAt.reset();
    if (!other.regionLeftAt) regionLeftAt.reset();
  }

  bool sameAs(const FlowState& o) const {
    return reached == o.reached && tensors == o.tensors && modules == o.modules && lists == o.lists &&
           autocast == o.autocast && cacheFilledAt.has_value() == o.cacheFilledAt.has_value() &&
           regionLeftAt.has_value() == o.regionLeftAt.has_value();
  }
};

struct CallContext {
  std::vector<Value> args;
  AutocastState autocast;
  std::optional<SourceLocation> cacheFilledAt;
  std::optional<TensorFact> thisModule;  // for member functions of modules
  bool inCustomBackward = false;
  std::optional<Note> forwardUnderAutocast;
  ListFact savedVariables;  // what forward saved, for backward
  std::vector<Note> callChain;
  int depth = 0;

  std::string key(const FunctionDecl* fn) const {
    std::string k = fmt::format("{}|{}{}{}{}|{}{}|", static_cast<const void*>(fn), int(autocast.cpu.enabled),
                                autocast.cpu.dtype.toString(), int(autocast.cuda.enabled),
                                autocast.cuda.dtype.toString(), cacheFilledAt.has_value(), inCustomBackward);
    if (thisModule) k += "m" + thisModule->dtype.toString();
    for (const Value& v : args) k += fmt::format("{}:{}:{};", int(v.kind), v.fact.dtype.toString(), v.list.size());
    for (const TensorFact& s : savedVariables) k += s.dtype.toString() + ",";
    return k;
  }
};

struct FunctionResult {
  TensorFact returned{DtypeSet(), std::nullopt};  // bottom until a return is seen
  ListFact savedForBackward;
  bool exitReached = false;
  AutocastState exitAutocast;
  std::optional<SourceLocation> exitCacheFilledAt;
  std::optional<SourceLocation> exitRegionLeftAt;
};

// ---------------------------------------------------------------------------
// Translation-unit driver

class FunctionAnalysis;

class TranslationUnitAnalysis {
 public:
  TranslationUnitAnalysis(ASTContext& context, TorchVersion torch) : context_(context), torch_(torch) {}

  AnalysisEvents run();
  const FunctionResult* analyze(const FunctionDecl* fn, const CallContext& ctx);

  ASTContext& context() { return context_; }
  TorchVersion torch() const { return torch_; }
  AnalysisEvents& events() { return events_; }
  bool analyzable(const FunctionDecl* fn) const {
    return fn && fn->hasBody() && isUserCode(fn->getLocation(), context_.getSourceManager()) &&
           !fn->isDependentContext();
  }

 private:
  CFG* cfgFor(const FunctionDecl* fn);

  ASTContext& context_;
  TorchVersion torch_;
  AnalysisEvents events_;
  std::map<const FunctionDecl*, std::unique_ptr<CFG>> cfgs_;
  std::map<std::string, FunctionResult> memo_;
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

  // Evaluation (pure: never changes the state or emits events)
  TensorFact evalTensor(const Expr* e);
  TensorFact evalCallResult(const CallExpr* call);
  TensorFact evalModule(const Expr* e);
  ListFact evalList(const Expr* e);
  std::optional<TensorFact> evalDtypeArgument(const Expr* e);
  Value evalValue(const Expr* e, QualType paramType);
  TensorFact opResult(std::string_view op, const std::vector<TensorFact>& inputs, const Expr* at);
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

  // Helpers
  const ValueDecl* declOf(const Expr* e);
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
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
    // A local options variable initialized once.
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl());
        var && var->getInit() && var->hasLocalStorage() && var->getType().isConstQualified())
      return evalDtypeArgument(var->getInit());
  }
  if (isScalarTypeType(e->getType())) return TensorFact{};
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
  for (auto [device, autocast] : {std::pair{Device::CPU, &state_.autocast.cpu}, std::pair{Device::CUDA, &state_.autocast.cuda}}) {
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
    if (isTensorType(object->getType()) && !(object->getType()->isPointerType())) {
      TensorFact self = evalTensor(object);
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
    std::string op = name;
    return opResult(op, inputs, call);
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
  }
  return v;
}

// ---- calls the analysis follows ---------------------------------------------

std::optional<CallContext> FunctionAnalysis::userCallContext(const CallExpr* call, const FunctionDecl* callee) {
  if (!callee || ctx_.depth >= kMaxCallDepth) return std::nullopt;
  CallContext c;
  c.autocast = state_.autocast;
  c.cacheFilledAt = state_.cacheFilledAt;
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
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call))
    if (moduleImplClass(member->getImplicitObjectArgument()->getType()))
      c.thisModule = evalModule(member->getImplicitObjectArgument());
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
  if (!r.exitReached) return;
  // Helpers, forwards and RAII guards that switch autocast or clear its cache.
  state_.autocast = r.exitAutocast;
  state_.cacheFilledAt = r.exitCacheFilledAt;
  state_.regionLeftAt = r.exitRegionLeftAt;
}

const FunctionResult* FunctionAnalysis::analyzeModuleCall(const ModuleCall& module, const Expr* at) {
  const CXXRecordDecl* impl = module.impl;
  const Expr* moduleExpr = module.module;
  const std::vector<const Expr*>& args = module.args;
  if (!isUserModule(impl) || ctx_.depth >= kMaxCallDepth) return nullptr;
  const FunctionDecl* forward = moduleForward(impl);
  if (!tu_.analyzable(forward)) return nullptr;
  CallContext c;
  c.autocast = state_.autocast;
  c.cacheFilledAt = state_.cacheFilledAt;
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
  fwd.autocast = state_.autocast;
  fwd.cacheFilledAt = state_.cacheFilledAt;
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
    bwd.autocast.cpu.enabled = bwd.autocast.cuda.enabled = Tristate::Off;
    if (state_.autocast.anyOn())
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

// ---- transfer -----------------------------------------------------------------

void FunctionAnalysis::bindVariable(const VarDecl* var, const Expr* init) {
  QualType type = var->getType();
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
    if (device == "CUDA") return &state_.autocast.cuda;
    if (device == "CPU") return &state_.autocast.cpu;
    return nullptr;
  };
  auto setEnabled = [&](DeviceAutocast* device, Tristate enabled) {
    if (!device) {
      // An unknown device: both become unknown.
      state_.autocast.cpu.enabled = state_.autocast.cuda.enabled = Tristate::Unknown;
      return;
    }
    if (enabled == Tristate::Off && device->enabled != Tristate::Off && state_.cacheFilledAt)
      state_.regionLeftAt = loc(call);
    device->enabled = enabled;
    if (enabled != Tristate::Off) device->enabledAt = loc(call);
  };
  auto setDtype = [&](DeviceAutocast* device, unsigned argIndex) {
    auto d = argIndex < call->getNumArgs() ? evalDtypeArgument(call->getArg(argIndex)) : std::nullopt;
    DtypeSet dtype = d ? d->dtype : DtypeSet::unknown();
    if (device) device->dtype = dtype;
  };
  if (name == "set_enabled") setEnabled(&state_.autocast.cuda, boolArg(0));
  else if (name == "set_cpu_enabled") setEnabled(&state_.autocast.cpu, boolArg(0));
  else if (name == "set_autocast_enabled") setEnabled(deviceArg(0), boolArg(1));
  else if (name == "set_autocast_gpu_dtype") setDtype(&state_.autocast.cuda, 0);
  else if (name == "set_autocast_cpu_dtype") setDtype(&state_.autocast.cpu, 0);
  else if (name == "set_autocast_dtype") setDtype(deviceArg(0), 1);
  else if (name == "clear_cache") {
    state_.cacheFilledAt.reset();
    state_.regionLeftAt.reset();
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
  event.autocast = state_.autocast;
  event.inCustomBackward = ctx_.inCustomBackward;
  event.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  event.callChain = ctx_.callChain;
  tu_.events().ops.push_back(std::move(event));
}

void FunctionAnalysis::emitModuleCall(const std::string& op, const Expr* at, const Expr* input, const Expr* moduleExpr) {
  const TensorFact parameters = evalModule(moduleExpr);
  OpEvent event;
  event.op = op;
  event.location = loc(at);
  event.inputs.push_back(operand("input " + describe(input), evalTensor(input)));
  event.inputs.push_back(operand("the parameters of " + describe(moduleExpr), parameters));
  event.autocast = state_.autocast;
  event.inCustomBackward = ctx_.inCustomBackward;
  event.forwardUnderAutocast = ctx_.forwardUnderAutocast;
  event.callChain = ctx_.callChain;
  tu_.events().ops.push_back(std::move(event));
  // Autocast caches the low-precision copies of Float weights it casts.
  if (parameters.dtype.contains(ScalarType::Float)) {
    for (auto [device, autocast] : {std::pair{Device::CPU, &state_.autocast.cpu}, std::pair{Device::CUDA, &state_.autocast.cuda}})
      if (autocast->enabled == Tristate::On && autocastPolicy(op, device, tu_.torch()) == AutocastPolicy::LowerPrecision) {
        state_.cacheFilledAt = loc(at);
        state_.regionLeftAt.reset();
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
  c.autocast = state_.autocast;
  c.cacheFilledAt = state_.cacheFilledAt;
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

  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    const OverloadedOperatorKind kind = op->getOperator();
    if (kind == OO_Equal && op->getNumArgs() == 2) return assign(op->getArg(0), op->getArg(1), op);
    static const std::map<OverloadedOperatorKind, std::string> kCompound = {
        {OO_PlusEqual, "add_"}, {OO_MinusEqual, "sub_"}, {OO_StarEqual, "mul_"}, {OO_SlashEqual, "div_"}};
    if (auto it = kCompound.find(kind); it != kCompound.end() && isTensorType(op->getArg(0)->getType())) {
      std::vector<const Expr*> inputs{ignoreWrappers(op->getArg(0))};
      if (isTensorType(op->getArg(1)->getType())) inputs.push_back(ignoreWrappers(op->getArg(1)));
      emitOp(it->second, op, inputs, ignoreWrappers(op->getArg(0)), false, false);
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
    if (isOptimizerType(objectType) && name == "step") {
      OptimizerStepEvent step;
      step.location = loc(call);
      step.optimizer = describe(moduleObject(object));
      step.autocast = state_.autocast;
      step.cacheFilledAt = state_.cacheFilledAt;
      step.regionLeftAt = state_.regionLeftAt;
      step.callChain = ctx_.callChain;
      tu_.events().steps.push_back(std::move(step));
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
      if (name == "backward") return emitOp("backward", call, {object}, nullptr, false, false);
      std::vector<const Expr*> args = tensorArgs(call);
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
    if (name == "backward" && !args.empty()) return emitOp("backward", call, {args.front()}, nullptr, false, false);
    if (name == "clip_grad_norm_" || name == "clip_grad_value_") return;
    std::string op = name;
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
    c.autocast = state_.autocast;
    c.cacheFilledAt = state_.cacheFilledAt;
    c.depth = ctx_.depth + 1;
    c.callChain = ctx_.callChain;
    transferUserCall(def, c);
  }
}

FunctionResult FunctionAnalysis::run() {
  FlowState entry;
  entry.reached = true;
  entry.autocast = ctx_.autocast;
  entry.cacheFilledAt = ctx_.cacheFilledAt;
  for (unsigned i = 0; i < fn_->getNumParams() && i < ctx_.args.size(); ++i) {
    const ParmVarDecl* param = fn_->getParamDecl(i);
    const Value& v = ctx_.args[i];
    switch (v.kind) {
      case Value::Kind::Tensor: entry.tensors[param] = v.fact; break;
      case Value::Kind::Module: entry.modules[param] = v.fact; break;
      case Value::Kind::List: entry.lists[param] = v.list; break;
      case Value::Kind::None: break;
    }
  }

  std::vector<FlowState> out(cfg_.getNumBlockIDs());
  std::vector<int> visits(cfg_.getNumBlockIDs(), 0);
  std::deque<const CFGBlock*> worklist{&cfg_.getEntry()};
  std::vector<bool> queued(cfg_.getNumBlockIDs(), false);
  queued[cfg_.getEntry().getBlockID()] = true;
  while (!worklist.empty()) {
    const CFGBlock* block = worklist.front();
    worklist.pop_front();
    queued[block->getBlockID()] = false;
    if (++visits[block->getBlockID()] > kMaxBlockVisits) continue;

    state_ = FlowState{};
    if (block == &cfg_.getEntry()) state_ = entry;
    for (const CFGBlock::AdjacentBlock& pred : block->preds())
      if (pred.isReachable()) state_.join(out[pred->getBlockID()]);
    if (!state_.reached) continue;

    for (const CFGElement& element : *block) transfer(element);
    if (visits[block->getBlockID()] > 1 && state_.sameAs(out[block->getBlockID()])) continue;
    out[block->getBlockID()] = state_;
    for (const CFGBlock::AdjacentBlock& succ : block->succs())
      if (succ.isReachable() && !queued[succ->getBlockID()]) {
        queued[succ->getBlockID()] = true;
        worklist.push_back(succ);
      }
  }

  const FlowState& exit = out[cfg_.getExit().getBlockID()];
  result_.exitReached = exit.reached;
  result_.exitAutocast = exit.reached ? exit.autocast : ctx_.autocast;
  result_.exitCacheFilledAt = exit.reached ? exit.cacheFilledAt : ctx_.cacheFilledAt;
  result_.exitRegionLeftAt = exit.reached ? exit.regionLeftAt : std::nullopt;
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
  if (auto it = memo_.find(key); it != memo_.end()) return &it->second;
  if (budget_ == 0) return nullptr;
  --budget_;
  CFG* cfg = cfgFor(fn);
  if (!cfg) return nullptr;
  analyzedOnce_.insert(fn);
  onStack_.insert(fn);
  FunctionResult result = FunctionAnalysis(*this, fn, ctx, *cfg).run();
  onStack_.erase(fn);
  return &memo_.emplace(key, std::move(result)).first->second;
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
  collector.TraverseDecl(context_.getTranslationUnitDecl());
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
    unknown.autocast.cpu.enabled = unknown.autocast.cuda.enabled = Tristate::Unknown;
    if (const auto* method = dyn_cast<CXXMethodDecl>(fn); method && isCustomAutogradFunction(method->getParent()) &&
                                                          method->getName() == "backward")
      unknown.inCustomBackward = true;
    analyze(fn, unknown);
  }
  return std::move(events_);
}

}  // namespace

AnalysisEvents analyzeDtypeFlow(ASTContext& context, TorchVersion torch) {
  return TranslationUnitAnalysis(context, torch).run();
}

}  // namespace dtype_lint::analyzer
