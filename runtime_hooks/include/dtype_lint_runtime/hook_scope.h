// Every entry into the runtime hooks (the core's exported functions, the
// adapter's LibTorch callbacks) runs inside the core's fork gate
// (preload/fork_gate.h): this is its part, `if (!scope) return;`. Header-only,
// compiled into each side; only the boundary's C functions cross.
#pragma once

#include "dtype_lint_runtime/boundary.h"

namespace dtype_lint::runtime {

class HookScope {
 public:
  HookScope() : entered_(dtype_lint_runtime_enter() != 0) {}
  ~HookScope() {
    if (entered_) dtype_lint_runtime_leave();
  }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;
  explicit operator bool() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace dtype_lint::runtime
