// The tensor-health scan against memcpy, per source byte, in one run: the
// scan reads what memcpy reads and writes nothing, so beyond the last-level
// cache it must be at least as fast. CUDA: the scan's read bandwidth against
// a device-to-device copy's read+write bandwidth (where a GPU is present).
// Wall time: the scan splits large tensors across threads.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "dtype_lint_kernels/tensor_stats.h"

#ifdef DTYPE_LINT_BENCH_CUDA
#include <cuda_runtime_api.h>

#include "dtype_lint_kernels/tensor_stats_cuda.h"
#endif

namespace {

using dtype_lint::kernels::ElementType;

// Random bits as Float or BFloat16 values of every magnitude, some inf/NaN.
std::vector<unsigned char> randomValues(size_t bytes) {
  std::vector<unsigned char> data(bytes);
  std::mt19937 rng(1);
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    const uint32_t bits = rng();
    std::memcpy(data.data() + i, &bits, 4);
  }
  return data;
}

dtype_lint::kernels::TensorView viewOf(const void* data, ElementType type, size_t bytes) {
  dtype_lint::kernels::TensorView v;
  v.data = data;
  v.type = type;
  v.dims = 1;
  v.sizes[0] = static_cast<int64_t>(bytes / (type == ElementType::Float ? 4 : 2));
  v.strides[0] = 1;
  return v;
}

template <ElementType type>
void BM_StatsCPU(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const auto data = randomValues(bytes);
  const auto view = viewOf(data.data(), type, bytes);
  dtype_lint::kernels::TensorStats stats;
  for (auto _ : state) {
    dtype_lint::kernels::computeTensorStats(&view, 1, &stats);
    benchmark::DoNotOptimize(stats);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void BM_MemcpyCPU(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const auto source = randomValues(bytes);
  std::vector<unsigned char> destination(bytes);
  for (auto _ : state) {
    std::memcpy(destination.data(), source.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

constexpr int64_t kSmallest = 4 << 10, kLargest = 256 << 20;
BENCHMARK(BM_StatsCPU<ElementType::Float>)
    ->Name("BM_StatsCPU/Float")
    ->RangeMultiplier(8)
    ->Range(kSmallest, kLargest)
    ->UseRealTime();
BENCHMARK(BM_StatsCPU<ElementType::BFloat16>)
    ->Name("BM_StatsCPU/BFloat16")
    ->RangeMultiplier(8)
    ->Range(kSmallest, kLargest)
    ->UseRealTime();
BENCHMARK(BM_MemcpyCPU)->RangeMultiplier(8)->Range(kSmallest, kLargest)->UseRealTime();

#ifdef DTYPE_LINT_BENCH_CUDA
bool haveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

template <ElementType type>
void BM_StatsCUDA(benchmark::State& state) {
  if (!haveGpu()) return state.SkipWithError("no CUDA device");
  const size_t bytes = static_cast<size_t>(state.range(0));
  const auto host = randomValues(bytes);
  void* device = nullptr;
  cudaMalloc(&device, bytes);
  cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice);
  const auto view = viewOf(device, type, bytes);
  dtype_lint::kernels::CudaStatsWorkspace workspace;
  dtype_lint::kernels::createCudaStatsWorkspace(workspace, 1);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (auto _ : state) {
    cudaEventRecord(start);
    dtype_lint::kernels::launchTensorStats(&view, 1, nullptr, workspace);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  dtype_lint::kernels::destroyCudaStatsWorkspace(workspace);
  cudaFree(device);
}

// Counts read + written bytes: the copy's full bandwidth.
void BM_MemcpyCUDA(benchmark::State& state) {
  if (!haveGpu()) return state.SkipWithError("no CUDA device");
  const size_t bytes = static_cast<size_t>(state.range(0));
  void *source = nullptr, *destination = nullptr;
  cudaMalloc(&source, bytes);
  cudaMalloc(&destination, bytes);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (auto _ : state) {
    cudaEventRecord(start);
    cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * bytes));
  cudaFree(source);
  cudaFree(destination);
}

BENCHMARK(BM_StatsCUDA<ElementType::Float>)
    ->Name("BM_StatsCUDA/Float")
    ->RangeMultiplier(8)
    ->Range(kSmallest, kLargest)
    ->UseManualTime();
BENCHMARK(BM_StatsCUDA<ElementType::Half>)
    ->Name("BM_StatsCUDA/Half")
    ->RangeMultiplier(8)
    ->Range(kSmallest, kLargest)
    ->UseManualTime();
BENCHMARK(BM_StatsCUDA<ElementType::BFloat16>)
    ->Name("BM_StatsCUDA/BFloat16")
    ->RangeMultiplier(8)
    ->Range(kSmallest, kLargest)
    ->UseManualTime();
BENCHMARK(BM_MemcpyCUDA)->RangeMultiplier(8)->Range(kSmallest, kLargest)->UseManualTime();
#endif

}  // namespace

BENCHMARK_MAIN();
