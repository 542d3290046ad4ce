// GEMMs straight through cuBLAS (the stand-in), with no LibTorch in the
// process: what DL305 counts outside the dispatcher. A library, as PyTorch's
// CUDA code is: programs link it (cuBLAS then in the global scope) or open it
// RTLD_LOCAL (cuBLAS then only in its own scope, as in a Python extension).
#include <cstdio>

#include "cublas_standin/cublas_standin.h"

extern "C" __attribute__((visibility("default"))) void callCublasGemms() {
  const float alpha = 1.5f, beta = 0.0f;
  // Half operands, Float accumulation: 2 * 64 * 32 * 16 = 65536 FLOP.
  int status = cublasGemmEx(nullptr, 0, 0, 64, 32, 16, &alpha, nullptr, 2, 64, nullptr, 2, 16, &beta, nullptr, 2, 64,
                            68, -1);
  std::printf("gemm status %d\n", status);
  // Float, 4 batches of 8x8x8: 4096 FLOP (the stand-in's own per-batch calls are not counted again).
  status = cublasGemmStridedBatchedEx(nullptr, 0, 0, 8, 8, 8, &alpha, nullptr, 0, 8, 64, nullptr, 0, 8, 64, &beta,
                                      nullptr, 0, 8, 64, 4, 68, -1);
  std::printf("batched status %d\n", status);
  // BFloat16 through cublasLt, A transposed (32x128 stored), 2 batches of 128x64x32: 1048576 FLOP.
  StandinLayout a{14, 32, 128, 2}, b{14, 32, 64, 2}, d{14, 128, 64, 2};
  StandinMatmulDesc desc{68, 1};
  status = cublasLtMatmul(nullptr, &desc, &alpha, nullptr, &a, nullptr, &b, &beta, nullptr, &d, nullptr, &d, nullptr,
                          nullptr, 4096, nullptr);
  std::printf("lt status %d\n", status);
}
