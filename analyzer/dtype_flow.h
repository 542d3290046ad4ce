// Flow-sensitive dtype analysis of LibTorch code: per function, a worklist
// over the Clang CFG to a fixpoint; across functions, callee analyses in the
// caller's context (argument dtypes, module dtype, autocast state), memoized.
// It reports what happened as events; the rule engines decide what is a bug.
#pragma once

#include <vector>

#include "clang/AST/ASTContext.h"
#include "dtype_lint/events.h"
#include "dtype_lint/op_contracts.h"

namespace dtype_lint::analyzer {

struct AnalysisEvents {
  std::vector<OpEvent> ops;
  std::vector<OptimizerStepEvent> steps;
};

// Analyzes every function defined in user code of the translation unit.
AnalysisEvents analyzeDtypeFlow(clang::ASTContext& context, TorchVersion torch);

}  // namespace dtype_lint::analyzer
