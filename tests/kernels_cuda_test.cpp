// The CUDA scan against the CPU reference, on a GPU when there is one (the
// test skips, saying so, where there is none: CI builds it on machines
// without a GPU). Random and adversarial values, every dtype, aligned and
// misaligned starts, strided views, more tensors than one launch takes, and
// a launch captured into a CUDA graph.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "dtype_lint_kernels/tensor_stats.h"
#include "dtype_lint_kernels/tensor_stats_cuda.h"
#include "tensor_stats_test_support.h"

namespace dtype_lint::kernels {
namespace {

bool haveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

struct HostTensor {
  std::vector<unsigned char> bytes;
  TensorView view;  // points at the host bytes
};

HostTensor randomTensor(std::mt19937& rng, ElementType type, std::vector<int64_t> sizes, int64_t offset) {
  const size_t size = type == ElementType::Double ? 8 : type == ElementType::Float ? 4 : 2;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  HostTensor t;
  t.bytes.resize((n + offset) * size);
  std::uniform_real_distribution<float> exponent(-30.0f, 20.0f);
  const float specials[] = {0.0f, std::numeric_limits<float>::infinity(), std::nanf(""), 65520.0f, 1e-7f, 1e-9f};
  for (int64_t i = 0; i < n + offset; ++i) {
    const float f = rng() % 40 == 0 ? specials[rng() % 6] : std::ldexp(1.0f, static_cast<int>(exponent(rng)));
    unsigned char* at = t.bytes.data() + i * size;
    if (type == ElementType::Double) {
      const double d = f;
      std::memcpy(at, &d, 8);
    } else if (type == ElementType::Float) {
      std::memcpy(at, &f, 4);
    } else if (type == ElementType::Half) {
      const _Float16 h = static_cast<_Float16>(f);
      std::memcpy(at, &h, 2);
    } else {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const uint16_t b = static_cast<uint16_t>(bits >> 16);
      std::memcpy(at, &b, 2);
    }
  }
  t.view = contiguous(t.bytes.data() + offset * size, type, sizes);
  return t;
}

class CudaTensorStats : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveGpu()) GTEST_SKIP() << "no CUDA device here: the CUDA scan is built, not run";
    ASSERT_EQ(createCudaStatsWorkspace(workspace, 64), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  }
  void TearDown() override {
    for (void* p : deviceBuffers) cudaFree(p);
    if (stream) cudaStreamDestroy(stream);
    destroyCudaStatsWorkspace(workspace);
  }
  // The same view over a device copy of the host bytes.
  TensorView onDevice(const HostTensor& t) {
    void* device = nullptr;
    EXPECT_EQ(cudaMalloc(&device, t.bytes.size()), cudaSuccess);
    deviceBuffers.push_back(device);
    cudaMemcpy(device, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice);
    TensorView v = t.view;
    v.data = static_cast<char*>(device) + (static_cast<const unsigned char*>(t.view.data) - t.bytes.data());
    return v;
  }
  std::vector<TensorStats> run(const std::vector<TensorView>& views) {
    EXPECT_EQ(launchTensorStats(views.data(), views.size(), stream, workspace), cudaSuccess);
    cudaStreamSynchronize(stream);
    EXPECT_TRUE(tensorStatsReady(workspace));
    std::vector<TensorStats> out(views.size());
    readTensorStats(workspace, out.data(), out.size());
    return out;
  }
  CudaStatsWorkspace workspace;
  cudaStream_t stream = nullptr;
  std::vector<void*> deviceBuffers;
};

TEST_F(CudaTensorStats, MatchesTheCpuReferenceForManyTensorsPerLaunch) {
  std::mt19937 rng(11);
  std::vector<HostTensor> host;
  const ElementType types[] = {ElementType::Float, ElementType::Half, ElementType::BFloat16, ElementType::Double};
  for (int i = 0; i < 40; ++i)  // more than one launch's kMaxTensorsPerLaunch
    host.push_back(randomTensor(rng, types[i % 4],
                                {1 + static_cast<int64_t>(rng() % 300), 1 + static_cast<int64_t>(rng() % 700)}, i % 3));
  host.push_back(randomTensor(rng, ElementType::Float, {(1 << 20) + 3}, 1));  // several chunks, misaligned
  host.push_back(randomTensor(rng, ElementType::BFloat16, {0, 5}, 0));  // empty
  std::vector<TensorView> views;
  for (const HostTensor& t : host) views.push_back(onDevice(t));
  const std::vector<TensorStats> gpu = run(views);
  for (size_t i = 0; i < host.size(); ++i) {
    SCOPED_TRACE(i);
    expectSame(gpu[i], referenceTensorStats(host[i].view));
  }
}

TEST_F(CudaTensorStats, ReadsStridedViewsThroughTheirStrides) {
  std::mt19937 rng(5);
  HostTensor t = randomTensor(rng, ElementType::Half, {64, 48}, 0);
  TensorView transposed = t.view;
  std::swap(transposed.sizes[0], transposed.sizes[1]);
  std::swap(transposed.strides[0], transposed.strides[1]);
  HostTensor hostTransposed{t.bytes, transposed};
  hostTransposed.view.data = hostTransposed.bytes.data();
  expectSame(run({onDevice(hostTransposed)})[0], referenceTensorStats(hostTransposed.view));
}

// The kernel zeroes its sums for the next launch (there is no memset): each
// launch counts its own tensors only, a launch of empty tensors reads zeros.
TEST_F(CudaTensorStats, LaunchesInARowCountOnlyTheirOwnTensors) {
  std::mt19937 rng(7);
  const HostTensor big = randomTensor(rng, ElementType::BFloat16, {3 << 20}, 0);
  const HostTensor small = randomTensor(rng, ElementType::Float, {17, 5}, 1);
  const HostTensor empty = randomTensor(rng, ElementType::Half, {0}, 0);
  const TensorView bigView = onDevice(big), smallView = onDevice(small), emptyView = onDevice(empty);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    expectSame(run({bigView})[0], referenceTensorStats(big.view));
    expectSame(run({smallView, bigView})[0], referenceTensorStats(small.view));
    expectSame(run({emptyView})[0], TensorStats{});
  }
}

TEST_F(CudaTensorStats, ALaunchCapturedIntoAGraphCountsWhenTheGraphRuns) {
  std::mt19937 rng(3);
  const HostTensor t = randomTensor(rng, ElementType::Float, {4096}, 0);
  const TensorView view = onDevice(t);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(launchTensorStats(&view, 1, stream, workspace), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  cudaStreamSynchronize(stream);
  TensorStats out;
  readTensorStats(workspace, &out, 1);
  expectSame(out, referenceTensorStats(t.view));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace dtype_lint::kernels
