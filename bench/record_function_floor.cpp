// The floor of the mechanism the runtime hooks use for every op: a global
// RecordFunction callback that needs no inputs (as the adapter's) and returns
// at once. scripts/gpu_check.sh builds it against the process's torch and
// loads it into bench/gpu_train_step.py (DTYPE_LINT_BENCH_FLOOR): the step's
// time with it, against plain and hooked, says how much of the hooks' cost is
// PyTorch's for any such callback.
#include <ATen/record_function.h>

namespace {

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction&) { return nullptr; }
void leave(const at::RecordFunction&, at::ObserverContext*) {}

const bool registered = [] {
  at::addGlobalCallback(
      at::RecordFunctionCallback(enter, leave).scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  return true;
}();

}  // namespace
