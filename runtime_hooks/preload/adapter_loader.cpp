#include "adapter_loader.h"

#include "dtype_lint_runtime/boundary.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>

#include "dtype_lint/cache_directory.h"

namespace dtype_lint::runtime {
namespace {

namespace fs = std::filesystem;

// The real path of the libtorch_cpu the process has loaded, if any.
std::optional<std::string> loadedLibTorch() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (!info->dlpi_name || !std::strstr(info->dlpi_name, "/libtorch_cpu.so")) return 0;
        *static_cast<std::string*>(out) = info->dlpi_name;
        return 1;
      },
      &path);
  if (path.empty()) return std::nullopt;
  char real[PATH_MAX];
  return realpath(path.c_str(), real) ? std::string(real) : path;
}

std::string directoryOf(const void* symbol) {
  Dl_info self{};
  if (!dladdr(symbol, &self) || !self.dli_fname) return "";
  const std::string file = self.dli_fname;
  return file.substr(0, file.rfind('/'));
}

// Which LibTorch an adapter was built against, as its torch.id says it: the
// real path of libtorch_cpu, then its size and modification time (a torch
// upgraded in place, same path, needs another adapter).
std::string identityOf(const std::string& libTorch) {
  struct stat info {};
  if (stat(libTorch.c_str(), &info) != 0) return libTorch;
  return libTorch + "\n" + std::to_string(info.st_size) + " " + std::to_string(info.st_mtime);
}

// The adapter under `root`/*/ whose torch.id names `libTorch`.
std::optional<std::string> registeredAdapter(const std::string& root, const std::string& libTorch) {
  const std::string identity = identityOf(libTorch);
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    std::ifstream id(entry.path() / "torch.id");
    std::string path, stamp;
    if (!std::getline(id, path) || !std::getline(id, stamp) || path + "\n" + stamp != identity) continue;
    const fs::path adapter = entry.path() / "libdtype_lint_adapter.so";
    if (fs::exists(adapter, error)) return adapter.string();
  }
  return std::nullopt;
}

// Where adapters built on first use are cached: per boundary version and
// digest of the adapter's sources, so that an upgraded dtype-lint never finds
// one that speaks an older boundary or intercepts ops the older way.
std::string cachedAdapters(const std::string& cache) {
  return cache + "/adapters/boundary-" + std::to_string(DTYPE_LINT_BOUNDARY_VERSION) + "-" DTYPE_LINT_ADAPTER_DIGEST;
}

// Builds an adapter for `libTorch` into the cache with build_adapter.sh and
// the compiler at hand; one line on stderr while it builds. Empty on failure
// (the script said why).
std::string buildAdapter(const std::string& libTorch) {
  const std::string cache = defaultCacheDirectory();
  const std::string script = dataDirectory() + "/runtime_hooks/adapter/build_adapter.sh";
  if (cache.empty() || access(script.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "dtype-lint: error: no runtime adapter for %s, and its sources (%s) are missing: the "
                 "runtime hooks are off for this process\n",
                 libTorch.c_str(), script.c_str());
    return "";
  }
  const std::string out = cachedAdapters(cache) + "/" + std::to_string(std::hash<std::string>{}(identityOf(libTorch)));
  std::fprintf(stderr, "dtype-lint: building the runtime adapter for %s (once; cached in %s)\n", libTorch.c_str(),
               out.c_str());
  const pid_t child = fork();
  if (child < 0) return "";
  if (child == 0) {
    // The build is not the traced program: no hooks in the compiler.
    unsetenv("LD_PRELOAD");
    dup2(2, 1);  // the compiler's output never mixes with the program's stdout
    execl("/bin/sh", "sh", script.c_str(), libTorch.c_str(), out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr,
                 "dtype-lint: error: the runtime adapter for %s could not be built (see above): the runtime "
                 "hooks are off for this process\n",
                 libTorch.c_str());
    return "";
  }
  return out + "/libdtype_lint_adapter.so";
}

// DTYPE_LINT_ADAPTER; else the one built for this LibTorch beside this
// library (lib/adapters/) or in the cache; else one built now.
std::string adapterFor(const std::string& libTorch) {
  if (const char* path = std::getenv("DTYPE_LINT_ADAPTER"); path && *path) return path;
  const std::string libraryDir = directoryOf(reinterpret_cast<const void*>(&adapterFor));
  if (auto adapter = registeredAdapter(libraryDir + "/adapters", libTorch)) return *adapter;
  if (const std::string cache = defaultCacheDirectory(); !cache.empty())
    if (auto adapter = registeredAdapter(cachedAdapters(cache), libTorch)) return *adapter;
  return buildAdapter(libTorch);
}

std::atomic<bool> tried{false};  // once per process, whether or not it works
std::atomic<bool> attached{false};  // the adapter is in
std::mutex attachMutex;

}  // namespace

bool libTorchLoaded() { return loadedLibTorch().has_value(); }

const std::string& dataDirectory() {
  // An installed copy never looks at the source tree, even where one is still there.
  static const std::string dir = [] {
    const std::string libraryDir = directoryOf(reinterpret_cast<const void*>(&dataDirectory));
    std::error_code error;
    if (fs::equivalent(libraryDir, DTYPE_LINT_BUILD_LIBRARY_DIR, error)) return std::string(DTYPE_LINT_SOURCE_DIR);
    const fs::path installed = libraryDir + "/../share/dtype-lint";
    const fs::path canonical = fs::weakly_canonical(installed, error);
    return (error ? installed : canonical).string();
  }();
  return dir;
}

bool attachAdapterIfLibTorchLoaded() {
  if (tried.load(std::memory_order_acquire)) return attached.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(attachMutex);
  if (tried.load(std::memory_order_relaxed)) return attached.load(std::memory_order_relaxed);
  const auto libTorch = loadedLibTorch();
  if (!libTorch) return false;
  tried.store(true, std::memory_order_release);
  const std::string adapter = adapterFor(*libTorch);
  if (adapter.empty()) return false;
  if (!dlopen(adapter.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    std::fprintf(stderr, "dtype-lint: error: LibTorch found but the adapter could not be loaded: %s\n", dlerror());
    return false;
  }
  attached.store(true, std::memory_order_release);
  return true;
}

}  // namespace dtype_lint::runtime

// The prebuilt CUDA scan lies beside this library, in the build tree and installed alike.
extern "C" __attribute__((visibility("default"))) int dtype_lint_runtime_scan_image(const void** image,
                                                                                    uint64_t* size) {
  static const std::string bytes = [] {
    using namespace dtype_lint::runtime;
    std::ifstream in(directoryOf(reinterpret_cast<const void*>(&dataDirectory)) + "/dtype_lint_tensor_stats.fatbin",
                     std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  if (bytes.empty() || !image || !size) return 0;
  *image = bytes.data();
  *size = bytes.size();
  return 1;
}
