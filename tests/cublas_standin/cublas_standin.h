// The stand-in cuBLAS's objects and its entry points, as a program calls them.
#pragma once

#include <cstddef>
#include <cstdint>

inline constexpr int kStandinStatus = 7;

struct StandinLayout {  // what cublasLtMatrixLayoutGetAttribute reads
  uint32_t type;  // cudaDataType_t
  uint64_t rows, cols;
  int32_t batch;
};

struct StandinMatmulDesc {  // what cublasLtMatmulDescGetAttribute reads
  int32_t computeType;  // cublasComputeType_t
  int32_t transA;  // cublasOperation_t
};

extern "C" {
int cublasGemmEx(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*,
                 void*, int, int, int, int);
int cublasGemmStridedBatchedEx(void*, int, int, int, int, int, const void*, const void*, int, int, long long,
                               const void*, int, int, long long, const void*, void*, int, int, long long, int, int,
                               int);
int cublasLtMatmul(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*, void*,
                   void*, void*, const void*, void*, size_t, void*);
}
