#include "cuda_scan.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>

#include "dtype_lint_runtime/boundary.h"

namespace dtype_lint::runtime {
namespace {

// The driver API's entry points this uses (cuda.h's signatures, its handles as void*).
struct DriverApi {
  using Ptr = unsigned long long;  // CUdeviceptr
  int (*ctxGetCurrent)(void** context);
  int (*ctxGetDevice)(int* device);
  int (*deviceGetAttribute)(int* value, int attribute, int device);
  int (*moduleLoadData)(void** module, const void* image);
  int (*moduleGetFunction)(void** function, void* module, const char* name);
  int (*memAlloc)(Ptr* pointer, size_t bytes);
  int (*memHostAlloc)(void** pointer, size_t bytes, unsigned flags);
  int (*memHostGetDevicePointer)(Ptr* device, void* host, unsigned flags);
  int (*memsetD8)(Ptr pointer, unsigned char value, size_t count);
  int (*launchKernel)(void* function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX, unsigned blockY,
                      unsigned blockZ, unsigned sharedBytes, void* stream, void** parameters, void** extra);
  int (*eventCreate)(void** event, unsigned flags);
  int (*eventRecord)(void* event, void* stream);
  int (*eventQuery)(void* event);
  int (*eventSynchronize)(void* event);
};
constexpr int kSuccess = 0;  // CUDA_SUCCESS
constexpr int kMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr unsigned kEventDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING
constexpr unsigned kHostAllocDeviceMap = 2;  // CU_MEMHOSTALLOC_DEVICEMAP

// The driver the process loaded (PyTorch's CUDA did); none when it loaded none.
const DriverApi* driver() {
  static const DriverApi* api = []() -> const DriverApi* {
    void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!cuda) return nullptr;
    static DriverApi d;
    bool complete = true;
    auto bind = [&](auto& f, const char* symbol) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(cuda, symbol));
      complete = complete && f;
    };
    bind(d.ctxGetCurrent, "cuCtxGetCurrent");
    bind(d.ctxGetDevice, "cuCtxGetDevice");
    bind(d.deviceGetAttribute, "cuDeviceGetAttribute");
    bind(d.moduleLoadData, "cuModuleLoadData");
    bind(d.moduleGetFunction, "cuModuleGetFunction");
    bind(d.memAlloc, "cuMemAlloc_v2");
    bind(d.memHostAlloc, "cuMemHostAlloc");
    bind(d.memHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
    bind(d.memsetD8, "cuMemsetD8_v2");
    bind(d.launchKernel, "cuLaunchKernel");
    bind(d.eventCreate, "cuEventCreate");
    bind(d.eventRecord, "cuEventRecord");
    bind(d.eventQuery, "cuEventQuery");
    bind(d.eventSynchronize, "cuEventSynchronize");
    return complete ? &d : nullptr;
  }();
  return api;
}

// The scan kernel loaded into a context, and that context's device's SMs.
struct LoadedKernel {
  void* function = nullptr;
  int sms = 0;
};

// The kernel in the current context, loaded from the image on first use.
const LoadedKernel* kernelOfCurrentContext(const DriverApi& cu) {
  void* context = nullptr;
  if (cu.ctxGetCurrent(&context) != kSuccess || !context) return nullptr;
  static std::mutex mutex;
  static auto* loaded = new std::map<void*, LoadedKernel>();  // contexts live as long as the process
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded->find(context); it != loaded->end()) return it->second.function ? &it->second : nullptr;
  LoadedKernel& kernel = (*loaded)[context];  // a failure is remembered too
  const void* image = nullptr;
  uint64_t size = 0;
  void* module = nullptr;
  int device = 0;
  if (!dtype_lint_runtime_scan_image(&image, &size) || cu.moduleLoadData(&module, image) != kSuccess ||
      cu.moduleGetFunction(&kernel.function, module, kernels::kScanKernelName) != kSuccess ||
      cu.ctxGetDevice(&device) != kSuccess ||
      cu.deviceGetAttribute(&kernel.sms, kMultiprocessorCount, device) != kSuccess) {
    kernel.function = nullptr;
    return nullptr;
  }
  return &kernel;
}

}  // namespace

bool CudaScan::launch(const std::vector<kernels::TensorView>& views, void* stream) {
  const DriverApi* cu = driver();
  if (!cu || views.size() > capacity_) return false;
  const LoadedKernel* kernel = kernelOfCurrentContext(*cu);
  if (!kernel) return false;
  // The sums (zero between launches) and the ticket on the device; the results in mapped host memory.
  const size_t bytes = capacity_ * sizeof(kernels::DeviceTensorStats);
  if (!done_ && (cu->memAlloc(&sums_, bytes + sizeof(unsigned)) != kSuccess ||
                 cu->memsetD8(sums_, 0, bytes + sizeof(unsigned)) != kSuccess ||
                 cu->memHostAlloc(reinterpret_cast<void**>(&results_), bytes, kHostAllocDeviceMap) != kSuccess ||
                 cu->memHostGetDevicePointer(&resultsOnDevice_, results_, 0) != kSuccess ||
                 cu->eventCreate(&done_, kEventDisableTiming) != kSuccess)) {
    done_ = nullptr;  // never freed: a retry allocates again, at most once per failure
    return false;
  }
  unsigned long long ticket = sums_ + bytes;
  for (size_t first = 0; first < views.size(); first += kernels::kMaxTensorsPerLaunch) {
    kernels::LaunchArgs args = kernels::planLaunch(views.data(), views.size(), first, kernel->sms);
    unsigned long long sums = sums_ + first * sizeof(kernels::DeviceTensorStats);
    unsigned long long results = resultsOnDevice_ + first * sizeof(kernels::DeviceTensorStats);
    void* parameters[] = {&args, &sums, &results, &ticket};
    if (cu->launchKernel(kernel->function, kernels::scanBlocks(args.chunks, kernel->sms), 1, 1, kernels::kScanThreads,
                         1, 1, 0, stream, parameters, nullptr) != kSuccess)
      return false;
  }
  return cu->eventRecord(done_, stream) == kSuccess;
}

bool CudaScan::arrived() const { return done_ && driver()->eventQuery(done_) == kSuccess; }

bool CudaScan::wait() const { return done_ && driver()->eventSynchronize(done_) == kSuccess; }

std::vector<kernels::TensorStats> CudaScan::read(size_t count) const {
  std::vector<kernels::TensorStats> out;
  for (size_t i = 0; i < count && i < capacity_; ++i) out.push_back(kernels::statsOf(results_[i]));
  return out;
}

}  // namespace dtype_lint::runtime
