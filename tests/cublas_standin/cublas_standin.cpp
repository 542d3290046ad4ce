// A stand-in for cuBLAS with the symbols dtype-lint interposes, for testing
// the interposition on a machine without a GPU: each function prints the
// arguments it received and returns a status of its own (7), so a test sees
// that the call reached it unchanged. cublasGemmStridedBatchedEx calls
// cublasGemmEx per batch, as a library calling itself would.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cublas_standin.h"

extern "C" {

int cublasGemmEx(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int aType,
                 int lda, const void* B, int bType, int ldb, const void* beta, void* C, int cType, int ldc,
                 int computeType, int algo) {
  std::printf("standin cublasGemmEx m=%d n=%d k=%d types=%d,%d,%d compute=%d lda=%d algo=%d alpha=%g\n", m, n, k, aType,
              bType, cType, computeType, lda, algo, *static_cast<const float*>(alpha));
  (void)handle, (void)transa, (void)transb, (void)A, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
  return kStandinStatus;
}

int cublasGemmStridedBatchedEx(void* handle, int transa, int transb, int m, int n, int k, const void* alpha,
                               const void* A, int aType, int lda, long long strideA, const void* B, int bType, int ldb,
                               long long strideB, const void* beta, void* C, int cType, int ldc, long long strideC,
                               int batchCount, int computeType, int algo) {
  std::printf("standin cublasGemmStridedBatchedEx batch=%d strides=%lld,%lld,%lld\n", batchCount, strideA, strideB,
              strideC);
  for (int b = 0; b < batchCount; ++b)
    cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, aType, lda, B, bType, ldb, beta, C, cType, ldc, computeType,
                 algo);
  return kStandinStatus;
}

int cublasLtMatrixLayoutGetAttribute(void* layout, int attr, void* buf, size_t size, size_t* written) {
  const auto* l = static_cast<const StandinLayout*>(layout);
  auto put = [&](const void* value, size_t valueSize) {
    if (size < valueSize) return 7;
    std::memcpy(buf, value, valueSize);
    *written = valueSize;
    return 0;
  };
  switch (attr) {
  case 0: return put(&l->type, sizeof l->type);
  case 2: return put(&l->rows, sizeof l->rows);
  case 3: return put(&l->cols, sizeof l->cols);
  case 5: return put(&l->batch, sizeof l->batch);
  default: return 7;
  }
}

int cublasLtMatmulDescGetAttribute(void* desc, int attr, void* buf, size_t size, size_t* written) {
  const auto* d = static_cast<const StandinMatmulDesc*>(desc);
  const int32_t value = attr == 0 ? d->computeType : attr == 3 ? d->transA : -1;
  if (value < 0 || size < sizeof value) return 7;
  std::memcpy(buf, &value, sizeof value);
  *written = sizeof value;
  return 0;
}

int cublasLtMatmul(void* lightHandle, void* computeDesc, const void* alpha, const void* A, void* aDesc, const void* B,
                   void* bDesc, const void* beta, const void* C, void* cDesc, void* D, void* dDesc, const void* algo,
                   void* workspace, size_t workspaceSize, void* stream) {
  std::printf("standin cublasLtMatmul workspace=%zu\n", workspaceSize);
  (void)lightHandle, (void)computeDesc, (void)alpha, (void)A, (void)aDesc, (void)B, (void)bDesc, (void)beta, (void)C;
  (void)cDesc, (void)D, (void)dDesc, (void)algo, (void)workspace, (void)stream;
  return kStandinStatus;
}

}  // extern "C"
