// CPU kernels on packed llama.cpp blocks: the matvec (decode) and row dequantization.
//
// The matvec streams each weight row once and decodes its blocks in registers: integer codes
// widened to float32 lanes, multiplied by x, and the block's sum scaled by its fp16 scale (the
// offset m of Q4_1/Q4_K adds m * sum(x_block), precomputed). x stays float32, so the result
// matches a float32 matmul on the dequantized weight (no int8 requantization of x as llama.cpp
// does: transformers, the reference for GGUF checkpoints, dequantizes to float).
// Picked at run time: AVX-512 for every format, AVX2 for Q4_0/Q4_1/Q8_0; otherwise (K-quants
// without AVX-512, any format without AVX2) each 32-value sub-block is decoded by the scalar
// formulas of quant_math.h into a small buffer and dotted in float.
#include <cblas.h>
#include <immintrin.h>
// GCC 12 flags _mm512_cvtepi8_epi32's internal _mm512_undefined_epi32() as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>
#include "tinytorch/kernels/quant.h"
#include "tinytorch/parallel.h"
#include "tinytorch/quant_math.h"
#include "quant_int8.h"

namespace tt::cpu {
namespace {

using quant::Format;
using quant::QType;

#define TT_QUANT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c")))
#define TT_QUANT_AVX2 __attribute__((target("avx2,fma,f16c")))

enum class Isa { Scalar, Avx2, Avx512 };

// The best ISA this CPU has; TINYTORCH_QUANT_ISA=avx2 or =scalar caps it (the tests run every
// path on one machine).
Isa cpu_isa() {
  static const Isa isa = [] {
    const char* cap = std::getenv("TINYTORCH_QUANT_ISA");
    std::string want = cap ? cap : "";
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl");
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (want == "scalar") return Isa::Scalar;
    if (avx512 && want != "avx2") return Isa::Avx512;
    return avx2 ? Isa::Avx2 : Isa::Scalar;
  }();
  return isa;
}

// The problem as the row kernels see it. x: (M, K) float32; xsum: (M, K/32) block sums of x
// (Q4_1 only); w: (N, row) bytes; out: (M, N) float32, row stride ldo.
struct Problem {
  const float* x;
  const float* xsum;
  const uint8_t* w;
  float* out;
  int64_t M, K, row, ldo;
};

// Input rows per call of a row kernel: 2 x 8 accumulators + the decoded block stay in the 32
// zmm registers, and each decoded block serves all 8 rows.
constexpr int kRows = 8;

// ---------------------------------------------------------------- AVX-512
// Every format as 32-value sub-blocks s of a row (the block itself for Q4_0/Q4_1/Q8_0, 8 per
// super-block for the K-quants): w[32 s + i] = dlo * code_i + m (i < 16), dhi * code_i + m (i >= 16).
struct Sub512 {
  __m512 lo, hi;  // integer codes of values 0..15 and 16..31, as floats
  float dlo, dhi, m;
};

// A Q4_0/Q4_1/Q8_0 block's fp16 scale d and (Q4_1) minimum m, its first 4 bytes, as floats
// [d, m, -, -]: one load and one conversion for both (two scalar conversions cost a sixth of a
// block's uops). Inlined into either ISA's kernels (F16C only).
__attribute__((target("f16c"), always_inline)) inline __m128 scales_of(const uint8_t* blk) {
  int32_t bits;
  std::memcpy(&bits, blk, 4);
  return _mm_cvtph_ps(_mm_cvtsi32_si128(bits));
}

TT_QUANT_AVX512 inline float half_at(const uint8_t* p) {
  return _cvtsh_ss(static_cast<unsigned short>(p[0] | (p[1] << 8)));
}

TT_QUANT_AVX512 inline void widen512(__m128i lo8, __m128i hi8, bool is_signed, Sub512& u) {
  u.lo = _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(lo8) : _mm512_cvtepu8_epi32(lo8));
  u.hi = _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(hi8) : _mm512_cvtepu8_epi32(hi8));
}

// Sub-block s of the row starting at wr.
template <QType Q>
TT_QUANT_AVX512 __attribute__((always_inline)) inline Sub512 decode512(const uint8_t* wr, int64_t s) {
  Sub512 u;
  u.m = 0.f;
  if constexpr (Q == QType::Q8_0) {
    const uint8_t* b = wr + s * 34;
    widen512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2)),
             _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 18)), true, u);
    u.dlo = u.dhi = _mm_cvtss_f32(scales_of(b));
  } else if constexpr (Q == QType::Q4_0 || Q == QType::Q4_1) {
    // the 16 code bytes widened straight from memory, then split: byte i holds values i and i + 16
    const uint8_t* b = wr + s * Format<Q>::kBytes;
    const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (Q == QType::Q4_1 ? 4 : 2))));
    __m512i l = _mm512_and_si512(v, _mm512_set1_epi32(0x0F)), h = _mm512_srli_epi32(v, 4);
    if constexpr (Q == QType::Q4_0) {
      l = _mm512_sub_epi32(l, _mm512_set1_epi32(8));
      h = _mm512_sub_epi32(h, _mm512_set1_epi32(8));
    }
    u.lo = _mm512_cvtepi32_ps(l);
    u.hi = _mm512_cvtepi32_ps(h);
    const __m128 dm = scales_of(b);
    u.dlo = u.dhi = _mm_cvtss_f32(dm);
    if constexpr (Q == QType::Q4_1) u.m = _mm_cvtss_f32(_mm_movehdup_ps(dm));
  } else if constexpr (Q == QType::Q4_K) {
    const uint8_t* b = wr + (s >> 3) * 144;
    int j = static_cast<int>(s & 7), sc, mn;
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + (j >> 1) * 32));
    v = _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128((j & 1) * 4)), _mm256_set1_epi8(0x0F));
    widen512(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1), false, u);
    Format<QType::Q4_K>::scale_min(b + 4, j, sc, mn);
    u.dlo = u.dhi = half_at(b) * static_cast<float>(sc);
    u.m = -half_at(b + 2) * static_cast<float>(mn);
  } else {  // Q6_K: see Format<Q6_K> for where the bits of value 32 j + i live
    const uint8_t* b = wr + (s >> 3) * 210;
    int j = static_cast<int>(s & 7), h = j >> 2, r0 = (j & 3) * 32;
    __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * h + (r0 & 63)));
    __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
    l = _mm256_and_si256(_mm256_srl_epi16(l, _mm_cvtsi32_si128((r0 >> 6) * 4)), _mm256_set1_epi8(0x0F));
    q = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128((r0 >> 5) * 2)), _mm256_set1_epi8(3));
    q = _mm256_sub_epi8(_mm256_or_si256(l, _mm256_slli_epi16(q, 4)), _mm256_set1_epi8(32));
    widen512(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1), true, u);
    float d = half_at(b + 208);
    u.dlo = d * static_cast<float>(static_cast<int8_t>(b[192 + 2 * j]));
    u.dhi = d * static_cast<float>(static_cast<int8_t>(b[193 + 2 * j]));
  }
  return u;
}

// Sub-block s of a row for R input rows starting at m0: acc[r] += its scaled dot with
// x[r, 32 s : 32 s + 32]; offset[r] += m * sum(x[r, 32 s : 32 s + 32]) (Q4_1, Q4_K).
template <QType Q, int R>
TT_QUANT_AVX512 __attribute__((always_inline)) inline void sub512(const Problem& p, const uint8_t* wr, int64_t s,
                                                                  int64_t m0, __m512 (&acc)[R], float (&offset)[R]) {
  Sub512 u = decode512<Q>(wr, s);
  __m512 dlo = _mm512_set1_ps(u.dlo);
  for (int r = 0; r < R; ++r) {
    const float* xb = p.x + (m0 + r) * p.K + s * 32;
    if constexpr (Q == QType::Q6_K) {  // two scales per sub-block
      acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(u.lo, _mm512_loadu_ps(xb)), dlo, acc[r]);
      acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(u.hi, _mm512_loadu_ps(xb + 16)), _mm512_set1_ps(u.dhi), acc[r]);
    } else {
      __m512 t = _mm512_fmadd_ps(u.hi, _mm512_loadu_ps(xb + 16), _mm512_mul_ps(u.lo, _mm512_loadu_ps(xb)));
      acc[r] = _mm512_fmadd_ps(t, dlo, acc[r]);
    }
  }
  if constexpr (Q == QType::Q4_1 || Q == QType::Q4_K)
    for (int r = 0; r < R; ++r) offset[r] += u.m * p.xsum[(m0 + r) * (p.K / 32) + s];
}

// out[r, n] for n in [n0, n1) and R input rows starting at m0; even and odd sub-blocks go to
// two sets of accumulators so consecutive FMAs don't wait on each other.
template <QType Q, int R>
TT_QUANT_AVX512 void rows512(const Problem& p, int64_t m0, int64_t n0, int64_t n1) {
  int64_t ns = p.K / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wr = p.w + n * p.row;
    __m512 acc0[R], acc1[R];
    float offset[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps(), offset[r] = 0.f;
    int64_t s = 0;
    for (; s + 1 < ns; s += 2) {
      sub512<Q, R>(p, wr, s, m0, acc0, offset);
      sub512<Q, R>(p, wr, s + 1, m0, acc1, offset);
    }
    if (s < ns) sub512<Q, R>(p, wr, s, m0, acc0, offset);
    for (int r = 0; r < R; ++r)
      p.out[(m0 + r) * p.ldo + n] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r])) + offset[r];
  }
}

// ---------------------------------------------------------------- AVX2
// The 32 codes of a Q4_0/Q4_1/Q8_0 block as floats: v[0] values 0..7, v[1] 8..15, v[2] 16..23,
// v[3] 24..31. Each 8 bytes are widened to int32 straight from memory (vpmovzxbd/vpmovsxbd m64):
// fewer shuffles than widening a 16-byte load lane by lane.
TT_QUANT_AVX2 inline __m256i widen8(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

TT_QUANT_AVX2 inline void decode256(QType q, const uint8_t* b, __m256 v[4]) {
  if (q == QType::Q8_0) {
    for (int i = 0; i < 4; ++i) v[i] = _mm256_cvtepi32_ps(widen8(b + 2 + 8 * i, true));
    return;
  }
  const uint8_t* codes = b + (q == QType::Q4_1 ? 4 : 2);  // byte i: value i (low nibble), i + 16 (high)
  const __m256i b0 = widen8(codes, false), b1 = widen8(codes + 8, false), mask = _mm256_set1_epi32(0x0F);
  __m256i c[4] = {_mm256_and_si256(b0, mask), _mm256_and_si256(b1, mask), _mm256_srli_epi32(b0, 4),
                  _mm256_srli_epi32(b1, 4)};
  for (int i = 0; i < 4; ++i) {
    if (q == QType::Q4_0) c[i] = _mm256_sub_epi32(c[i], _mm256_set1_epi32(8));
    v[i] = _mm256_cvtepi32_ps(c[i]);
  }
}

TT_QUANT_AVX2 inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// offset[r] lane 1 += m * sum(x[r] block b) (Q4_1); lane 0 gathers d * the sum, never read.
template <QType Q, int R>
TT_QUANT_AVX2 __attribute__((always_inline)) inline void block256(const Problem& p, const uint8_t* blk, int64_t b,
                                                                  int64_t m0, __m256 (&acc)[R], __m128 (&offset)[R]) {
  __m256 v[4];
  decode256(Q, blk, v);
  const __m128 dm = scales_of(blk);
  const __m256 d = _mm256_broadcastss_ps(dm);
  for (int r = 0; r < R; ++r) {
    const float* xb = p.x + (m0 + r) * p.K + b * 32;
    __m256 t = _mm256_mul_ps(v[0], _mm256_loadu_ps(xb));
    t = _mm256_fmadd_ps(v[1], _mm256_loadu_ps(xb + 8), t);
    t = _mm256_fmadd_ps(v[2], _mm256_loadu_ps(xb + 16), t);
    t = _mm256_fmadd_ps(v[3], _mm256_loadu_ps(xb + 24), t);
    acc[r] = _mm256_fmadd_ps(t, d, acc[r]);
  }
  if constexpr (Q == QType::Q4_1)
    for (int r = 0; r < R; ++r)
      offset[r] = _mm_fmadd_ps(dm, _mm_broadcast_ss(p.xsum + (m0 + r) * (p.K / 32) + b), offset[r]);
}

template <QType Q, int R>
TT_QUANT_AVX2 void rows256(const Problem& p, int64_t m0, int64_t n0, int64_t n1) {
  constexpr int64_t kBytes = Format<Q>::kBytes;
  int64_t nb = p.K / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wr = p.w + n * p.row;
    __m256 acc0[R], acc1[R];
    __m128 offset[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps(), offset[r] = _mm_setzero_ps();
    int64_t b = 0;
    for (; b + 1 < nb; b += 2) {
      block256<Q, R>(p, wr + b * kBytes, b, m0, acc0, offset);
      block256<Q, R>(p, wr + (b + 1) * kBytes, b + 1, m0, acc1, offset);
    }
    if (b < nb) block256<Q, R>(p, wr + b * kBytes, b, m0, acc0, offset);
    for (int r = 0; r < R; ++r)
      p.out[(m0 + r) * p.ldo + n] =
          hsum256(_mm256_add_ps(acc0[r], acc1[r])) + _mm_cvtss_f32(_mm_movehdup_ps(offset[r]));
  }
}

// ---------------------------------------------------------------- any format, any CPU
// Each 32-value sub-block decoded by the shared scalar formulas, then a float dot (the
// compiler vectorizes the 32-wide loops).
template <class F, int R>
void rows_generic(const Problem& p, int64_t m0, int64_t n0, int64_t n1) {
  int64_t sub = F::kValues / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wr = p.w + n * p.row;
    float acc[R][32] = {};
    float buf[32];
    for (int64_t s = 0; s < p.K / 32; ++s) {
      F::for_each_value(wr + (s / sub) * F::kBytes, static_cast<int>(s % sub), [&](int i, float v) { buf[i] = v; });
      for (int r = 0; r < R; ++r) {
        const float* xb = p.x + (m0 + r) * p.K + s * 32;
        for (int i = 0; i < 32; ++i) acc[r][i] += buf[i] * xb[i];
      }
    }
    for (int r = 0; r < R; ++r) {
      float t = 0.f;
      for (int i = 0; i < 32; ++i) t += acc[r][i];
      p.out[(m0 + r) * p.ldo + n] = t;
    }
  }
}

using RowsFn = void (*)(const Problem&, int64_t, int64_t, int64_t);

template <QType Q, int R>
RowsFn pick_rows() {
  if (cpu_isa() == Isa::Avx512) return rows512<Q, R>;
  if constexpr (Q == QType::Q4_0 || Q == QType::Q4_1 || Q == QType::Q8_0) {
    if (cpu_isa() == Isa::Avx2) return rows256<Q, R>;
  }
  return rows_generic<Format<Q>, R>;
}

template <QType Q>
RowsFn pick_rows(int r) {
  switch (r) {
    case 1: return pick_rows<Q, 1>();
    case 2: return pick_rows<Q, 2>();
    case 3: return pick_rows<Q, 3>();
    case 4: return pick_rows<Q, 4>();
    case 5: return pick_rows<Q, 5>();
    case 6: return pick_rows<Q, 6>();
    case 7: return pick_rows<Q, 7>();
    default: return pick_rows<Q, kRows>();
  }
}

// The float32-x matvec: x (M, K), w (N, row) -> op (M, N) float32.
void float_matvec(const float* xp, int64_t M, int64_t K, const Tensor& w, int64_t qtype, float* op, int64_t N,
                  int64_t grain) {
  std::vector<float> xsum;
  if (qtype == static_cast<int64_t>(QType::Q4_1) || qtype == static_cast<int64_t>(QType::Q4_K)) {
    xsum.assign(static_cast<size_t>(M * (K / 32)), 0.f);
    for (int64_t i = 0; i < M * (K / 32); ++i)
      for (int j = 0; j < 32; ++j) xsum[i] += xp[i * 32 + j];
  }
  Problem p{xp, xsum.data(), w.data<uint8_t>(), op, M, K, w.size(1), N};
  quant::dispatch_format(qtype, [&](auto fmt) {
    constexpr QType Q = decltype(fmt)::kType;
    parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
      for (int64_t m0 = 0; m0 < M; m0 += kRows) {
        int r = static_cast<int>(std::min<int64_t>(kRows, M - m0));
        pick_rows<Q>(r)(p, m0, n0, n1);
      }
    });
  });
}

// x: (M, K), w: (N, row) -> out: (M, N).
void cpu_quant_matvec(const Tensor& x, const Tensor& w, int64_t qtype, const Tensor& out) {
  int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  std::vector<float> xf, of;
  const float* xp;
  if (x.dtype() == DType::Float32) {
    xp = x.data<float>();
  } else {
    xf.resize(static_cast<size_t>(M * K));
    TT_DISPATCH_FLOATING(x.dtype(), "quant_matvec", [&] {
      const scalar_t* s = x.data<scalar_t>();
      for (int64_t i = 0; i < M * K; ++i) xf[i] = static_cast<float>(s[i]);
    });
    xp = xf.data();
  }
  float* op = out.dtype() == DType::Float32 ? out.data<float>() : (of.resize(static_cast<size_t>(M * N)), of.data());
  // Each task gets >= ~64K weights; rows are independent, so the split never changes results.
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(K, 1));
  if (quant_int8_activations() && cpu_isa() != Isa::Scalar && quant_matvec_int8_formats(qtype)) {  // opt-in
    const QuantizedX qx(xp, M, K);
    parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) { qx.rows(qtype, w.data<uint8_t>(), w.size(1), op, N, n0, n1); });
  } else {
    float_matvec(xp, M, K, w, qtype, op, N, grain);
  }
  if (out.dtype() != DType::Float32) {
    TT_DISPATCH_FLOATING(out.dtype(), "quant_matvec", [&] {
      scalar_t* o = out.data<scalar_t>();
      for (int64_t i = 0; i < M * N; ++i) o[i] = static_cast<scalar_t>(of[i]);
    });
  }
}

// ---------------------------------------------------------------- dequantization
// Rows [n0, n1) of w into float32 out (row stride K), 32 values per step from the matvec's
// decoders. The products and sums are rounded as the scalar formulas (code * d, then + m; no
// FMA), so every path gives the same bits. The prefill GEMM path dequantizes its tiles here.
template <QType Q>
TT_QUANT_AVX512 void dequant_rows512(const uint8_t* w, int64_t row, int64_t K, float* out, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t s = 0; s < K / 32; ++s) {
      Sub512 u = decode512<Q>(w + n * row, s);
      float* dst = out + n * K + s * 32;
      __m512 lo = _mm512_mul_ps(u.lo, _mm512_set1_ps(u.dlo)), hi = _mm512_mul_ps(u.hi, _mm512_set1_ps(u.dhi));
      if constexpr (Q == QType::Q4_1 || Q == QType::Q4_K) {
        lo = _mm512_add_ps(lo, _mm512_set1_ps(u.m));
        hi = _mm512_add_ps(hi, _mm512_set1_ps(u.m));
      }
      _mm512_storeu_ps(dst, lo);
      _mm512_storeu_ps(dst + 16, hi);
    }
}

template <QType Q>
TT_QUANT_AVX2 void dequant_rows256(const uint8_t* w, int64_t row, int64_t K, float* out, int64_t n0, int64_t n1) {
  constexpr int64_t kBytes = Format<Q>::kBytes;
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t b = 0; b < K / 32; ++b) {
      const uint8_t* blk = w + n * row + b * kBytes;
      __m256 v[4];
      decode256(Q, blk, v);
      __m256 d = _mm256_set1_ps(_cvtsh_ss(static_cast<unsigned short>(blk[0] | (blk[1] << 8))));
      __m256 m = _mm256_set1_ps(Q == QType::Q4_1 ? _cvtsh_ss(static_cast<unsigned short>(blk[2] | (blk[3] << 8)))
                                                 : 0.f);
      for (int i = 0; i < 4; ++i) {
        __m256 t = _mm256_mul_ps(v[i], d);
        if constexpr (Q == QType::Q4_1) t = _mm256_add_ps(t, m);
        _mm256_storeu_ps(out + n * K + b * 32 + 8 * i, t);
      }
    }
}

template <QType Q>
void dequant_rows_generic(const uint8_t* w, int64_t row, int64_t K, float* out, int64_t n0, int64_t n1) {
  using F = Format<Q>;
  int64_t sub = F::kValues / 32;
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t s = 0; s < K / 32; ++s) {
      float* dst = out + n * K + s * 32;
      F::for_each_value(w + n * row + (s / sub) * F::kBytes, static_cast<int>(s % sub),
                        [&](int i, float v) { dst[i] = v; });
    }
}

using DequantFn = void (*)(const uint8_t*, int64_t, int64_t, float*, int64_t, int64_t);

template <QType Q>
DequantFn pick_dequant() {
  if (cpu_isa() == Isa::Avx512) return dequant_rows512<Q>;
  if constexpr (Q == QType::Q4_0 || Q == QType::Q4_1 || Q == QType::Q8_0) {
    if (cpu_isa() == Isa::Avx2) return dequant_rows256<Q>;
  }
  return dequant_rows_generic<Q>;
}

// w: (N, row) -> out: (N, K): float32 through the SIMD decoders, other dtypes by the scalar
// formulas.
void cpu_quant_dequantize(const Tensor& w, int64_t qtype, const Tensor& out) {
  int64_t N = w.size(0), row = w.size(1), K = out.size(1);
  const uint8_t* wp = w.data<uint8_t>();
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K, 1));
  if (out.dtype() == DType::Float32) {
    float* op = out.data<float>();
    quant::dispatch_format(qtype, [&](auto fmt) {
      DequantFn fn = pick_dequant<decltype(fmt)::kType>();
      parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) { fn(wp, row, K, op, n0, n1); });
    });
    return;
  }
  TT_DISPATCH_FLOATING(out.dtype(), "quant_dequantize", [&] {
    scalar_t* op = out.data<scalar_t>();
    quant::dispatch_format(qtype, [&](auto fmt) {
      using F = decltype(fmt);
      int64_t sub = F::kValues / 32;
      parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n)
          for (int64_t s = 0; s < K / 32; ++s) {
            scalar_t* dst = op + n * K + s * 32;
            F::for_each_value(wp + n * row + (s / sub) * F::kBytes, static_cast<int>(s % sub),
                              [&](int i, float v) { dst[i] = static_cast<scalar_t>(v); });
          }
      });
    });
  });
}

// ---------------------------------------------------------------- many rows (prefill)
// x: (M, K) float32, w: (N, row) -> out: (M, N) float32. Each thread takes whole tiles of
// weight rows: dequantizes one (<= 1 MiB of float32, stays in L2) into its own buffer and
// multiplies it with OpenBLAS's single-threaded sgemm, out[:, n0:n1] = x @ tile^T. No barrier
// between the dequantization and the product; OpenBLAS runs these (M x 576) x (576 x ~300)
// products ~25% faster than the core's AVX-512 kernel here (bench/quant_bench.py --prefill).
void cpu_quant_gemm(const Tensor& x, const Tensor& w, int64_t qtype, const Tensor& out) {
  int64_t M = x.size(0), K = x.size(1), N = w.size(0), row = w.size(1);
  TT_CHECK(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX, "quantized linear: dimension exceeds the 32-bit BLAS limit");
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
  int64_t nt = std::max<int64_t>(1, get_num_threads());
  int64_t cap = std::max<int64_t>(16, ((int64_t(1) << 20) / K) / 16 * 16);          // rows of a 4 MiB tile
  int64_t even = ((N + nt - 1) / nt + 15) / 16 * 16;                                 // every thread busy
  int64_t rows = std::min({cap, std::max<int64_t>(even, 16), N});
  int64_t tiles = (N + rows - 1) / rows;
  const float* xp = x.data<float>();
  const uint8_t* wp = w.data<uint8_t>();
  float* op = out.data<float>();
  quant::dispatch_format(qtype, [&](auto fmt) {
    DequantFn dequant = pick_dequant<decltype(fmt)::kType>();
    parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> tile(static_cast<size_t>(rows * K));
      for (int64_t t = t0; t < t1; ++t) {
        int64_t n0 = t * rows, r = std::min(rows, N - n0);
        dequant(wp + n0 * row, row, K, tile.data(), 0, r);
        scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(M), static_cast<blasint>(r),
                    static_cast<blasint>(K), 1.f, xp, static_cast<blasint>(K), tile.data(), static_cast<blasint>(K),
                    0.f, op + n0, static_cast<blasint>(N));
      }
    });
  });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, quant_gemm, quant_matvec, quant_dequantize)

}  // namespace tt::cpu
