// The gradient scaler protocol (DL2xx), manual loss scaling (DL203) and
// optimizer eps (DL304) as transfer functions of the dtype flow: the calls
// that drive a scaler or an optimizer, read through the FlowQueries of the
// function being analyzed. The rules themselves are rules/ code.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "config.h"
#include "flow/flow_queries.h"
#include "clang/AST/ExprCXX.h"

namespace dtype_lint::analyzer::flow {

enum class ScalerCall { None, Scale, Unscale, Step, Update };
bool isScalerType(const ScalerApi& api, clang::QualType type);
ScalerCall scalerCall(const ScalerApi& api, const std::string& method);

class ScalerTracking {
 public:
  ScalerTracking(FlowQueries& flow, const ScalerApi& api) : flow_(flow), api_(api) {}

  // A parameter that names the caller's scaler or optimizer.
  void bindParameter(const clang::ParmVarDecl* param, const ObjectRef& object) { aliases_[param] = object; }
  // Id 0 is an object the analysis cannot tell apart from others (an element of
  // a container, a reference member): the protocol follows no transition on it.
  ObjectRef objectRef(const clang::Expr* e);
  // The object a declaration names, by its address (0: none).
  ObjectRef declarationRef(const clang::ValueDecl* d, std::string name);

  // A scaler method of the configured API (the classifier saw it is one).
  void transferScalerCall(const clang::CXXMemberCallExpr* call, const std::string& name);
  // Any method of an optimizer: step() and zero_grad() drive the protocol.
  void transferOptimizerCall(const clang::CXXMemberCallExpr* call, const std::string& name);
  void transferOptimizerReturn(const clang::Expr* value, FunctionResult& result);
  // `auto [model, optimizer, scaler] = make_experiment(cfg);`: a scaler, or the
  // optimizer the factory returns in its tuple.
  void declareBinding(const clang::BindingDecl* binding, const clang::Expr* init);
  // _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_.
  void transferRawAmpOp(const clang::CallExpr* call, const std::string& name);
  // A declaration the flow passes: where a loop over groups of gradients is
  // entered (its range-for's __begin), the raw unscales of one group per
  // iteration inside it are one unscale of the optimizer.
  void transferDeclaration(const clang::DeclStmt* decl);
  // dtype_lint::annotate::<name>(scaler, optimizer).
  void transferAnnotation(const clang::CallExpr* call, const std::string& name);
  std::optional<UnscaleSpelling> unscaleSpelling(const clang::CallExpr* call);
  void laterInBlock(const clang::CompoundStmt& block, const clang::Stmt* statement, UnscaleSpelling& spelling);
  static std::optional<std::pair<SourceLocation, std::string>> ownLines(const clang::Stmt* statement,
                                                                        clang::ASTContext& context);
  void transferClip(const clang::CallExpr* call);
  // A call the flow does not follow: a callable whose target is unknown may
  // drive every scaler; a user function without a body, the scalers passed to it.
  void transferUnfollowedCall(const clang::CallExpr* call);
  // The scalers that are members of an object of `record` (or of its bases): code not followed drove them.
  void forgetMemberScalers(const clang::CXXRecordDecl* record);
  // backward() on `loss`: scaled by a scaler, by hand, or not at all.
  void transferBackward(const clang::Expr* loss, const clang::Expr* at);
  // g /= s, g.div_(s), g.mul_(1.0 / s): gradients divided back by a manual scaling's factor.
  void checkGradientsDividedBack(const clang::Expr* gradient, const clang::Expr* divisor, bool reciprocal,
                                 const clang::Expr* at);
  // g.mul_(coef) with a factor computed from the gradients' values (a
  // hand-written norm clip), g.clamp_(-v, v): clipping, as transferClip.
  void checkGradientsClippedByHand(const clang::Expr* gradient, const clang::CallExpr* call, const std::string& name);
  // A scaler or an optimizer variable or member initialized (or assigned) with `init`, at `at`.
  void declareScalerOrOptimizer(const clang::ValueDecl* d, const clang::Expr* init, const SourceLocation& at);
  // An optimizer kept in a map under a name the code spells: `optimizers_["dense"] = make_unique<...>(...)`
  // (`element` names it, `init` makes it), `optimizers_.emplace("dense", make_unique<...>(...))`.
  void declareKeyedOptimizer(const clang::Expr* element, const clang::Expr* init, const SourceLocation& at);
  // ... and `optimizers_["dense"].reset(make_adam(...))`, `optimizer_.reset(new Adam(...))`.
  void transferKeyedInsertion(const clang::CXXMemberCallExpr* call, const std::string& name);
  // The object `map.at("dense")` or `map["dense"]` names: one per map and key; none for another expression.
  std::optional<ObjectRef> keyedObject(const clang::Expr* e);
  // The reference members an aggregate initializer binds (`Session s{net, opt, scaler}`).
  void bindReferenceMembers(const clang::InitListExpr* list);

 private:
  void bindReferenceMember(const clang::FieldDecl* field, const clang::Expr* init);
  enum class ScalerEnabled { Yes, Maybe, No };
  ScalerEnabled enabledOnThisPath(const clang::Expr* value);
  void declareOptimizer(const ObjectRef& ref, const clang::Expr* value, const SourceLocation& at);
  void emitStep(const clang::Expr* at, const clang::Expr* optimizer);
  void optimizerStep(const clang::Expr* at, const clang::Expr* optimizer);
  std::optional<ObjectRef> keyedObject(const clang::Expr* map, const clang::Expr* key, std::string name);
  void refreshOptimizerDtype(const ObjectRef& optimizer);
  // Where this function froze every parameter of `module` (an optimizer's), if it did.
  std::optional<SourceLocation> frozenHere(uintptr_t module);
  std::optional<ObjectRef> optimizerOfFunction();
  std::optional<ObjectRef> optimizerArgument(const clang::CXXMemberCallExpr* call, const ObjectRef& scaler);
  // The scaler a raw AMP op updates: the object whose method runs it, else the
  // variable of the found_inf tensor that its unscale and update share, else
  // of the scale tensor (the inverse scale is often a temporary).
  std::optional<ObjectRef> rawOpScaler(const clang::CallExpr* call, unsigned foundInfArg, unsigned scaleArg);
  void rawUnscale(const clang::CallExpr* call);
  // The outermost of the range-fors whose variables a raw unscale's gradients
  // come from (`for (auto& [device, by_dtype] : groups) for (auto& [dtype,
  // grads] : by_dtype)`): each iteration unscales other gradients. nullptr
  // when the gradients are not a loop's element.
  const clang::CXXForRangeStmt* groupLoopOf(const clang::CallExpr* rawUnscale);
  // The raw unscales of each group loop in this function, by its __begin declaration.
  const std::map<const clang::DeclStmt*, std::vector<const clang::CallExpr*>>& groupUnscales();
  struct OptimizerParameters {
    DtypeSet dtype = DtypeSet::unknown();
    std::optional<Note> origin;
    uintptr_t module = 0;  // the module whose parameters() they are, if known
  };
  // Optimizer(model->parameters(), ...) or Optimizer({w, b}, ...): its constructor's arguments.
  struct OptimizerConstruction {
    const clang::CXXRecordDecl* record = nullptr;
    std::vector<const clang::Expr*> args;
  };
  static std::optional<OptimizerConstruction> optimizerConstruction(const clang::Expr* value);
  OptimizerParameters parametersOf(const std::vector<const clang::Expr*>& args);
  // DL304 for an optimizer of class `record` (named `name`, quoted, when it is a variable).
  void checkEpsilon(const clang::CXXRecordDecl* record, const std::string& name,
                    const std::vector<const clang::Expr*>& args, const OptimizerParameters& parameters,
                    const SourceLocation& at);
  static const clang::Expr* optionsExpression(const clang::Expr* e);
  ScalerProtocol& protocol() { return flow_.state().process.protocol; }
  std::vector<Finding>& findings() { return flow_.events().protocolFindings; }

  FlowQueries& flow_;
  const ScalerApi& api_;
  std::map<const clang::ValueDecl*, ObjectRef> aliases_;  // parameters naming the caller's scalers and optimizers
  // The ids objectRef made from a declaration's address (others are keyed:
  // a declaration's mixed with a key's hash): only these name a declaration.
  std::set<uintptr_t> declarationIds_;
  std::optional<std::map<const clang::DeclStmt*, std::vector<const clang::CallExpr*>>> groupUnscales_;
};

}  // namespace dtype_lint::analyzer::flow
