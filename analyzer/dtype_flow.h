// Flow-sensitive dtype analysis of LibTorch code: per function, a worklist
// over the Clang CFG to a fixpoint; across functions, callee analyses in the
// caller's context (argument dtypes, module dtype, autocast state), memoized.
// It reports what happened as events; the rule engines decide what is a bug.
#pragma once

#include <vector>

#include "config.h"
#include "dtype_lint/events.h"
#include "dtype_lint/op_contracts.h"
#include "linked_units.h"
#include "unit_budget.h"
#include "clang/AST/ASTContext.h"

namespace dtype_lint::analyzer {

struct AnalysisEvents {
  std::vector<OpEvent> ops;
  std::vector<OptimizerStepEvent> steps;
  // The scaler protocol and manual-scaling rules run as the flow's transfer
  // functions (they are rules/ code); what they found.
  std::vector<Finding> protocolFindings;
  size_t protocolFindingsPlaced = 0;  // those before it are where they will be reported
  // Functions whose analysis stopped early (a loop that did not settle, calls
  // too deep, the file's budget spent), at their names: one note per function
  // and reason.
  std::vector<Note> truncations;
};

// What the flow found in one translation unit, and where it stopped early.
struct DtypeFlowResult {
  std::vector<Finding> findings;
  std::vector<CallableRootFindings> callableRoots;
  std::vector<Note> truncations;
  Linkage linkage;
  bool unitBudgetSpent = false;  // the analysis stopped early: the TU's time or memory was spent
};

// Where the analysis stops, so that every translation unit ends in bounded time.
struct AnalysisLimits {
  int maxBlockVisits = 40;  // per block of one function's analysis in one context
  int maxCallDepth = 9;  // callees followed below a root
  size_t functionBudget = 4000;  // function analyses per translation unit
  size_t maxRuntimeFlags = 8;  // flags and settings a root is analyzed under the values of
  size_t maxConfigurations = 24;  // runs: every combination of the leading ones, pairs of the rest
  const UnitBudget::Clock* unitBudget = nullptr;  // the TU's time and memory; none: unbounded
};

// Analyzes every function defined in user code of the translation unit.
DtypeFlowResult analyzeDtypeFlow(clang::ASTContext& context, TorchVersion torch, const ScalerApi& scalerApi,
                                 const AnalysisLimits& limits = {});
// After a crash an analysis was recovered from (its scopes never unwound):
// this thread's analysis state starts clean for the next translation unit.
void forgetDtypeFlowAfterCrash();

}  // namespace dtype_lint::analyzer
