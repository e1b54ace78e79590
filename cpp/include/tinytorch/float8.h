#pragma once
// 8-bit floating storage types (OCP FP8, as PyTorch's float8_e4m3fn and float8_e5m2). Like the
// 16-bit types they only convert: kernels that compute read them as float. Conversions round to
// nearest even; a value beyond the largest finite one (infinity too) saturates to it in e4m3fn
// (which has no infinities: S.1111.111 is NaN) and becomes infinity in e5m2, as PyTorch's casts.
#include <cmath>
#include <cstdint>
#include "tinytorch/macros.h"

namespace tt {
namespace detail {

// E exponent bits, M mantissa bits, bias 2^(E-1) - 1; kFinite: no infinities, all-ones is NaN.
template <int E, int M, bool kFinite>
TT_INLINE float fp8_to_float(uint8_t x) {
  constexpr int kBias = (1 << (E - 1)) - 1, kTop = (1 << E) - 1, kMantMask = (1 << M) - 1;
  const int field = (x >> M) & kTop, mant = x & kMantMask;
  float v;
  if (kFinite ? (field == kTop && mant == kMantMask) : field == kTop)
    v = (kFinite || mant) ? NAN : INFINITY;
  else if (field == 0)
    v = ldexpf(float(mant), 1 - kBias - M);               // subnormal: mant * 2^(1-bias-M)
  else
    v = ldexpf(float(mant + (1 << M)), field - kBias - M);
  return (x & 0x80) ? -v : v;
}

template <int E, int M, bool kFinite>
TT_INLINE uint8_t float_to_fp8(float f) {
  constexpr int kBias = (1 << (E - 1)) - 1, kTop = (1 << E) - 1, kMantMask = (1 << M) - 1;
  constexpr uint8_t kNaN = 0x7F, kOverflow = kFinite ? uint8_t(0x7E) : uint8_t(kTop << M);  // max or inf
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return kNaN;
  const float a = fabsf(f);
  if (std::isinf(a)) return sign | kOverflow;
  int e = 0;
  frexpf(a, &e);                                           // a = frac * 2^e, frac in [0.5, 1)
  int exponent = e - 1 < 1 - kBias ? 1 - kBias : e - 1;    // subnormals share the lowest exponent
  float q = rintf(ldexpf(a, M - exponent));                // a in steps of that exponent, rounded
  if (q >= float(2 << M)) { q *= 0.5f; ++exponent; }       // rounding carried into the next binade
  const int mant = int(q) & kMantMask;
  const int field = q >= float(1 << M) ? exponent + kBias : 0;
  if (field > kTop || (kFinite ? field == kTop && mant == kMantMask : field == kTop)) return sign | kOverflow;
  return uint8_t(sign | (field << M) | mant);
}

}  // namespace detail

struct Float8_e4m3fn {
  uint8_t bits;
  Float8_e4m3fn() = default;
  TT_INLINE Float8_e4m3fn(float f) : bits(detail::float_to_fp8<4, 3, true>(f)) {}
  TT_INLINE operator float() const { return detail::fp8_to_float<4, 3, true>(bits); }
};

struct Float8_e5m2 {
  uint8_t bits;
  Float8_e5m2() = default;
  TT_INLINE Float8_e5m2(float f) : bits(detail::float_to_fp8<5, 2, false>(f)) {}
  TT_INLINE operator float() const { return detail::fp8_to_float<5, 2, false>(bits); }
};

}  // namespace tt
