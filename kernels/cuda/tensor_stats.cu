// The CUDA scan. A launch covers up to kMaxTensorsPerLaunch tensors: their
// elements are cut into chunks, block b takes chunks b, b + gridDim.x, ...;
// a chunk's threads read 16 bytes each per step where the chunk is aligned
// (contiguous tensors), element by element through the strides otherwise.
// Each thread keeps its counts across its block's chunks of one tensor; the
// block adds them into the tensor's device counts once per tensor it covered.
// Chunks are small (64 KiB of Float) so that a tensor of a few MiB still
// spreads over every SM: the grid, not the chunk, bounds the blocks.
#include <atomic>
#include <cstring>

#include "dtype_lint_kernels/element_class.h"
#include "dtype_lint_kernels/tensor_stats_cuda.h"

namespace dtype_lint::kernels {
namespace {

struct Counts {
  unsigned long long nonFinite = 0, beyondHalf = 0, halfSubnormal = 0, halfFlushed = 0, nonZero = 0;
  float absMax = 0;

  template <class Real>
  __device__ void add(Real x) {
    countElement(x, *this);
  }
};

__device__ void addElement(const TensorView& v, long long offset, Counts& c) {
  switch (v.type) {
    case ElementType::Float: return c.add(static_cast<const float*>(v.data)[offset]);
    case ElementType::Double: return c.add(static_cast<const double*>(v.data)[offset]);
    case ElementType::Half: return c.add(halfBitsToFloat(static_cast<const uint16_t*>(v.data)[offset]));
    case ElementType::BFloat16: return c.add(bfloat16BitsToFloat(static_cast<const uint16_t*>(v.data)[offset]));
  }
}

__device__ long long offsetOf(const TensorView& v, long long linear) {
  long long offset = 0;
  for (int d = v.dims - 1; d >= 0; --d) {
    offset += (linear % v.sizes[d]) * v.strides[d];
    linear /= v.sizes[d];
  }
  return offset;
}

// Elements [begin, end) of a contiguous tensor, 16 bytes per load where aligned.
__device__ void scanContiguous(const TensorView& v, long long begin, long long end, Counts& c) {
  const int size = v.type == ElementType::Double ? 8 : v.type == ElementType::Float ? 4 : 2;
  const int perVector = 16 / size;
  const char* base = static_cast<const char*>(v.data);
  const bool aligned = (reinterpret_cast<uintptr_t>(base + begin * size) % 16) == 0;
  long long i = begin;
  if (aligned) {
    const long long vectors = (end - begin) / perVector;
    const uint4* p = reinterpret_cast<const uint4*>(base + begin * size);
    for (long long k = threadIdx.x; k < vectors; k += blockDim.x) {
      const uint4 q = p[k];
      const uint32_t words[4] = {q.x, q.y, q.z, q.w};
      for (int w = 0; w < 4; ++w) {
        switch (v.type) {
          case ElementType::Float: c.add(floatFromBits(words[w])); break;
          case ElementType::Half:
            c.add(halfBitsToFloat(static_cast<uint16_t>(words[w])));
            c.add(halfBitsToFloat(static_cast<uint16_t>(words[w] >> 16)));
            break;
          case ElementType::BFloat16:
            c.add(bfloat16BitsToFloat(static_cast<uint16_t>(words[w])));
            c.add(bfloat16BitsToFloat(static_cast<uint16_t>(words[w] >> 16)));
            break;
          case ElementType::Double:
            if (w % 2 == 0) c.add(__hiloint2double(static_cast<int>(words[w + 1]), static_cast<int>(words[w])));
            break;
        }
      }
    }
    i = begin + vectors * perVector;
  }
  for (long long k = i + threadIdx.x; k < end; k += blockDim.x) addElement(v, k, c);
}

__device__ unsigned long long blockSum(unsigned long long value, unsigned long long* shared) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = value;
  __syncthreads();
  value = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : 0;
  if (threadIdx.x < 32)
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  __syncthreads();
  return value;
}

// Adds a block's counts of tensor `t` into its device counts (every thread of the block calls it).
__device__ void addBlockCounts(const Counts& c, unsigned long long elements, DeviceTensorStats& out,
                               unsigned long long* shared) {
  const unsigned long long totals[5] = {blockSum(c.nonFinite, shared), blockSum(c.beyondHalf, shared),
                                        blockSum(c.halfSubnormal, shared), blockSum(c.halfFlushed, shared),
                                        blockSum(c.nonZero, shared)};
  if (threadIdx.x == 0) {
    atomicAdd(&out.elements, elements);
    atomicAdd(&out.nonFinite, totals[0]);
    atomicAdd(&out.beyondHalf, totals[1]);
    atomicAdd(&out.halfSubnormal, totals[2]);
    atomicAdd(&out.halfFlushed, totals[3]);
    atomicAdd(&out.nonZero, totals[4]);
  }
  float absMax = c.absMax;
  for (int offset = 16; offset > 0; offset /= 2) absMax = fmaxf(absMax, __shfl_down_sync(0xffffffffu, absMax, offset));
  if (threadIdx.x % 32 == 0) atomicMax(&out.absMaxBits, __float_as_uint(absMax));  // non-negative: bit order is value order
}

}  // namespace

// extern "C": found by name in the prebuilt image (tensor_stats_launch.h).
extern "C" __global__ void __launch_bounds__(kScanThreads) dtype_lint_tensor_stats(LaunchArgs args, DeviceTensorStats* out) {
  __shared__ unsigned long long shared[kScanThreads / 32];
  Counts c;
  int t = 0;         // the tensor of the block's current chunk (chunks only move forward)
  bool any = false;  // c holds counts of tensor t
  unsigned long long elements = 0;
  for (long long chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    int next = t;
    while (next + 1 < args.count && args.tensors[next + 1].firstChunk <= chunk) ++next;
    if (next != t && any) {  // uniform across the block: every thread walks the same chunks
      addBlockCounts(c, elements, out[t], shared);
      c = Counts();
      elements = 0;
    }
    t = next;
    any = true;
    const LaunchTensor& tensor = args.tensors[t];
    const long long begin = (chunk - tensor.firstChunk) * kChunkElements;
    const long long end = min(tensor.elements, begin + kChunkElements);
    elements += static_cast<unsigned long long>(end - begin);
    if (tensor.contiguous) {
      scanContiguous(tensor.view, begin, end, c);
    } else {
      for (long long k = begin + threadIdx.x; k < end; k += blockDim.x) addElement(tensor.view, offsetOf(tensor.view, k), c);
    }
  }
  if (any) addBlockCounts(c, elements, out[t], shared);
}

namespace {

// The SMs of the current device (looked up once per device).
int smCount() {
  static std::atomic<int> sms[64];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return 0;
  int known = sms[device].load(std::memory_order_relaxed);
  if (known == 0 && cudaDeviceGetAttribute(&known, cudaDevAttrMultiProcessorCount, device) == cudaSuccess)
    sms[device].store(known, std::memory_order_relaxed);
  return known;
}

}  // namespace

cudaError_t createCudaStatsWorkspace(CudaStatsWorkspace& w, size_t capacity) {
  w.capacity = capacity;
  if (cudaError_t e = cudaMalloc(&w.device, capacity * sizeof(DeviceTensorStats))) return e;
  if (cudaError_t e = cudaMallocHost(&w.pinned, capacity * sizeof(DeviceTensorStats))) return e;
  std::memset(w.pinned, 0, capacity * sizeof(DeviceTensorStats));
  return cudaEventCreateWithFlags(&w.copied, cudaEventDisableTiming);
}

void destroyCudaStatsWorkspace(CudaStatsWorkspace& w) {
  if (w.copied) cudaEventDestroy(w.copied);
  if (w.pinned) cudaFreeHost(w.pinned);
  if (w.device) cudaFree(w.device);
  w = CudaStatsWorkspace{};
}

cudaError_t launchTensorStats(const TensorView* views, size_t count, cudaStream_t stream, CudaStatsWorkspace& w) {
  if (count > w.capacity) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemsetAsync(w.device, 0, count * sizeof(DeviceTensorStats), stream)) return e;
  for (size_t first = 0; first < count; first += kMaxTensorsPerLaunch) {
    const LaunchArgs args = planLaunch(views, count, first);
    if (args.chunks == 0) continue;
    dtype_lint_tensor_stats<<<scanBlocks(args.chunks, smCount()), kScanThreads, 0, stream>>>(args, w.device + first);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  if (cudaError_t e = cudaMemcpyAsync(w.pinned, w.device, count * sizeof(DeviceTensorStats),
                                      cudaMemcpyDeviceToHost, stream))
    return e;
  return cudaEventRecord(w.copied, stream);
}

bool tensorStatsReady(const CudaStatsWorkspace& w) { return cudaEventQuery(w.copied) == cudaSuccess; }

void readTensorStats(const CudaStatsWorkspace& w, TensorStats* out, size_t count) {
  for (size_t i = 0; i < count && i < w.capacity; ++i) out[i] = statsOf(w.pinned[i]);
}

}  // namespace dtype_lint::kernels
