#pragma once
// llama.cpp / ggml quantized block formats, written once for the CPU and CUDA kernels.
// A quantized (N, K) weight stores each row as K / values-per-block consecutive blocks; the
// codes below are ggml's `GGMLQuantizationType` numbers (gguf.GGMLQuantizationType).
//
//   Q4_0  32 values, 18 B: fp16 d, 16 B nibbles    w = (q - 8) * d   (low nibbles: values 0..15)
//   Q4_1  32 values, 20 B: fp16 d, fp16 m, nibbles w = q * d + m
//   Q8_0  32 values, 34 B: fp16 d, 32 int8         w = q * d
//   Q4_K 256 values, 144 B: fp16 d, fp16 dmin, 12 B of 6-bit (scale, min) pairs for 8 sub-blocks
//        of 32, 128 B nibbles (32-byte group g: low nibbles sub-block 2g, high 2g+1)
//        w = d * sc[j] * q - dmin * m[j]
//   Q6_K 256 values, 210 B: 128 B low nibbles, 64 B high 2-bit pairs, 16 int8 scales (one per 16
//        values), fp16 d at the end                w = d * scale[v / 16] * (q - 32)
//
// Every format is read as sub-blocks of 32 values (Q*_0/1: the block itself; K-quants: 8 per
// super-block): for_each_value<Q>(block, j, f) calls f(i, w) for the 32 values of sub-block j.
#include <cstdint>
#include "tinytorch/half.h"
#include "tinytorch/macros.h"

#if defined(__CUDACC__)
#define TT_QUANT_UNROLL _Pragma("unroll")
#else
#define TT_QUANT_UNROLL
#endif

namespace tt::quant {

enum class QType : int { Q4_0 = 2, Q4_1 = 3, Q8_0 = 8, Q4_K = 12, Q6_K = 14 };

TT_INLINE float load_half(const uint8_t* p) {
  return detail::half_bits_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}

template <QType Q>
struct Format;

// What every Format<Q> says of its blocks.
template <QType Q, int Values, int Bytes>
struct FormatSize {
  static constexpr QType kType = Q;
  static constexpr int kValues = Values, kBytes = Bytes;
};

template <>
struct Format<QType::Q4_0> : FormatSize<QType::Q4_0, 32, 18> {
  template <class F>
  TT_INLINE static void for_each_value(const uint8_t* b, int /*j*/, F&& f) {
    float d = load_half(b);
TT_QUANT_UNROLL
    for (int i = 0; i < 16; ++i) {
      f(i, static_cast<float>((b[2 + i] & 0x0F) - 8) * d);
      f(i + 16, static_cast<float>((b[2 + i] >> 4) - 8) * d);
    }
  }
};

template <>
struct Format<QType::Q4_1> : FormatSize<QType::Q4_1, 32, 20> {
  template <class F>
  TT_INLINE static void for_each_value(const uint8_t* b, int /*j*/, F&& f) {
    float d = load_half(b), m = load_half(b + 2);
TT_QUANT_UNROLL
    for (int i = 0; i < 16; ++i) {
      f(i, static_cast<float>(b[4 + i] & 0x0F) * d + m);
      f(i + 16, static_cast<float>(b[4 + i] >> 4) * d + m);
    }
  }
};

template <>
struct Format<QType::Q8_0> : FormatSize<QType::Q8_0, 32, 34> {
  template <class F>
  TT_INLINE static void for_each_value(const uint8_t* b, int /*j*/, F&& f) {
    float d = load_half(b);
TT_QUANT_UNROLL
    for (int i = 0; i < 32; ++i) f(i, static_cast<float>(static_cast<int8_t>(b[2 + i])) * d);
  }
};

template <>
struct Format<QType::Q4_K> : FormatSize<QType::Q4_K, 256, 144> {
  // The 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes s.
  TT_INLINE static void scale_min(const uint8_t* s, int j, int& sc, int& mn) {
    if (j < 4) {
      sc = s[j] & 63;
      mn = s[j + 4] & 63;
    } else {
      sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
      mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
  }
  template <class F>
  TT_INLINE static void for_each_value(const uint8_t* b, int j, F&& f) {
    int sc, mn;
    scale_min(b + 4, j, sc, mn);
    float d = load_half(b) * static_cast<float>(sc), m = load_half(b + 2) * static_cast<float>(mn);
    const uint8_t* q = b + 16 + (j >> 1) * 32;
    int shift = (j & 1) * 4;
TT_QUANT_UNROLL
    for (int i = 0; i < 32; ++i) f(i, static_cast<float>((q[i] >> shift) & 0x0F) * d - m);
  }
};

template <>
struct Format<QType::Q6_K> : FormatSize<QType::Q6_K, 256, 210> {
  // Value v = 32 j + i of the super-block: half h = v / 128, r = v % 128; low 4 bits from
  // ql[64 h + r % 64] (nibble r / 64), high 2 bits from qh[32 h + r % 32] (bits 2 (r / 32)).
  template <class F>
  TT_INLINE static void for_each_value(const uint8_t* b, int j, F&& f) {
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
    float d = load_half(b + 208);
    int h = j >> 2, r0 = (j & 3) * 32;
    const uint8_t* lo = ql + 64 * h + (r0 & 63);
    const uint8_t* hi = qh + 32 * h;
    int lshift = (r0 >> 6) * 4, hshift = (r0 >> 5) * 2;
    float d0 = d * static_cast<float>(scales[2 * j]), d1 = d * static_cast<float>(scales[2 * j + 1]);
TT_QUANT_UNROLL
    for (int i = 0; i < 32; ++i) {
      int q = ((lo[i] >> lshift) & 0x0F) | (((hi[i] >> hshift) & 3) << 4);
      f(i, static_cast<float>(q - 32) * (i < 16 ? d0 : d1));
    }
  }
};

// Calls fn(Format<Q>{}) for the format of a code; nothing for a code we have no kernel for.
template <class Fn>
inline void dispatch_format(int64_t code, Fn&& fn) {  // host only
  switch (code) {
    case 2: fn(Format<QType::Q4_0>{}); break;
    case 3: fn(Format<QType::Q4_1>{}); break;
    case 8: fn(Format<QType::Q8_0>{}); break;
    case 12: fn(Format<QType::Q4_K>{}); break;
    case 14: fn(Format<QType::Q6_K>{}); break;
    default: break;
  }
}

// Values and bytes per block of a code; false for a code we have no kernel for.
inline bool block_format(int64_t code, int64_t& values, int64_t& bytes) {  // host only
  bool known = false;
  dispatch_format(code, [&](auto fmt) { values = fmt.kValues, bytes = fmt.kBytes, known = true; });
  return known;
}

}  // namespace tt::quant
