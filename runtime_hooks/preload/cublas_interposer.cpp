// GEMMs that never pass the dispatcher (a library calling cuBLAS itself, a
// custom kernel's epilogue): cublasGemmEx, cublasGemmStridedBatchedEx and
// cublasLtMatmul are defined here, ahead of cuBLAS in the lookup order, count
// their FLOPs for DL305 and forward to the next definition (the real one)
// with the same arguments, returning its status. A call made while a
// dispatcher op that counted its GEMM runs, or from inside another
// interposed call (cuBLAS calling itself), is forwarded uncounted. The
// signatures use plain integers for cuBLAS's enums: no CUDA header here.
#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "gemm_accounting.h"

namespace dtype_lint::runtime {
namespace {

thread_local int interposedDepth = 0;  // interposed calls running on this thread

// cudaDataType_t values (library_types.h) and cublasComputeType_t's 64F.
std::optional<ScalarType> scalarTypeOfCuda(int dataType) {
  switch (dataType) {
    case 0: return ScalarType::Float;      // CUDA_R_32F
    case 1: return ScalarType::Double;     // CUDA_R_64F
    case 2: return ScalarType::Half;       // CUDA_R_16F
    case 14: return ScalarType::BFloat16;  // CUDA_R_16BF
    default: return std::nullopt;          // FP8, integers, complex: not profiled
  }
}
constexpr int kComputeDouble = 70;  // CUBLAS_COMPUTE_64F

void count(int aType, int bType, int computeType, double flops) {
  if (interposedDepth > 1 || dispatcherGemmRunning() || flops <= 0) return;
  const auto a = scalarTypeOfCuda(aType), b = scalarTypeOfCuda(bType);
  if (!a || !b) return;
  const ScalarType ranIn = computeType == kComputeDouble ? ScalarType::Double : *a;
  addGemm(GemmKind{std::string(name(*a)) + " x " + std::string(name(*b)), ranIn, AutocastAtGemm::Unknown}, flops);
}

// The next definition of `symbol` (cuBLAS's), looked up once.
template <class Function>
Function next(std::atomic<Function>& cached, const char* symbol) {
  Function f = cached.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<Function>(dlsym(RTLD_NEXT, symbol));
    cached.store(f, std::memory_order_release);
  }
  return f;
}

struct Depth {
  Depth() { ++interposedDepth; }
  ~Depth() { --interposedDepth; }
};

constexpr int kStatusNotInitialized = 1;  // CUBLAS_STATUS_NOT_INITIALIZED: no cuBLAS after us

}  // namespace
}  // namespace dtype_lint::runtime

using namespace dtype_lint::runtime;

extern "C" __attribute__((visibility("default"))) int cublasGemmEx(
    void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int aType, int lda,
    const void* B, int bType, int ldb, const void* beta, void* C, int cType, int ldc, int computeType, int algo) {
  using Fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                     const void*, void*, int, int, int, int);
  static std::atomic<Fn> real{nullptr};
  const Depth depth;
  count(aType, bType, computeType, 2.0 * m * n * k);
  const Fn f = next(real, "cublasGemmEx");
  return f ? f(handle, transa, transb, m, n, k, alpha, A, aType, lda, B, bType, ldb, beta, C, cType, ldc, computeType, algo)
           : kStatusNotInitialized;
}

extern "C" __attribute__((visibility("default"))) int cublasGemmStridedBatchedEx(
    void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int aType, int lda,
    long long strideA, const void* B, int bType, int ldb, long long strideB, const void* beta, void* C, int cType,
    int ldc, long long strideC, int batchCount, int computeType, int algo) {
  using Fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int,
                     int, long long, const void*, void*, int, int, long long, int, int, int);
  static std::atomic<Fn> real{nullptr};
  const Depth depth;
  count(aType, bType, computeType, 2.0 * m * n * k * batchCount);
  const Fn f = next(real, "cublasGemmStridedBatchedEx");
  return f ? f(handle, transa, transb, m, n, k, alpha, A, aType, lda, strideA, B, bType, ldb, strideB, beta, C, cType,
               ldc, strideC, batchCount, computeType, algo)
           : kStatusNotInitialized;
}

namespace dtype_lint::runtime {
namespace {

// cublasLt's attributes (cublasLt.h): a layout's type, rows, columns and
// batch count; a matmul descriptor's compute type and transposition of A.
enum : int { kLayoutType = 0, kLayoutRows = 2, kLayoutCols = 3, kLayoutBatchCount = 5 };
enum : int { kDescComputeType = 0, kDescTransA = 3 };

template <class T>
T attribute(const char* getter, void* object, int attr, T fallback) {
  using Fn = int (*)(void*, int, void*, size_t, size_t*);
  const auto f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, getter));
  T value = fallback;
  size_t written = 0;
  if (!f || !object || f(object, attr, &value, sizeof value, &written) != 0 || written != sizeof value) return fallback;
  return value;
}

}  // namespace
}  // namespace dtype_lint::runtime

extern "C" __attribute__((visibility("default"))) int cublasLtMatmul(
    void* lightHandle, void* computeDesc, const void* alpha, const void* A, void* aDesc, const void* B, void* bDesc,
    const void* beta, const void* C, void* cDesc, void* D, void* dDesc, const void* algo, void* workspace,
    size_t workspaceSize, void* stream) {
  using Fn = int (*)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*, void*,
                     void*, void*, const void*, void*, size_t, void*);
  static std::atomic<Fn> real{nullptr};
  const Depth depth;
  if (interposedDepth == 1 && !dispatcherGemmRunning()) {
    constexpr const char* kLayout = "cublasLtMatrixLayoutGetAttribute";
    constexpr const char* kDesc = "cublasLtMatmulDescGetAttribute";
    const double m = static_cast<double>(attribute<uint64_t>(kLayout, dDesc, kLayoutRows, 0));
    const double n = static_cast<double>(attribute<uint64_t>(kLayout, dDesc, kLayoutCols, 0));
    const bool transposedA = attribute<int32_t>(kDesc, computeDesc, kDescTransA, 0) != 0;
    const double k = static_cast<double>(attribute<uint64_t>(kLayout, aDesc, transposedA ? kLayoutRows : kLayoutCols, 0));
    const double batch = std::max(1, attribute<int32_t>(kLayout, dDesc, kLayoutBatchCount, 1));
    count(static_cast<int>(attribute<uint32_t>(kLayout, aDesc, kLayoutType, ~0u)),
          static_cast<int>(attribute<uint32_t>(kLayout, bDesc, kLayoutType, ~0u)),
          attribute<int32_t>(kDesc, computeDesc, kDescComputeType, 0), 2 * m * n * k * batch);
  }
  const Fn f = next(real, "cublasLtMatmul");
  return f ? f(lightHandle, computeDesc, alpha, A, aDesc, B, bDesc, beta, C, cDesc, D, dDesc, algo, workspace,
               workspaceSize, stream)
           : kStatusNotInitialized;
}
