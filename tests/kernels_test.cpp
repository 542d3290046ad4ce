// The CPU tensor-health scan against hand-counted values and against the
// scalar reference (classifyElement, element by element), on every dtype,
// every layout the runtime hands it, and sizes that exercise the SIMD tails,
// the counter flushes and the threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "dtype_lint_kernels/element_class.h"
#include "dtype_lint_kernels/tensor_stats.h"
#include "tensor_stats_test_support.h"

namespace dtype_lint::kernels {
namespace {

uint16_t toBFloat16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return 0x7fc0;
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);  // round to nearest even
}

uint16_t toHalfBits(float f) {  // through _Float16, gcc's IEEE half (x86-64, SSE2)
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

TensorStats scan(const TensorView& v) {
  TensorStats s;
  computeTensorStats(&v, 1, &s);
  return s;
}

// Values on both sides of every threshold, the specials, and zeros.
std::vector<float> adversarialValues() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f,
          -0.0f,
          1.0f,
          -2.5f,
          65504.0f,
          -65504.0f,
          65504.01f,
          65520.0f,
          1e30f,
          -3.4e38f,
          inf,
          -inf,
          std::nanf(""),
          -std::nanf(""),
          0x1p-14f,
          0x1.fffffep-15f,
          -0x1p-20f,
          0x1p-24f,
          0x1.fffffep-25f,
          1e-30f,
          std::numeric_limits<float>::denorm_min(),
          3.0f};
}

TEST(TensorStats, CountsFloatValuesByWhatHalfWouldMakeOfThem) {
  const std::vector<float> x = adversarialValues();
  const TensorStats s = scan(contiguous(x.data(), ElementType::Float, {static_cast<int64_t>(x.size())}));
  EXPECT_EQ(s.elements, x.size());
  EXPECT_EQ(s.nonFinite, 4u);  // ±inf, ±NaN
  EXPECT_EQ(s.beyondHalf, 4u);  // 65504.01, 65520, 1e30, -3.4e38; not ±65504 itself
  EXPECT_EQ(s.halfSubnormal, 6u);  // 0x1.fffffep-15, -2^-20, 2^-24, 0x1.fffffep-25, 1e-30, denorm_min
  EXPECT_EQ(s.halfFlushed, 3u);  // 0x1.fffffep-25, 1e-30, denorm_min
  EXPECT_EQ(s.nonZero, 16u);
  EXPECT_EQ(s.absMax, 3.4e38f);
}

TEST(TensorStats, CountsBFloat16AndHalfOnTheirOwnBits) {
  const std::vector<float> x = adversarialValues();
  std::vector<uint16_t> bf16, half;
  for (float f : x) {
    bf16.push_back(toBFloat16Bits(f));
    half.push_back(toHalfBits(f));
  }
  const auto n = static_cast<int64_t>(x.size());
  for (const auto& [bits, type] : {std::pair{&bf16, ElementType::BFloat16}, std::pair{&half, ElementType::Half}})
    expectSame(scan(contiguous(bits->data(), type, {n})), referenceTensorStats(contiguous(bits->data(), type, {n})));
  const TensorStats h = scan(contiguous(half.data(), ElementType::Half, {n}));
  EXPECT_EQ(h.beyondHalf, 0u);  // a Half is never beyond Half
  EXPECT_EQ(h.halfFlushed, 0u);  // already flushed: zeros
  EXPECT_EQ(h.nonFinite, 4u + 3u);  // 65520, 1e30 and -3.4e38 became inf; 65504.01 rounded to 65504
  EXPECT_EQ(h.absMax, 65504.0f);
}

TEST(TensorStats, MatchesTheReferenceOnRandomTensorsOfEverySize) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-40.0f, 40.0f);
  std::uniform_int_distribution<int> special(0, 50);
  const std::vector<float> adversarial = adversarialValues();
  for (size_t n : {0u, 1u, 3u, 7u, 15u, 16u, 17u, 31u, 33u, 63u, 257u, 4099u, 70001u}) {
    std::vector<float> f(n);
    std::vector<double> d(n);
    std::vector<uint16_t> bf16(n), half(n);
    for (size_t i = 0; i < n; ++i) {
      f[i] = special(rng) == 0 ? adversarial[rng() % adversarial.size()]
                               : std::ldexp(1.0f, static_cast<int>(exponent(rng))) * ((rng() & 1) ? -1.5f : 1.25f);
      d[i] = static_cast<double>(f[i]) * ((i % 5 == 0) ? 1e300 : 1.0);
      bf16[i] = toBFloat16Bits(f[i]);
      half[i] = toHalfBits(f[i]);
    }
    const auto size = static_cast<int64_t>(n);
    SCOPED_TRACE(n);
    expectSame(scan(contiguous(f.data(), ElementType::Float, {size})),
               referenceTensorStats(contiguous(f.data(), ElementType::Float, {size})));
    expectSame(scan(contiguous(d.data(), ElementType::Double, {size})),
               referenceTensorStats(contiguous(d.data(), ElementType::Double, {size})));
    expectSame(scan(contiguous(bf16.data(), ElementType::BFloat16, {size})),
               referenceTensorStats(contiguous(bf16.data(), ElementType::BFloat16, {size})));
    expectSame(scan(contiguous(half.data(), ElementType::Half, {size})),
               referenceTensorStats(contiguous(half.data(), ElementType::Half, {size})));
  }
}

TEST(TensorStats, ReadsTransposedExpandedAndSlicedViewsElementByElement) {
  std::vector<float> base(6 * 5);
  for (size_t i = 0; i < base.size(); ++i) base[i] = i % 7 == 0 ? 70000.0f : static_cast<float>(i) * 1e-6f;
  TensorView transposed = contiguous(base.data(), ElementType::Float, {5, 6});
  transposed.strides[0] = 1;
  transposed.strides[1] = 5;
  expectSame(scan(transposed), referenceTensorStats(transposed));
  EXPECT_EQ(scan(transposed).beyondHalf, 5u);  // i = 0, 7, 14, 21, 28

  TensorView expanded = contiguous(base.data(), ElementType::Float, {4, 6});
  expanded.strides[0] = 0;  // one row seen four times: counted four times, as the tensor holds it
  EXPECT_EQ(scan(expanded).beyondHalf, 4u);
  expectSame(scan(expanded), referenceTensorStats(expanded));

  TensorView columns = contiguous(base.data() + 1, ElementType::Float, {6, 2});  // columns 1 and 3 of 6x5
  columns.strides[0] = 5;
  columns.strides[1] = 2;
  expectSame(scan(columns), referenceTensorStats(columns));

  TensorView rows = contiguous(base.data(), ElementType::Float, {3, 4});  // a slice [:, :4] of 6x5: runs of 4
  rows.strides[0] = 5;
  expectSame(scan(rows), referenceTensorStats(rows));

  const TensorView scalar = contiguous(base.data(), ElementType::Float, {});
  EXPECT_EQ(scan(scalar).elements, 1u);
  EXPECT_EQ(scan(scalar).beyondHalf, 1u);
  const TensorView empty = contiguous(base.data(), ElementType::Float, {3, 0, 2});
  EXPECT_EQ(scan(empty).elements, 0u);
  EXPECT_EQ(scan(empty).nonZero, 0u);
}

TEST(TensorStats, SplitsLargeTensorsAcrossThreadsWithTheSameCounts) {
  const size_t n = kParallelElements * 2 + 12345;
  std::vector<float> f(n, 1.0f);
  for (size_t i = 0; i < n; i += 4096) f[i] = 1e-6f;
  f[n - 1] = std::nanf("");
  f[n / 3] = -1e9f;
  const TensorStats s = scan(contiguous(f.data(), ElementType::Float, {static_cast<int64_t>(n)}));
  expectSame(s, referenceTensorStats(contiguous(f.data(), ElementType::Float, {static_cast<int64_t>(n)})));
  EXPECT_EQ(s.nonFinite, 1u);
  EXPECT_EQ(s.beyondHalf, 1u);
  EXPECT_EQ(s.absMax, 1e9f);
}

TEST(TensorStats, ScansManyTensorsInOneCall) {
  const std::vector<float> a(100, 1e5f), b(3, 0.0f);
  const std::vector<uint16_t> c(40, toBFloat16Bits(1e-7f));
  const TensorView views[] = {contiguous(a.data(), ElementType::Float, {10, 10}),
                              contiguous(b.data(), ElementType::Float, {3}),
                              contiguous(c.data(), ElementType::BFloat16, {2, 20})};
  TensorStats out[3];
  computeTensorStats(views, 3, out);
  EXPECT_EQ(out[0].beyondHalf, 100u);
  EXPECT_EQ(out[1].nonZero, 0u);
  EXPECT_EQ(out[2].halfSubnormal, 40u);
  EXPECT_EQ(out[2].halfFlushed, 0u);  // 1e-7 > 2^-24
}

}  // namespace
}  // namespace dtype_lint::kernels
