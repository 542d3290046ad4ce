// What one value would become in Half: the per-element classification both
// the CPU scan (its scalar tail and strided path) and the CUDA kernels use, so
// the CPU tests cover the logic the GPU runs.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define DTYPE_LINT_HOST_DEVICE __host__ __device__
#else
#define DTYPE_LINT_HOST_DEVICE
#endif

namespace dtype_lint::kernels {

inline constexpr float kHalfMax = 65504.0f;  // largest finite Half
inline constexpr float kHalfMinNormal = 0x1p-14f;  // 2^-14: below it Half is subnormal
inline constexpr float kHalfMinSubnormal = 0x1p-24f;  // 2^-24: below it Half flushes to zero

enum ElementClassBit : uint32_t {
  kNonFinite = 1u << 0,  // inf or NaN
  kBeyondHalf = 1u << 1,  // finite, |x| > 65504: inf once cast to Half
  kHalfSubnormal = 1u << 2,  // finite, 0 < |x| < 2^-14 (the flushed ones included)
  kHalfFlushed = 1u << 3,  // finite, 0 < |x| < 2^-24: zero once cast to Half
  kNonZero = 1u << 4,  // finite and not zero
};

// Float or Double: a Double is classified by what Half would make of it too.
template <class Real>
DTYPE_LINT_HOST_DEVICE inline uint32_t classifyElement(Real x) {
  constexpr Real kLargest = sizeof(Real) == 4 ? Real(3.402823466e+38f) : Real(1.7976931348623157e+308);
  const Real a = x < 0 ? -x : x;
  if (!(a <= kLargest)) return kNonFinite;  // NaN fails every comparison
  if (a == 0) return 0;
  uint32_t bits = kNonZero;
  if (a > kHalfMax) bits |= kBeyondHalf;
  if (a < kHalfMinNormal) bits |= kHalfSubnormal;
  if (a < kHalfMinSubnormal) bits |= kHalfFlushed;
  return bits;
}

// Adds one value to a set of counts (TensorStats on the host, the CUDA
// kernel's per-thread counts): the same accumulation on both sides.
template <class Counts>
DTYPE_LINT_HOST_DEVICE inline void addClass(uint32_t bits, Counts& c) {
  c.nonFinite += (bits & kNonFinite) != 0;
  c.beyondHalf += (bits & kBeyondHalf) != 0;
  c.halfSubnormal += (bits & kHalfSubnormal) != 0;
  c.halfFlushed += (bits & kHalfFlushed) != 0;
  c.nonZero += (bits & kNonZero) != 0;
}

// A finite value's magnitude as a Float (a Double beyond Float's range: its largest).
template <class Real>
DTYPE_LINT_HOST_DEVICE inline float magnitudeAsFloat(Real x) {
  const Real a = x < 0 ? -x : x;
  return a > Real(3.402823466e+38f) ? 3.402823466e+38f : static_cast<float>(a);
}

template <class Counts, class Real>
DTYPE_LINT_HOST_DEVICE inline void countElement(Real x, Counts& c) {
  const uint32_t bits = classifyElement(x);
  addClass(bits, c);
  if (bits & kNonFinite) return;
  const float magnitude = magnitudeAsFloat(x);
  if (magnitude > c.absMax) c.absMax = magnitude;
}

// The widening conversions of the two 16-bit types, bit-exact on host and device.
DTYPE_LINT_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

DTYPE_LINT_HOST_DEVICE inline float bfloat16BitsToFloat(uint16_t bits) {
  return floatFromBits(static_cast<uint32_t>(bits) << 16);
}

DTYPE_LINT_HOST_DEVICE inline float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    uint32_t e = 113;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return floatFromBits(bits);
}

}  // namespace dtype_lint::kernels
