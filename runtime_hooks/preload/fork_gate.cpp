#include "fork_gate.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace dtype_lint::runtime {
namespace {

// A count and a flag rather than a lock: a child can reset them with plain
// stores (a lock held by the forking thread cannot be released in the child),
// and every order between them is sequentially consistent: an entry either
// sees the fork coming or is counted before the fork looks.
std::atomic<unsigned> inside{0};  // threads inside the hooks (outermost entries)
std::atomic<bool> forking{false};  // a fork waits for `inside` to reach 0
thread_local unsigned depth = 0;  // this thread's nested entries
bool forkedWhileQuiet = false;  // the fork in progress saw no thread inside
std::atomic<bool> hooksOff{false};  // a child forked while a thread was inside

// How long a fork waits for the threads inside the hooks to leave.
constexpr auto kForkWait = std::chrono::milliseconds(250);

void beforeFork() {
  forkedWhileQuiet = false;
  // A fork from inside the hooks (the adapter's compiler) is followed by exec.
  if (depth > 0) return;
  forking = true;
  const auto deadline = std::chrono::steady_clock::now() + kForkWait;
  while (inside != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  forkedWhileQuiet = inside == 0;
}

void afterForkInParent() { forking = false; }

// The child's only thread is the forking one.
void afterForkInChild() {
  if (!forkedWhileQuiet) hooksOff = true;  // a lock inside the hooks may be held by a thread it does not have
  inside = depth > 0 ? 1 : 0;
  forking = false;
}

}  // namespace

void installForkGate() { pthread_atfork(beforeFork, afterForkInParent, afterForkInChild); }

bool enterHooks() {
  if (hooksOff) return false;
  if (depth++ > 0) return true;
  for (;;) {
    while (forking) sched_yield();
    ++inside;
    if (!forking) return true;
    --inside;  // a fork started meanwhile: let it go first
  }
}

void leaveHooks() {
  if (--depth == 0) --inside;
}

}  // namespace dtype_lint::runtime
