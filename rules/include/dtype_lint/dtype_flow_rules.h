// The DL1xx rule engines: dtype flow through tensor ops, autocast regions and
// custom backward passes. Fed by OpEvent/OptimizerStepEvent from either front end.
#pragma once

#include <optional>
#include <utility>

#include <vector>

#include "dtype_lint/events.h"
#include "dtype_lint/finding.h"
#include "dtype_lint/op_contracts.h"

namespace dtype_lint {

class DtypeFlowRules {
 public:
  explicit DtypeFlowRules(TorchVersion torch) : torch_(torch) {}

  void onOp(const OpEvent& event, std::vector<Finding>& out) const;
  void onOptimizerStep(const OptimizerStepEvent& event, std::vector<Finding>& out) const;
  // DL104 alone (onOp checks it too): for a front end that learns of the
  // cast only once the op consumes it.
  void checkCastInsideAutocast(const OpEvent& event, std::vector<Finding>& out) const;

  // Tristate::On when autocast casts this op's inputs on some enabled device,
  // Unknown when an enabled flag is unknown.
  Tristate autocastCasts(std::string_view op, const AutocastState& state) const;
  // Whether the op raises when it runs: a matmul-family op on operands of
  // definitely different floating dtypes that autocast does not reconcile.
  // Nothing after it on the same path runs.
  bool raises(const OpEvent& event) const;

 private:
  // The first pair of operands with definitely different floating dtypes.
  std::optional<std::pair<const Operand*, const Operand*>> mismatchedOperands(const OpEvent& event) const;
  void checkMixedMatmul(const OpEvent& event, std::vector<Finding>& out) const;
  void checkOutDtype(const OpEvent& event, std::vector<Finding>& out) const;
  void checkLowPrecisionReduction(const OpEvent& event, std::vector<Finding>& out) const;
  void checkHalfLossBackward(const OpEvent& event, std::vector<Finding>& out) const;

  TorchVersion torch_;
};

// Whether a finding's message names the op's operands (DL101): a front end
// that knows better names for them (a Python module's parameters) makes the
// op's findings again from the named operands.
bool namesItsOperands(const Finding& finding);

// An op the autograd engine runs inside a custom backward, seen at runtime.
// Its operands come from a forward that ran: where they differ in dtype,
// something reconciled them in forward (autocast), so a mismatch is DL103,
// not DL101.
void markRunInCustomBackward(OpEvent& event);

}  // namespace dtype_lint
