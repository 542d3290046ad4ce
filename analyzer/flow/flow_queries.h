// What the collaborators of one function's analysis (the scaler tracking) may
// ask of it: evaluation at the current program point, the state they update,
// the context the function runs in. FunctionAnalysis implements it, so the
// collaborators never see its header.
#pragma once

#include <optional>
#include <string>

#include "dtype_flow.h"
#include "flow/abstract_values.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

namespace dtype_lint::analyzer::flow {

class FlowQueries {
 public:
  // Evaluation (pure: never changes the state or emits events).
  virtual TensorFact evalTensor(const clang::Expr* e) = 0;
  virtual TensorFact evalModule(const clang::Expr* e) = 0;
  virtual ListFact evalList(const clang::Expr* e) = 0;
  // What a call of a user function returns (analyzed in the caller's context).
  virtual const FunctionResult* userCallResult(const clang::Expr* e) = 0;
  virtual SourceLocation loc(const clang::Expr* e) = 0;
  virtual std::string describe(const clang::Expr* e) = 0;
  // A bool's value on this path, when known (a constant, an assumed runtime flag).
  virtual std::optional<bool> evalFlag(const clang::Expr* condition) = 0;

  // The state at the current program point, for the transfer functions to update.
  virtual FlowState& state() = 0;
  virtual const CallContext& callContext() const = 0;
  virtual const clang::FunctionDecl* function() const = 0;
  virtual clang::ASTContext& astContext() = 0;
  // Where events go: recorded, or a scratch list while the fixpoint is computed.
  virtual AnalysisEvents& events() = 0;

 protected:
  ~FlowQueries() = default;
};

}  // namespace dtype_lint::analyzer::flow
