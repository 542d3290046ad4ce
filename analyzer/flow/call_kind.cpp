#include "flow/call_kind.h"

#include "flow/ast_helpers.h"
#include "flow/scaler_tracking.h"
#include "torch_api.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

namespace {

std::optional<ModuleCall> asModuleCall(const CallExpr* call) {
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

bool isRawAmpOp(const std::string& name) { return name == kRawUnscaleOp || name == kRawUpdateScaleOp; }

// The operators the transfer handles itself: assignment, compound assignment
// of tensors, and calls of objects (modules not modeled).
bool transfersOperator(const CXXOperatorCallExpr* op) {
  const OverloadedOperatorKind kind = op->getOperator();
  if (kind == OO_Equal && op->getNumArgs() == 2) return true;
  const bool compound = kind == OO_PlusEqual || kind == OO_MinusEqual || kind == OO_StarEqual || kind == OO_SlashEqual;
  return compound && isTensorType(op->getArg(0)->getType());
}

// The kinds both orders end with.
CallKind laterKind(const CallClassification& c, const FunctionDecl* callee) {
  if (c.autogradFunction) return CallKind::AutogradApply;
  if (callee && isTorchFunction(callee)) return CallKind::TorchFunction;
  if (c.definition) return CallKind::UserFunction;
  return CallKind::Other;
}

CallKind effectKind(const CallExpr* call, const CallClassification& c, const ScalerApi& api) {
  const FunctionDecl* callee = call->getDirectCallee();
  if (callee && isAutocastFunction(callee)) return CallKind::AutocastFunction;
  if (c.module) return CallKind::ModuleCall;
  const auto* member = dyn_cast<CXXMemberCallExpr>(call);
  if (member && isScalerType(api, member->getImplicitObjectArgument()->getType()) &&
      scalerCall(api, c.name) != ScalerCall::None)
    return CallKind::ScalerApi;
  const Expr* object = member ? ignoreWrappers(member->getImplicitObjectArgument()) : nullptr;
  if (object && isOptimizerType(object->getType())) return CallKind::OptimizerMethod;
  if (callee && isTorchFunction(callee) && isRawAmpOp(c.name)) return CallKind::RawAmpOp;
  if (callee && isAnnotation(callee)) return CallKind::Annotation;
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    if (transfersOperator(op)) return CallKind::TensorOperator;
    // Other operators: arithmetic is evaluated where its value is used. A
    // lambda or a user functor called here is followed like any user function.
    if (op->getOperator() != OO_Call || !callee || !isAnalyzable(callee->getDefinition())) return CallKind::Other;
  }
  if (object) {
    if (c.name == "save_for_backward") return CallKind::SaveForBackward;
    if (moduleImplClass(object->getType()) && c.name == "to") return CallKind::ModuleConversion;
    if (isTensorType(object->getType()) && !object->getType()->isPointerType()) return CallKind::TensorMethod;
  }
  return laterKind(c, callee);
}

CallKind valueKind(const CallExpr* call, const CallClassification& c, const ScalerApi& api) {
  if (c.module) return CallKind::ModuleCall;
  // A tensor has no operator(): that is a user functor's, a virtual one's too.
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() != OO_Call)
    return CallKind::TensorOperator;
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    const Expr* object = ignoreWrappers(member->getImplicitObjectArgument());
    const bool scales = (isScalerType(api, object->getType()) && scalerCall(api, c.name) == ScalerCall::Scale) ||
                        (!isTensorType(object->getType()) && announcesScale(member->getMethodDecl()));
    if (scales && call->getNumArgs() >= 1) return CallKind::ScalerApi;
    if (isTensorType(object->getType()) && !(object->getType()->isPointerType())) return CallKind::TensorMethod;
  }
  return laterKind(c, call->getDirectCallee());
}

}  // namespace

CallClassification classifyCall(const CallExpr* call, const ScalerApi& api) {
  CallClassification c;
  c.name = calleeName(call);
  c.module = asModuleCall(call);
  c.autogradFunction = autogradFunctionOfApply(call);
  if (const FunctionDecl* callee = call->getDirectCallee(); callee && isAnalyzable(callee->getDefinition()))
    c.definition = callee->getDefinition();
  c.effect = effectKind(call, c, api);
  c.value = valueKind(call, c, api);
  return c;
}

ModuleCall withUserBlocks(const ModuleCall& called) {
  if (!called.impl || called.impl->getName() != "SequentialImpl") return called;
  const auto* field = dyn_cast_or_null<FieldDecl>(declOf(moduleObject(called.module)));
  const CXXRecordDecl* block = field ? sequentialBlockClass(field) : nullptr;
  if (!block) return called;
  ModuleCall blocks = called;
  blocks.impl = block;
  blocks.op.clear();
  blocks.heldBySequential = true;
  return blocks;
}

}  // namespace dtype_lint::analyzer::flow
