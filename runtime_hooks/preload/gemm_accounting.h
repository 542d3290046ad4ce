// DL305's ledger, shared by the dispatcher's GEMMs (preload.cpp) and the
// cuBLAS calls that never pass the dispatcher (cublas_interposer.cpp).
#pragma once

#include "dtype_lint/dl305_precision_profile.h"

namespace dtype_lint::runtime {

// Whether a dispatcher op that already counted its GEMM runs on this thread.
bool dispatcherGemmRunning();
// One GEMM of `flops`, its call site sampled where it has one (a backward's
// GEMMs, run by the autograd engine, have none of the user's).
void addGemm(const GemmKind& kind, double flops, bool hasUserSite = true);

}  // namespace dtype_lint::runtime
