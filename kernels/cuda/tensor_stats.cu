// The CUDA scan. A launch covers up to kMaxTensorsPerLaunch tensors: their
// elements are cut into chunks (sized per launch so that one wave of blocks
// covers them), block b takes chunks b, b + gridDim.x, ...; a chunk's
// threads read 16 bytes each per load, four loads in flight, where the chunk
// is aligned (contiguous tensors), element by element through the strides
// otherwise. Elements are classified by integer compares of their magnitude
// bits (no conversion to Float). Each thread keeps its counts across its
// block's chunks of one tensor; the block adds them into the tensor's device
// sums once per tensor it covered, and the last block to finish hands the
// sums to the host (mapped memory) and zeroes them: one kernel per launch,
// no memset and no copy.
#include <atomic>
#include <cstring>
#include <type_traits>

#include "dtype_lint_kernels/element_class.h"
#include "dtype_lint_kernels/tensor_stats_cuda.h"

namespace dtype_lint::kernels {
namespace {

// A thread's counts (32 bits: a thread sees far fewer than 2^32 elements of
// a launch) and its largest finite magnitude as a key (below).
struct Counts {
  uint32_t nonFinite = 0, beyondHalf = 0, halfSubnormal = 0, halfFlushed = 0, nonZero = 0;
  uint32_t maxKey = 0;
};

// A magnitude key is an element's bits without the sign: for IEEE formats
// their integer order is the values' order. Per format, the keys at which
// Half's limits (element_class.h) fall; a Half is never beyond itself or
// flushed.
template <uint32_t infinity, uint32_t beyondHalf, uint32_t halfMinNormal, uint32_t halfMinSubnormal>
struct MagnitudeLimits {
  static __device__ __forceinline__ void add(uint32_t m, Counts& c) {
    const bool finite = m < infinity;
    c.nonFinite += !finite;
    c.nonZero += finite && m != 0;
    c.beyondHalf += finite && m > beyondHalf;
    c.halfSubnormal += m != 0 && m < halfMinNormal;
    c.halfFlushed += m != 0 && m < halfMinSubnormal;
    c.maxKey = max(c.maxKey, finite ? m : 0u);
  }
};
using FloatKeys = MagnitudeLimits<0x7f800000u, 0x477fe000u, 0x38800000u, 0x33800000u>;
using BFloat16Keys = MagnitudeLimits<0x7f80u, 0x477fu, 0x3880u, 0x3380u>;  // a BFloat16 is a Float's high half
using HalfKeys = MagnitudeLimits<0x7c00u, 0x7c00u, 0x0400u, 0x0001u>;

// A Double through the shared classification; its key is its magnitude as Float bits.
__device__ void addDouble(double x, Counts& c) {
  const uint32_t bits = classifyElement(x);
  addClass(bits, c);
  if (!(bits & kNonFinite)) c.maxKey = max(c.maxKey, __float_as_uint(magnitudeAsFloat(x)));
}

// A key back to the value it stands for.
__device__ float magnitudeOfKey(ElementType type, uint32_t key) {
  switch (type) {
  case ElementType::BFloat16: return __uint_as_float(key << 16);
  case ElementType::Half: return halfBitsToFloat(static_cast<uint16_t>(key));
  default: return __uint_as_float(key);
  }
}

__device__ void addElement(const TensorView& v, long long offset, Counts& c) {
  switch (v.type) {
  case ElementType::Float: return FloatKeys::add(static_cast<const uint32_t*>(v.data)[offset] & 0x7fffffffu, c);
  case ElementType::Double: return addDouble(static_cast<const double*>(v.data)[offset], c);
  case ElementType::Half: return HalfKeys::add(static_cast<const uint16_t*>(v.data)[offset] & 0x7fffu, c);
  case ElementType::BFloat16: return BFloat16Keys::add(static_cast<const uint16_t*>(v.data)[offset] & 0x7fffu, c);
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

template <ElementType type>
__device__ __forceinline__ void addVector(const uint4& q, Counts& c) {
  if constexpr (type == ElementType::Double) {
    addDouble(__hiloint2double(static_cast<int>(q.y), static_cast<int>(q.x)), c);
    addDouble(__hiloint2double(static_cast<int>(q.w), static_cast<int>(q.z)), c);
  } else {
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      if constexpr (type == ElementType::Float) {
        FloatKeys::add(words[w] & 0x7fffffffu, c);
      } else {
        using Keys = std::conditional_t<type == ElementType::Half, HalfKeys, BFloat16Keys>;
        Keys::add(words[w] & 0x7fffu, c);
        Keys::add((words[w] >> 16) & 0x7fffu, c);
      }
    }
  }
}

// `vectors` 16-byte vectors from `p`: four loads in flight per thread.
template <ElementType type>
__device__ void scanVectors(const uint4* __restrict__ p, long long vectors, Counts& c) {
  constexpr int kInFlight = 4;
  for (long long k = threadIdx.x; k < vectors; k += kInFlight * blockDim.x) {
    uint4 q[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u)
      if (k + u * blockDim.x < vectors) q[u] = __ldg(p + k + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < kInFlight; ++u)
      if (k + u * blockDim.x < vectors) addVector<type>(q[u], c);
  }
}

// Elements [begin, end) of a contiguous tensor, 16 bytes per load where aligned.
__device__ void scanContiguous(const TensorView& v, long long begin, long long end, Counts& c) {
  const int size = v.type == ElementType::Double ? 8 : v.type == ElementType::Float ? 4 : 2;
  const int perVector = 16 / size;
  const char* base = static_cast<const char*>(v.data);
  long long i = begin;
  if ((reinterpret_cast<uintptr_t>(base + begin * size) % 16) == 0) {
    const long long vectors = (end - begin) / perVector;
    const uint4* p = reinterpret_cast<const uint4*>(base + begin * size);
    switch (v.type) {
    case ElementType::Float: scanVectors<ElementType::Float>(p, vectors, c); break;
    case ElementType::Half: scanVectors<ElementType::Half>(p, vectors, c); break;
    case ElementType::BFloat16: scanVectors<ElementType::BFloat16>(p, vectors, c); break;
    case ElementType::Double: scanVectors<ElementType::Double>(p, vectors, c); break;
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

// Adds a block's counts of a tensor of `type` into its device sums (every thread of the block calls it).
__device__ void addBlockCounts(const Counts& c, ElementType type, unsigned long long elements, DeviceTensorStats& sums,
                               unsigned long long* shared) {
  const unsigned long long totals[5] = {blockSum(c.nonFinite, shared), blockSum(c.beyondHalf, shared),
                                        blockSum(c.halfSubnormal, shared), blockSum(c.halfFlushed, shared),
                                        blockSum(c.nonZero, shared)};
  if (threadIdx.x == 0) {
    atomicAdd(&sums.elements, elements);
    atomicAdd(&sums.nonFinite, totals[0]);
    atomicAdd(&sums.beyondHalf, totals[1]);
    atomicAdd(&sums.halfSubnormal, totals[2]);
    atomicAdd(&sums.halfFlushed, totals[3]);
    atomicAdd(&sums.nonZero, totals[4]);
  }
  uint32_t maxKey = c.maxKey;  // the same format across the block: keys compare
  for (int offset = 16; offset > 0; offset /= 2) maxKey = max(maxKey, __shfl_down_sync(0xffffffffu, maxKey, offset));
  if (threadIdx.x % 32 == 0)  // non-negative: a Float's bit order is its value order
    atomicMax(&sums.absMaxBits, __float_as_uint(magnitudeOfKey(type, maxKey)));
}

// The last block of a launch to finish: moves the launch's sums to `results`
// (zeroing them for the next launch) and resets the ticket.
__device__ void handOverIfLast(int count, DeviceTensorStats* sums, DeviceTensorStats* results, unsigned* ticket) {
  __shared__ bool last;
  __threadfence();  // this block's sums are visible before its ticket is
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int t = threadIdx.x; t < count; t += blockDim.x) {
    DeviceTensorStats r;
    r.elements = atomicExch(&sums[t].elements, 0ull);
    r.nonFinite = atomicExch(&sums[t].nonFinite, 0ull);
    r.beyondHalf = atomicExch(&sums[t].beyondHalf, 0ull);
    r.halfSubnormal = atomicExch(&sums[t].halfSubnormal, 0ull);
    r.halfFlushed = atomicExch(&sums[t].halfFlushed, 0ull);
    r.nonZero = atomicExch(&sums[t].nonZero, 0ull);
    r.absMaxBits = atomicExch(&sums[t].absMaxBits, 0u);
    results[t] = r;
  }
  if (threadIdx.x == 0) *ticket = 0;
  __threadfence_system();  // the host reads the results once the stream passed this kernel
}

}  // namespace

// extern "C": found by name in the prebuilt image (tensor_stats_launch.h).
extern "C" __global__ void __launch_bounds__(kScanThreads, kScanBlocksPerSm)
    dtype_lint_tensor_stats(LaunchArgs args, DeviceTensorStats* sums, DeviceTensorStats* results, unsigned* ticket) {
  __shared__ unsigned long long shared[kScanThreads / 32];
  Counts c;
  int t = 0;  // the tensor of the block's current chunk (chunks only move forward)
  bool any = false;  // c holds counts of tensor t
  unsigned long long elements = 0;
  for (long long chunk = blockIdx.x; chunk < args.chunks; chunk += gridDim.x) {
    int next = t;
    while (next + 1 < args.count && args.tensors[next + 1].firstChunk <= chunk) ++next;
    if (next != t && any) {  // uniform across the block: every thread walks the same chunks
      addBlockCounts(c, args.tensors[t].view.type, elements, sums[t], shared);
      c = Counts();
      elements = 0;
    }
    t = next;
    any = true;
    const LaunchTensor& tensor = args.tensors[t];
    const long long begin = (chunk - tensor.firstChunk) * args.chunkElements;
    const long long end = min(tensor.elements, begin + args.chunkElements);
    elements += static_cast<unsigned long long>(end - begin);
    if (tensor.contiguous) {
      scanContiguous(tensor.view, begin, end, c);
    } else {
      for (long long k = begin + threadIdx.x; k < end; k += blockDim.x)
        addElement(tensor.view, offsetOf(tensor.view, k), c);
    }
  }
  if (any) addBlockCounts(c, args.tensors[t].view.type, elements, sums[t], shared);
  handOverIfLast(args.count, sums, results, ticket);
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
  if (cudaError_t e = cudaMalloc(&w.sums, capacity * sizeof(DeviceTensorStats) + sizeof(unsigned))) return e;
  w.ticket = reinterpret_cast<unsigned*>(w.sums + capacity);
  if (cudaError_t e = cudaMemset(w.sums, 0, capacity * sizeof(DeviceTensorStats) + sizeof(unsigned))) return e;
  if (cudaError_t e = cudaHostAlloc(&w.results, capacity * sizeof(DeviceTensorStats), cudaHostAllocMapped)) return e;
  std::memset(w.results, 0, capacity * sizeof(DeviceTensorStats));
  if (cudaError_t e = cudaHostGetDevicePointer(&w.resultsOnDevice, w.results, 0)) return e;
  return cudaEventCreateWithFlags(&w.done, cudaEventDisableTiming);
}

void destroyCudaStatsWorkspace(CudaStatsWorkspace& w) {
  if (w.done) cudaEventDestroy(w.done);
  if (w.results) cudaFreeHost(w.results);
  if (w.sums) cudaFree(w.sums);
  w = CudaStatsWorkspace{};
}

cudaError_t launchTensorStats(const TensorView* views, size_t count, cudaStream_t stream, CudaStatsWorkspace& w) {
  if (count > w.capacity) return cudaErrorInvalidValue;
  const int sms = smCount();
  for (size_t first = 0; first < count; first += kMaxTensorsPerLaunch) {
    const LaunchArgs args = planLaunch(views, count, first, sms);
    dtype_lint_tensor_stats<<<scanBlocks(args.chunks, sms), kScanThreads, 0, stream>>>(
        args, w.sums + first, w.resultsOnDevice + first, w.ticket);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  return cudaEventRecord(w.done, stream);
}

bool tensorStatsReady(const CudaStatsWorkspace& w) { return cudaEventQuery(w.done) == cudaSuccess; }

void readTensorStats(const CudaStatsWorkspace& w, TensorStats* out, size_t count) {
  for (size_t i = 0; i < count && i < w.capacity; ++i) out[i] = statsOf(w.results[i]);
}

}  // namespace dtype_lint::kernels
