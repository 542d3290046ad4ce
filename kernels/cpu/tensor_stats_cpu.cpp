// The CPU scan: Highway compiles the contiguous-run kernels below once per
// instruction set and dispatches to the best one this CPU has at run time.
// Float and BFloat16 are classified as floats; Half on its bits (its values
// are never beyond its own range, and its subnormals are the exponent-0 ones).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/tensor_stats_cpu.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "dtype_lint_kernels/element_class.h"
#include "dtype_lint_kernels/tensor_stats.h"

HWY_BEFORE_NAMESPACE();
namespace dtype_lint::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Per-lane int32 counters, added into the 64-bit totals before they can overflow.
constexpr size_t kVectorsPerFlush = size_t{1} << 20;

// Int32 lanes of at most 2^20 each: their sum fits.
template <class DI>
HWY_INLINE uint64_t Total(DI di, hn::Vec<DI> lanes) {
  return static_cast<uint64_t>(hn::GetLane(hn::SumOfLanes(di, lanes)));
}

// A mask as a vector counts -1 per true lane: subtracting it counts up.
#define DTYPE_LINT_COUNT(acc, mask) acc = hn::Sub(acc, hn::BitCast(di, hn::VecFromMask(df, mask)))

template <class D>
struct FloatCounters {
  using DI = hn::RebindToSigned<D>;
  hn::Vec<DI> nonFinite, beyondHalf, halfSubnormal, halfFlushed, nonZero;
  hn::Vec<D> absMax;
  explicit FloatCounters(D df) {
    const DI di;
    nonFinite = beyondHalf = halfSubnormal = halfFlushed = nonZero = hn::Zero(di);
    absMax = hn::Zero(df);
  }
  HWY_INLINE void Add(D df, hn::Vec<D> v) {
    const DI di;
    const auto a = hn::Abs(v);
    const auto finite = hn::Lt(a, hn::Set(df, std::numeric_limits<float>::infinity()));
    const auto positive = hn::And(finite, hn::Gt(a, hn::Zero(df)));
    DTYPE_LINT_COUNT(nonFinite, hn::Not(finite));
    DTYPE_LINT_COUNT(beyondHalf, hn::And(finite, hn::Gt(a, hn::Set(df, kHalfMax))));
    DTYPE_LINT_COUNT(halfSubnormal, hn::And(positive, hn::Lt(a, hn::Set(df, kHalfMinNormal))));
    DTYPE_LINT_COUNT(halfFlushed, hn::And(positive, hn::Lt(a, hn::Set(df, kHalfMinSubnormal))));
    DTYPE_LINT_COUNT(nonZero, positive);
    absMax = hn::Max(absMax, hn::IfThenElseZero(finite, a));
  }
  HWY_INLINE void Flush(D df, TensorStats& s) {
    const DI di;
    s.nonFinite += Total(di, nonFinite);
    s.beyondHalf += Total(di, beyondHalf);
    s.halfSubnormal += Total(di, halfSubnormal);
    s.halfFlushed += Total(di, halfFlushed);
    s.nonZero += Total(di, nonZero);
    s.absMax = std::max(s.absMax, hn::GetLane(hn::MaxOfLanes(df, absMax)));
    nonFinite = beyondHalf = halfSubnormal = halfFlushed = nonZero = hn::Zero(di);
  }
};

template <class Load>
HWY_INLINE void ScanAsFloats(size_t n, Load load, TensorStats& s) {
  const hn::ScalableTag<float> df;
  const size_t lanes = hn::Lanes(df);
  FloatCounters<decltype(df)> counters(df);
  size_t i = 0, sinceFlush = 0;
  for (; i + lanes <= n; i += lanes) {
    counters.Add(df, load(df, i));
    if (++sinceFlush == kVectorsPerFlush) {
      counters.Flush(df, s);
      sinceFlush = 0;
    }
  }
  if (i < n) {  // the tail, padded with zeros (which count as nothing)
    const auto keep = hn::FirstN(df, n - i);
    counters.Add(df, hn::IfThenElseZero(keep, load(df, i, n - i)));
  }
  counters.Flush(df, s);
}

void ScanFloat(const float* p, size_t n, TensorStats* s) {
  ScanAsFloats(
      n,
      [p](auto df, size_t i, size_t valid = 0) {
        if (valid == 0) return hn::LoadU(df, p + i);
        HWY_ALIGN float tail[hn::MaxLanes(decltype(df)())] = {};
        std::memcpy(tail, p + i, valid * sizeof(float));
        return hn::Load(df, tail);
      },
      *s);
}

void ScanBFloat16(const uint16_t* p, size_t n, TensorStats* s) {
  ScanAsFloats(
      n,
      [p](auto df, size_t i, size_t valid = 0) {
        const hn::RebindToUnsigned<decltype(df)> du32;
        const hn::Rebind<uint16_t, decltype(df)> du16;
        hn::Vec<decltype(du16)> bits;
        if (valid == 0) {
          bits = hn::LoadU(du16, p + i);
        } else {
          HWY_ALIGN uint16_t tail[hn::MaxLanes(decltype(du16)())] = {};
          std::memcpy(tail, p + i, valid * sizeof(uint16_t));
          bits = hn::Load(du16, tail);
        }
        return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du32, bits)));  // exact, inf/NaN included
      },
      *s);
}

// Half on its bits (widened to int32 lanes): exponent 31 is inf/NaN,
// exponent 0 with a mantissa is subnormal; the largest finite magnitude is
// converted once at the end.
void ScanHalf(const uint16_t* p, size_t n, TensorStats* s) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint16_t, decltype(di)> d16;
  const hn::RebindToUnsigned<decltype(di)> du;
  const size_t lanes = hn::Lanes(di);
  const auto magnitudeMask = hn::Set(di, 0x7fff);
  const auto infBits = hn::Set(di, 0x7c00);
  const auto minNormalBits = hn::Set(di, 0x0400);
  auto nonFinite = hn::Zero(di), subnormal = hn::Zero(di), nonZero = hn::Zero(di), maxBits = hn::Zero(di);
  auto flush = [&] {
    s->nonFinite += Total(di, nonFinite);
    s->halfSubnormal += Total(di, subnormal);
    s->nonZero += Total(di, nonZero);
    nonFinite = subnormal = nonZero = hn::Zero(di);
  };
  auto add = [&](hn::Vec<decltype(d16)> bits) {
    const auto magnitude = hn::And(hn::BitCast(di, hn::PromoteTo(du, bits)), magnitudeMask);
    const auto finite = hn::Lt(magnitude, infBits);
    const auto positive = hn::And(finite, hn::Gt(magnitude, hn::Zero(di)));
    nonFinite = hn::Sub(nonFinite, hn::VecFromMask(di, hn::Not(finite)));
    subnormal = hn::Sub(subnormal, hn::VecFromMask(di, hn::And(positive, hn::Lt(magnitude, minNormalBits))));
    nonZero = hn::Sub(nonZero, hn::VecFromMask(di, positive));
    maxBits = hn::Max(maxBits, hn::IfThenElseZero(finite, magnitude));
  };
  size_t i = 0, sinceFlush = 0;
  for (; i + lanes <= n; i += lanes) {
    add(hn::LoadU(d16, p + i));
    if (++sinceFlush == kVectorsPerFlush) {
      flush();
      sinceFlush = 0;
    }
  }
  if (i < n) {
    HWY_ALIGN uint16_t tail[hn::MaxLanes(decltype(d16)())] = {};
    std::memcpy(tail, p + i, (n - i) * sizeof(uint16_t));
    add(hn::Load(d16, tail));
  }
  flush();
  const auto largest = static_cast<uint16_t>(hn::GetLane(hn::MaxOfLanes(di, maxBits)));
  s->absMax = std::max(s->absMax, halfBitsToFloat(largest));
}

#undef DTYPE_LINT_COUNT

}  // namespace HWY_NAMESPACE
}  // namespace dtype_lint::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace dtype_lint::kernels {

HWY_EXPORT(ScanFloat);
HWY_EXPORT(ScanBFloat16);
HWY_EXPORT(ScanHalf);

void TensorStats::add(const TensorStats& o) {
  elements += o.elements;
  nonFinite += o.nonFinite;
  beyondHalf += o.beyondHalf;
  halfSubnormal += o.halfSubnormal;
  halfFlushed += o.halfFlushed;
  nonZero += o.nonZero;
  absMax = std::max(absMax, o.absMax);
}

namespace {

size_t elementSize(ElementType t) {
  switch (t) {
  case ElementType::Double: return 8;
  case ElementType::Float: return 4;
  default: return 2;
  }
}

float valueAt(const void* data, ElementType t, int64_t index) {
  switch (t) {
  case ElementType::Float: return static_cast<const float*>(data)[index];
  case ElementType::Half: return halfBitsToFloat(static_cast<const uint16_t*>(data)[index]);
  case ElementType::BFloat16: return bfloat16BitsToFloat(static_cast<const uint16_t*>(data)[index]);
  case ElementType::Double: break;
  }
  return 0;
}

void countAt(const void* data, ElementType t, int64_t index, TensorStats& s) {
  if (t == ElementType::Double) countElement(static_cast<const double*>(data)[index], s);
  else countElement(valueAt(data, t, index), s);
}

// One contiguous run of n elements.
void scanRun(const void* data, ElementType t, size_t n, TensorStats& s) {
  switch (t) {
  case ElementType::Float: return HWY_DYNAMIC_DISPATCH(ScanFloat)(static_cast<const float*>(data), n, &s);
  case ElementType::BFloat16: return HWY_DYNAMIC_DISPATCH(ScanBFloat16)(static_cast<const uint16_t*>(data), n, &s);
  case ElementType::Half: return HWY_DYNAMIC_DISPATCH(ScanHalf)(static_cast<const uint16_t*>(data), n, &s);
  case ElementType::Double:
    for (size_t i = 0; i < n; ++i) countAt(data, t, static_cast<int64_t>(i), s);
    return;
  }
}

// Merges dimensions that are contiguous with the next one, drops size-1 ones:
// a contiguous tensor becomes one run, a row-major slice one run per row.
TensorView collapsed(const TensorView& v) {
  TensorView out = v;
  out.dims = 0;
  for (int d = 0; d < v.dims; ++d) {
    if (v.sizes[d] == 1) continue;
    if (out.dims > 0 && out.strides[out.dims - 1] == v.strides[d] * v.sizes[d]) {
      out.sizes[out.dims - 1] *= v.sizes[d];
      out.strides[out.dims - 1] = v.strides[d];
    } else {
      out.sizes[out.dims] = v.sizes[d];
      out.strides[out.dims] = v.strides[d];
      ++out.dims;
    }
  }
  return out;
}

uint64_t elementCount(const TensorView& v) {
  uint64_t n = 1;
  for (int d = 0; d < v.dims; ++d) n *= static_cast<uint64_t>(std::max<int64_t>(v.sizes[d], 0));
  return n;
}

// Every run of the innermost dimension, in order; `visit(offset, length, stride)`.
template <class Visit>
void forEachRun(const TensorView& v, Visit visit) {
  if (v.dims == 0) return visit(int64_t{0}, int64_t{1}, int64_t{1});
  const int inner = v.dims - 1;
  int64_t index[kMaxDims] = {};
  for (;;) {
    int64_t offset = 0;
    for (int d = 0; d < inner; ++d) offset += index[d] * v.strides[d];
    visit(offset, v.sizes[inner], v.strides[inner]);
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++index[d] < v.sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

void scanRuns(const TensorView& v, TensorStats& s) {
  const size_t size = elementSize(v.type);
  forEachRun(v, [&](int64_t offset, int64_t length, int64_t stride) {
    const char* base = static_cast<const char*>(v.data) + offset * static_cast<int64_t>(size);
    if (stride == 1) return scanRun(base, v.type, static_cast<size_t>(length), s);
    for (int64_t i = 0; i < length; ++i) countAt(base, v.type, i * stride, s);
  });
}

TensorStats statsOf(const TensorView& view) {
  TensorStats s;
  s.elements = elementCount(view);
  if (s.elements == 0 || !view.data) return s;
  const TensorView v = collapsed(view);
  // Asked once: glibc reads /sys for it, which would cost more than a small tensor's scan.
  static const unsigned threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  if (v.dims > 1 || s.elements < kParallelElements || threads == 1) {
    scanRuns(v, s);
    return s;
  }
  // One large contiguous run (a stride-1 or a strided 1-D view): split it.
  std::vector<TensorStats> parts(threads);
  std::vector<std::thread> workers;
  const int64_t n = v.dims == 0 ? 1 : v.sizes[0], stride = v.dims == 0 ? 1 : v.strides[0];
  const int64_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const int64_t begin = std::min<int64_t>(n, t * chunk), end = std::min<int64_t>(n, begin + chunk);
    TensorView part = v;
    part.data = static_cast<const char*>(v.data) + begin * stride * static_cast<int64_t>(elementSize(v.type));
    part.sizes[0] = end - begin;
    workers.emplace_back([part, &parts, t] { scanRuns(part, parts[t]); });
  }
  for (std::thread& w : workers) w.join();
  for (const TensorStats& p : parts) s.add(p);
  s.elements = elementCount(view);
  return s;
}

}  // namespace

void computeTensorStats(const TensorView* views, size_t count, TensorStats* out) {
  for (size_t i = 0; i < count; ++i) out[i] = statsOf(views[i]);
}

TensorStats referenceTensorStats(const TensorView& view) {
  TensorStats s;
  s.elements = elementCount(view);
  if (s.elements == 0 || !view.data) return s;
  const size_t size = elementSize(view.type);
  forEachRun(view, [&](int64_t offset, int64_t length, int64_t stride) {
    const char* base = static_cast<const char*>(view.data) + offset * static_cast<int64_t>(size);
    for (int64_t i = 0; i < length; ++i) countAt(base, view.type, i * stride, s);
  });
  return s;
}

}  // namespace dtype_lint::kernels
#endif  // HWY_ONCE
