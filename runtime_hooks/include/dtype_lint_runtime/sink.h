// The boundary between the LibTorch adapter (built against the process's
// LibTorch) and the preload core (which never links LibTorch): the adapter
// turns dispatcher callbacks into OpEvents and hands them over here.
#pragma once

#include "dtype_lint/events.h"

extern "C" {
// The LibTorch version the adapter was built against, once, at load.
void dtype_lint_runtime_attach(int torchMajor, int torchMinor);
// One op about to run, on the calling thread; the location is filled in by
// the core from the call stack when the event makes a finding.
void dtype_lint_runtime_op(const dtype_lint::OpEvent* event);
// backward() on the loss whose TensorImpl is `loss`; lossFactor: the constant
// the user's code multiplied it by, 0 if it was not.
void dtype_lint_runtime_backward(const void* loss, double lossFactor);
// The user's code multiplied a tensor in place by a constant (div_(c) is 1/c).
void dtype_lint_runtime_multiplied_in_place(double multiplier);
// The user's code checked a tensor for inf/NaN.
void dtype_lint_runtime_nonfinite_check();
// The raw ATen AMP ops a C++ port of GradScaler calls. Unscale: the gradients
// of one optimizer, known by the TensorImpl of its first gradient, in
// gradientDtype ("Half", "Float", ...). Update: the scale was updated.
void dtype_lint_runtime_amp_unscale(const void* firstGradient, const char* gradientDtype);
void dtype_lint_runtime_amp_update();
// The optimizer an unscale named by firstGradient stepped: one of its
// parameters was updated in place since that unscale.
void dtype_lint_runtime_amp_step(const void* firstGradient);
// A backward() once the scale tensor is known, with what its loss's graph
// says: a dtype_lint::AmpBackwardTrace::Loss.
void dtype_lint_runtime_amp_backward(int loss);
}
