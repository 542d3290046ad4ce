// A fork (a DataLoader starting its workers) waits until no thread is inside
// the hooks, and no thread enters them until it is done, so that a child never
// inherits a lock held by a thread that does not exist in it. Entries nest:
// only a thread's outermost one takes the gate.
#pragma once

namespace dtype_lint::runtime {

// Registers the fork handlers; once, at load.
void installForkGate();

// Whether the hooks may run on this thread now (dtype_lint_runtime_enter;
// entry points use dtype_lint_runtime/hook_scope.h). They may not in a child
// forked while a thread was inside them and did not leave in time (a thread
// waiting for Python's GIL, which the forking thread holds): its hooks stay off.
bool enterHooks();
void leaveHooks();

}  // namespace dtype_lint::runtime
