// Threads the program starts begin with what the adapter puts in each thread
// before its first op (its dispatch key among the thread's included keys):
// LibTorch has no hook for a new thread, and a thread's first op may be the
// one a rule looks at (a worker thread's backward()).
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <new>

#include "dtype_lint_runtime/boundary.h"

namespace {

std::atomic<void (*)()> threadStartHook{nullptr};

struct ThreadStart {
  void* (*routine)(void*);
  void* argument;
};

void* startThread(void* start) {
  const ThreadStart thread = *static_cast<ThreadStart*>(start);
  delete static_cast<ThreadStart*>(start);
  if (auto hook = threadStartHook.load(std::memory_order_acquire)) hook();
  return thread.routine(thread.argument);
}

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

// libc's, which is in the global scope (unlike a library loaded RTLD_LOCAL).
PthreadCreate realPthreadCreate() {
  static const auto real = reinterpret_cast<PthreadCreate>(dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}

// ThreadSanitizer's runtime, preloaded before this library, hands us its own
// start routine: code of ours that ran before it would run in a thread it
// has not set up. There, the adapter gives a thread the key at its first op.
bool underThreadSanitizer() {
  static const bool present = dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr;
  return present;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int
pthread_create(pthread_t* thread, const pthread_attr_t* attributes, void* (*routine)(void*), void* argument) {
  const PthreadCreate real = realPthreadCreate();
  if (!threadStartHook.load(std::memory_order_acquire) || underThreadSanitizer())
    return real(thread, attributes, routine, argument);
  auto* start = new (std::nothrow) ThreadStart{routine, argument};
  if (!start) return real(thread, attributes, routine, argument);
  const int status = real(thread, attributes, startThread, start);
  if (status != 0) delete start;
  return status;
}

extern "C" __attribute__((visibility("default"))) int dtype_lint_runtime_on_thread_start(void (*hook)(void)) {
  threadStartHook.store(hook, std::memory_order_release);
  return underThreadSanitizer() ? 0 : 1;
}
