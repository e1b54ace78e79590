#pragma once
// 16-bit floating types stored as raw bits. Arithmetic always goes through float:
// kernels convert on load, compute in float32 and round once on store.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include "tinytorch/macros.h"

namespace tt {
namespace detail {

// The bits of a float as a uint32_t and back (std::bit_cast before C++20).
template <class To, class From>
TT_INLINE To bit_cast32(From x) {
  static_assert(sizeof(To) == 4 && sizeof(From) == 4, "float <-> uint32_t only");
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<To, float>) return __uint_as_float(x);
  else return __float_as_uint(x);
#else
  To y;
  std::memcpy(&y, &x, sizeof y);
  return y;
#endif
}
TT_INLINE float fp32_from_bits(uint32_t w) { return bit_cast32<float>(w); }
TT_INLINE uint32_t fp32_to_bits(float f) { return bit_cast32<uint32_t>(f); }

// IEEE half <-> float, round to nearest even (after Maratyszcza's FP16 library).
TT_INLINE float half_bits_to_float(uint16_t h) {
  const uint32_t w = uint32_t(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t exp_offset = 0xE0u << 23;
  const float normalized = fp32_from_bits((two_w >> 4) + exp_offset) * 0x1.0p-112f;
  const uint32_t magic_mask = 126u << 23;
  const float denormalized = fp32_from_bits((two_w >> 17) | magic_mask) - 0.5f;
  const uint32_t denormalized_cutoff = 1u << 27;
  return fp32_from_bits(sign | (two_w < denormalized_cutoff ? fp32_to_bits(denormalized)
                                                            : fp32_to_bits(normalized)));
}

TT_INLINE uint16_t float_to_half_bits(float f) {
  const float scale_to_inf = 0x1.0p+112f;
  const float scale_to_zero = 0x1.0p-110f;
  float base = ((f < 0 ? -f : f) * scale_to_inf) * scale_to_zero;
  const uint32_t w = fp32_to_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = fp32_from_bits((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = fp32_to_bits(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return uint16_t((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

TT_INLINE float bf16_bits_to_float(uint16_t b) { return fp32_from_bits(uint32_t(b) << 16); }

TT_INLINE uint16_t float_to_bf16_bits(float f) {
  uint32_t u = fp32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                       // round to nearest even
  return uint16_t(u >> 16);
}

}  // namespace detail

struct Half {
  uint16_t bits;
  Half() = default;
  TT_INLINE Half(float f) : bits(detail::float_to_half_bits(f)) {}
  TT_INLINE operator float() const { return detail::half_bits_to_float(bits); }
  TT_INLINE static Half from_bits(uint16_t b) { Half h; h.bits = b; return h; }
};

struct BFloat16 {
  uint16_t bits;
  BFloat16() = default;
  TT_INLINE BFloat16(float f) : bits(detail::float_to_bf16_bits(f)) {}
  TT_INLINE operator float() const { return detail::bf16_bits_to_float(bits); }
  TT_INLINE static BFloat16 from_bits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
};

}  // namespace tt
