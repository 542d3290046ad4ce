// GEMMs that never pass the dispatcher (a library calling cuBLAS itself, a
// custom kernel's epilogue): cublasGemmEx, cublasGemmStridedBatchedEx and
// cublasLtMatmul are defined here, ahead of cuBLAS in the lookup order, count
// their FLOPs for DL305 and forward to the real definition with the same
// arguments, returning its status. A call made while a dispatcher op that
// counted its GEMM runs, or from inside another interposed call (cuBLAS
// calling itself), is forwarded uncounted. The signatures use plain integers
// for cuBLAS's enums: no CUDA header here.
//
// The real definition is looked up in the libraries the process has mapped,
// not only in the global scope (RTLD_NEXT): PyTorch's libcublas arrives as a
// dependency of an extension module opened RTLD_LOCAL, which RTLD_NEXT never
// sees. A library loaded after a first call is found by the next one.
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gemm_accounting.h"

namespace dtype_lint::runtime {
namespace {

thread_local int interposedDepth = 0;  // interposed calls running on this thread

// cudaDataType_t values (library_types.h) and cublasComputeType_t's 64F.
std::optional<ScalarType> scalarTypeOfCuda(int dataType) {
  switch (dataType) {
  case 0: return ScalarType::Float;  // CUDA_R_32F
  case 1: return ScalarType::Double;  // CUDA_R_64F
  case 2: return ScalarType::Half;  // CUDA_R_16F
  case 14: return ScalarType::BFloat16;  // CUDA_R_16BF
  default: return std::nullopt;  // FP8, integers, complex: not profiled
  }
}
constexpr int kComputeDouble = 70;  // CUBLAS_COMPUTE_64F
constexpr int kStatusNotInitialized = 1;  // CUBLAS_STATUS_NOT_INITIALIZED

void count(int aType, int bType, int computeType, double flops) {
  if (interposedDepth > 1 || dispatcherGemmRunning() || flops <= 0) return;
  const auto a = scalarTypeOfCuda(aType), b = scalarTypeOfCuda(bType);
  if (!a || !b) return;
  addGemm(kindOfCublasCall(*a, *b, computeType == kComputeDouble), flops);
}

// Whether `address` lies in this library (the preload), whose definitions are the interposers.
bool inThisLibrary(const void* address) {
  Dl_info ours{}, theirs{};
  return dladdr(reinterpret_cast<const void*>(&inThisLibrary), &ours) && dladdr(address, &theirs) &&
         ours.dli_fbase == theirs.dli_fbase;
}

// The definition of `symbol` in a mapped library other than this one: the
// global scope's first, then each mapped library's own scope (its
// dependencies included), as dl_iterate_phdr lists them. The library found
// stays open (RTLD_NOLOAD adds a reference): it cannot be unmapped under a
// call forwarded to it.
void* realDefinition(const char* symbol) {
  if (void* f = dlsym(RTLD_NEXT, symbol); f && !inThisLibrary(f)) return f;
  // Listed first, opened after: dlopen inside dl_iterate_phdr's callback would
  // take the loader's lock it holds.
  std::vector<std::string> mapped;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && info->dlpi_name[0])
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &mapped);
  for (const std::string& path : mapped) {
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    if (void* f = dlsym(handle, symbol); f && !inThisLibrary(f)) return f;
    dlclose(handle);
  }
  return nullptr;
}

// The real definition of `symbol`, looked up until it is found.
template <class Function>
Function real(std::atomic<Function>& cached, const char* symbol) {
  Function f = cached.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<Function>(realDefinition(symbol));
    if (f) cached.store(f, std::memory_order_release);
  }
  return f;
}

// A caller bound to our definition while no library in the process defines
// it (it cannot have linked without one): said once, and the call fails as
// cuBLAS fails before it is set up.
int noRealDefinition(const char* symbol) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr, "dtype-lint: error: %s was called, but no library in this process defines it\n", symbol);
  return kStatusNotInitialized;
}

struct Depth {
  Depth() { ++interposedDepth; }
  ~Depth() { --interposedDepth; }
};

}  // namespace
}  // namespace dtype_lint::runtime

using namespace dtype_lint::runtime;

extern "C" __attribute__((visibility("default"))) int cublasGemmEx(void* handle, int transa, int transb, int m, int n,
                                                                   int k, const void* alpha, const void* A, int aType,
                                                                   int lda, const void* B, int bType, int ldb,
                                                                   const void* beta, void* C, int cType, int ldc,
                                                                   int computeType, int algo) {
  using Fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                     const void*, void*, int, int, int, int);
  static std::atomic<Fn> cached{nullptr};
  const Depth depth;
  count(aType, bType, computeType, 2.0 * m * n * k);
  const Fn f = real(cached, "cublasGemmEx");
  return f ? f(handle, transa, transb, m, n, k, alpha, A, aType, lda, B, bType, ldb, beta, C, cType, ldc, computeType,
               algo)
           : noRealDefinition(__func__);
}

extern "C" __attribute__((visibility("default"))) int
cublasGemmStridedBatchedEx(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A,
                           int aType, int lda, long long strideA, const void* B, int bType, int ldb, long long strideB,
                           const void* beta, void* C, int cType, int ldc, long long strideC, int batchCount,
                           int computeType, int algo) {
  using Fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int,
                     int, long long, const void*, void*, int, int, long long, int, int, int);
  static std::atomic<Fn> cached{nullptr};
  const Depth depth;
  count(aType, bType, computeType, 2.0 * m * n * k * batchCount);
  const Fn f = real(cached, "cublasGemmStridedBatchedEx");
  return f ? f(handle, transa, transb, m, n, k, alpha, A, aType, lda, strideA, B, bType, ldb, strideB, beta, C, cType,
               ldc, strideC, batchCount, computeType, algo)
           : noRealDefinition(__func__);
}

namespace dtype_lint::runtime {
namespace {

// cublasLt's attributes (cublasLt.h): a layout's type, rows, columns and
// batch count; a matmul descriptor's compute type and transposition of A.
enum : int { kLayoutType = 0, kLayoutRows = 2, kLayoutCols = 3, kLayoutBatchCount = 5 };
enum : int { kDescComputeType = 0, kDescTransA = 3 };

using AttributeGetter = int (*)(void*, int, void*, size_t, size_t*);
std::atomic<AttributeGetter> layoutGetter{nullptr}, descGetter{nullptr};

template <class T>
T attribute(std::atomic<AttributeGetter>& getter, const char* symbol, void* object, int attr, T fallback) {
  const AttributeGetter f = real(getter, symbol);
  T value = fallback;
  size_t written = 0;
  if (!f || !object || f(object, attr, &value, sizeof value, &written) != 0 || written != sizeof value) return fallback;
  return value;
}

}  // namespace
}  // namespace dtype_lint::runtime

extern "C" __attribute__((visibility("default"))) int
cublasLtMatmul(void* lightHandle, void* computeDesc, const void* alpha, const void* A, void* aDesc, const void* B,
               void* bDesc, const void* beta, const void* C, void* cDesc, void* D, void* dDesc, const void* algo,
               void* workspace, size_t workspaceSize, void* stream) {
  using Fn = int (*)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*, void*,
                     void*, void*, const void*, void*, size_t, void*);
  static std::atomic<Fn> cached{nullptr};
  const Depth depth;
  if (interposedDepth == 1 && !dispatcherGemmRunning()) {
    auto layout = [&](void* object, int attr, auto fallback) {
      return attribute(layoutGetter, "cublasLtMatrixLayoutGetAttribute", object, attr, fallback);
    };
    auto desc = [&](int attr, auto fallback) {
      return attribute(descGetter, "cublasLtMatmulDescGetAttribute", computeDesc, attr, fallback);
    };
    const double m = static_cast<double>(layout(dDesc, kLayoutRows, uint64_t{0}));
    const double n = static_cast<double>(layout(dDesc, kLayoutCols, uint64_t{0}));
    const bool transposedA = desc(kDescTransA, int32_t{0}) != 0;
    const double k = static_cast<double>(layout(aDesc, transposedA ? kLayoutRows : kLayoutCols, uint64_t{0}));
    const double batch = std::max(1, layout(dDesc, kLayoutBatchCount, int32_t{1}));
    count(static_cast<int>(layout(aDesc, kLayoutType, ~0u)), static_cast<int>(layout(bDesc, kLayoutType, ~0u)),
          desc(kDescComputeType, int32_t{0}), 2 * m * n * k * batch);
  }
  const Fn f = real(cached, "cublasLtMatmul");
  return f ? f(lightHandle, computeDesc, alpha, A, aDesc, B, bDesc, beta, C, cDesc, D, dDesc, algo, workspace,
               workspaceSize, stream)
           : noRealDefinition(__func__);
}
