// Every call the dtype flow meets, classified once: what it is decides both
// what the transfer does with it (its effects and events) and how its value is
// evaluated.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "clang/AST/ExprCXX.h"

namespace dtype_lint::analyzer::flow {

enum class CallKind {
  AutocastFunction,  // at::autocast::set_enabled(...), clear_cache()
  ModuleCall,  // fc(x), fc->forward(x), model(x)
  ScalerApi,  // a method of the configured scaler API (for the value: a scale(), or a method that announces one)
  OptimizerMethod,  // opt.step(), opt.zero_grad(), ...
  RawAmpOp,  // the ATen ops a scaler port calls directly
  Annotation,  // dtype_lint::annotate::<name>(...)
  TensorOperator,  // a + b, x[0], x = y, g /= s
  SaveForBackward,  // ctx->save_for_backward({x, w})
  ModuleConversion,  // model->to(torch::kHalf)
  TensorMethod,  // x.mul(y), x.backward(), g.div_(s)
  AutogradApply,  // F::apply(x) of a custom autograd Function
  TorchFunction,  // torch::/at:: functions
  UserFunction,  // a function defined in user code
  Other,
};

// A module applied to tensors.
struct ModuleCall {
  const clang::CXXRecordDecl* impl = nullptr;
  const clang::Expr* module = nullptr;
  std::vector<const clang::Expr*> args;
  std::string op;  // the ATen op of a built-in module; empty for user modules
  bool heldBySequential = false;  // `impl` is the class of the blocks a Sequential holds (withUserBlocks)
};

// A Sequential member holding blocks of one class of the program's
// (sequentialBlockClass): a call of it runs their forward; other calls as they are.
ModuleCall withUserBlocks(const ModuleCall& called);

struct CallClassification {
  // The transfer and the evaluation look at a call in different orders: the
  // transfer first takes the calls with effects (autocast, the scaler and the
  // optimizer, raw AMP ops, annotations), the evaluation first the calls with
  // values (any operator, a scaled loss). So the same call has one kind for each.
  CallKind effect = CallKind::Other;
  CallKind value = CallKind::Other;
  std::string name;  // the callee's, empty for operators
  std::optional<ModuleCall> module;  // ModuleCall
  const clang::CXXRecordDecl* autogradFunction = nullptr;  // AutogradApply
  const clang::FunctionDecl* definition = nullptr;  // UserFunction
};

CallClassification classifyCall(const clang::CallExpr* call, const ScalerApi& api);

}  // namespace dtype_lint::analyzer::flow
