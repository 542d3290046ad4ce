// The CUDA scan. A launch covers up to kMaxTensorsPerLaunch tensors: their
// elements are cut into chunks, block b takes chunks b, b + gridDim.x, ...;
// a chunk's threads read 16 bytes each per step where the chunk is aligned
// (contiguous tensors), element by element through the strides otherwise,
// and add their block's counts into the tensor's device counts.
#include <cstring>

#include "dtype_lint_kernels/element_class.h"
#include "dtype_lint_kernels/tensor_stats_cuda.h"

namespace dtype_lint::kernels {
namespace {

constexpr int kThreads = 256;
constexpr long long kChunkElements = 1 << 18;

struct LaunchTensor {
  TensorView view;
  long long elements;
  long long firstChunk;  // chunks before this tensor's, in the launch
  bool contiguous;
};

struct LaunchArgs {  // passed by value: 16 tensors, well inside the 4 KiB of kernel parameters
  LaunchTensor tensors[kMaxTensorsPerLaunch];
  int count;
  long long chunks;
};

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

__global__ void __launch_bounds__(kThreads) tensorStatsKernel(LaunchArgs args, DeviceTensorStats* out) {
  __shared__ unsigned long long shared[kThreads / 32];
  for (long long chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    int t = 0;
    while (t + 1 < args.count && args.tensors[t + 1].firstChunk <= chunk) ++t;
    const LaunchTensor& tensor = args.tensors[t];
    const long long begin = (chunk - tensor.firstChunk) * kChunkElements;
    const long long end = min(tensor.elements, begin + kChunkElements);
    Counts c;
    if (tensor.contiguous) {
      scanContiguous(tensor.view, begin, end, c);
    } else {
      for (long long k = begin + threadIdx.x; k < end; k += blockDim.x) addElement(tensor.view, offsetOf(tensor.view, k), c);
    }
    const unsigned long long totals[5] = {blockSum(c.nonFinite, shared), blockSum(c.beyondHalf, shared),
                                          blockSum(c.halfSubnormal, shared), blockSum(c.halfFlushed, shared),
                                          blockSum(c.nonZero, shared)};
    if (threadIdx.x == 0) {
      DeviceTensorStats& o = out[t];
      atomicAdd(&o.elements, static_cast<unsigned long long>(end - begin));
      atomicAdd(&o.nonFinite, totals[0]);
      atomicAdd(&o.beyondHalf, totals[1]);
      atomicAdd(&o.halfSubnormal, totals[2]);
      atomicAdd(&o.halfFlushed, totals[3]);
      atomicAdd(&o.nonZero, totals[4]);
    }
    float absMax = c.absMax;
    for (int offset = 16; offset > 0; offset /= 2) absMax = fmaxf(absMax, __shfl_down_sync(0xffffffffu, absMax, offset));
    if (threadIdx.x % 32 == 0) atomicMax(&out[t].absMaxBits, __float_as_uint(absMax));  // non-negative: bit order is value order
  }
}

long long elementCount(const TensorView& v) {
  long long n = 1;
  for (int d = 0; d < v.dims; ++d) n *= v.sizes[d] > 0 ? v.sizes[d] : 0;
  return n;
}

bool isContiguous(const TensorView& v) {
  long long expected = 1;
  for (int d = v.dims - 1; d >= 0; --d) {
    if (v.sizes[d] != 1 && v.strides[d] != expected) return false;
    expected *= v.sizes[d];
  }
  return true;
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
    LaunchArgs args{};
    args.count = static_cast<int>(count - first < kMaxTensorsPerLaunch ? count - first : kMaxTensorsPerLaunch);
    for (int t = 0; t < args.count; ++t) {
      LaunchTensor& tensor = args.tensors[t];
      tensor.view = views[first + t];
      tensor.elements = tensor.view.data ? elementCount(tensor.view) : 0;
      tensor.firstChunk = args.chunks;
      tensor.contiguous = isContiguous(tensor.view);
      args.chunks += (tensor.elements + kChunkElements - 1) / kChunkElements;
    }
    if (args.chunks == 0) continue;
    const unsigned blocks = static_cast<unsigned>(args.chunks < 4096 ? args.chunks : 4096);
    tensorStatsKernel<<<blocks, kThreads, 0, stream>>>(args, w.device + first);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  if (cudaError_t e = cudaMemcpyAsync(w.pinned, w.device, count * sizeof(DeviceTensorStats),
                                      cudaMemcpyDeviceToHost, stream))
    return e;
  return cudaEventRecord(w.copied, stream);
}

bool tensorStatsReady(const CudaStatsWorkspace& w) { return cudaEventQuery(w.copied) == cudaSuccess; }

void readTensorStats(const CudaStatsWorkspace& w, TensorStats* out, size_t count) {
  for (size_t i = 0; i < count && i < w.capacity; ++i) {
    const DeviceTensorStats& d = w.pinned[i];
    float absMax;
    std::memcpy(&absMax, &d.absMaxBits, sizeof absMax);
    out[i] = TensorStats{d.elements, d.nonFinite, d.beyondHalf, d.halfSubnormal, d.halfFlushed, d.nonZero, absMax};
  }
}

}  // namespace dtype_lint::kernels
