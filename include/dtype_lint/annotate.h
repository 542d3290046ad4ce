// Announcements a hand-written gradient scaler makes, so that dtype-lint can
// follow the scaler protocol (DL201, DL204, DL206, DL210) in code it cannot
// recognize by name, statically and at runtime:
//
//   void MyScaler::unscale_(torch::optim::Optimizer& opt) {
//     dtype_lint::annotate::unscale(this, &opt);
//     ...
//   }
//
// Header-only, no dependencies. Without the runtime hooks each call is one
// test of a null weak symbol; under `dtype-lint run` the preload library
// defines it.
#pragma once

extern "C" void dtype_lint_annotate_scaler(int event, const void* scaler, const void* optimizer)
    __attribute__((weak));

namespace dtype_lint::annotate {

enum ScalerEvent : int { kUnscale = 1, kStep = 2, kUpdate = 3 };

inline void unscale(const void* scaler, const void* optimizer) {
  if (dtype_lint_annotate_scaler) dtype_lint_annotate_scaler(kUnscale, scaler, optimizer);
}
inline void step(const void* scaler, const void* optimizer) {
  if (dtype_lint_annotate_scaler) dtype_lint_annotate_scaler(kStep, scaler, optimizer);
}
inline void update(const void* scaler) {
  if (dtype_lint_annotate_scaler) dtype_lint_annotate_scaler(kUpdate, scaler, nullptr);
}

}  // namespace dtype_lint::annotate
