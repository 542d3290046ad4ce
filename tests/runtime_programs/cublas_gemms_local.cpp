// cuBLAS's callers opened RTLD_LOCAL, as Python opens PyTorch's extension
// modules: the stand-in cuBLAS is in their scope only, not the global one.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* callers = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!callers) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  const auto call = reinterpret_cast<void (*)()>(dlsym(callers, "callCublasGemms"));
  if (!call) return 2;
  call();
}
