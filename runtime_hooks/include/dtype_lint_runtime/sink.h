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
}
