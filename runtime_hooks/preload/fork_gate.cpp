#include "fork_gate.h"

#include <pthread.h>
#include <time.h>

namespace dtype_lint::runtime {
namespace {

// Writer-preferring: a waiting fork is not starved by threads entering the hooks.
pthread_rwlock_t gate = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
thread_local unsigned depth = 0;  // this thread's nested entries
bool heldForFork = false;         // the fork in progress holds the gate
bool hooksOff = false;            // a child forked without the gate

// How long a fork waits for the threads inside the hooks to leave.
constexpr long kForkWaitNanoseconds = 250'000'000;

void beforeFork() {
  heldForFork = false;
  // A fork from inside the hooks (the adapter's compiler) is followed by exec.
  if (depth > 0) return;
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += kForkWaitNanoseconds;
  if (deadline.tv_nsec >= 1'000'000'000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1'000'000'000;
  }
  heldForFork = pthread_rwlock_timedwrlock(&gate, &deadline) == 0;
}

void afterForkInParent() {
  if (heldForFork) pthread_rwlock_unlock(&gate);
}

// The child's only thread is the forking one: the gate starts afresh (an
// unlock would name the parent's thread as the writer).
void afterForkInChild() {
  gate = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  hooksOff = hooksOff || !heldForFork;
}

}  // namespace

void installForkGate() { pthread_atfork(beforeFork, afterForkInParent, afterForkInChild); }

bool enterHooks() {
  if (hooksOff) return false;
  if (depth++ == 0) pthread_rwlock_rdlock(&gate);
  return true;
}

void leaveHooks() {
  if (--depth == 0) pthread_rwlock_unlock(&gate);
}

}  // namespace dtype_lint::runtime
