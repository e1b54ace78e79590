// CPU kernels on packed llama.cpp blocks: the matvec (decode) and row dequantization.
//
// The matvec streams each weight row once and decodes its blocks in registers: integer codes
// widened to float32 lanes, multiplied by x, and the block's sum scaled by its fp16 scale
// (Q4_1's offset m adds m * sum(x_block), precomputed). x stays float32, so the result matches a
// float32 matmul on the dequantized weight (no int8 requantization of x as llama.cpp does).
// AVX-512 and AVX2 versions of Q4_0/Q4_1/Q8_0 are picked at run time; the K-quants (and every
// format without AVX2) decode each 32-value sub-block with the scalar formulas of quant_math.h
// into a small buffer and take a float dot.
#include <immintrin.h>
// GCC 12 flags _mm512_cvtepi8_epi32's internal _mm512_undefined_epi32() as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <vector>
#include "tinytorch/kernels/quant.h"
#include "tinytorch/parallel.h"
#include "tinytorch/quant_math.h"

namespace tt::cpu {
namespace {

using quant::Format;
using quant::QType;

#define TT_QUANT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c")))
#define TT_QUANT_AVX2 __attribute__((target("avx2,fma,f16c")))

enum class Isa { Scalar, Avx2, Avx512 };

Isa cpu_isa() {
  static const Isa isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                 __builtin_cpu_supports("avx512vl")
                             ? Isa::Avx512
                         : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Isa::Avx2
                                                                                            : Isa::Scalar;
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
// A 32-value block as two vectors of its integer codes (values 0..15 and 16..31), before
// scale: Q4_0 codes - 8, Q4_1 codes 0..15, Q8_0 int8.
TT_QUANT_AVX512 inline void decode512(QType q, const uint8_t* b, __m512& lo, __m512& hi) {
  if (q == QType::Q8_0) {
    lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2))));
    hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 18))));
    return;
  }
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (q == QType::Q4_1 ? 4 : 2)));
  __m128i mask = _mm_set1_epi8(0x0F);
  __m128i l = _mm_and_si128(v, mask), h = _mm_and_si128(_mm_srli_epi16(v, 4), mask);
  if (q == QType::Q4_0) {
    l = _mm_sub_epi8(l, _mm_set1_epi8(8));
    h = _mm_sub_epi8(h, _mm_set1_epi8(8));
  }
  lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(l));
  hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(h));
}

// One block b of a row for R input rows starting at m0: acc[r] += d * (codes . x[r, block]),
// offset[r] += m * sum(x[r, block]) (Q4_1).
template <QType Q, int R>
TT_QUANT_AVX512 __attribute__((always_inline)) inline void block512(const Problem& p, const uint8_t* blk, int64_t b,
                                                                    int64_t m0, __m512 (&acc)[R], float (&offset)[R]) {
  __m512 lo, hi;
  decode512(Q, blk, lo, hi);
  __m512 d = _mm512_set1_ps(_cvtsh_ss(static_cast<unsigned short>(blk[0] | (blk[1] << 8))));
  for (int r = 0; r < R; ++r) {
    const float* xb = p.x + (m0 + r) * p.K + b * 32;
    __m512 t = _mm512_fmadd_ps(hi, _mm512_loadu_ps(xb + 16), _mm512_mul_ps(lo, _mm512_loadu_ps(xb)));
    acc[r] = _mm512_fmadd_ps(t, d, acc[r]);
  }
  if constexpr (Q == QType::Q4_1) {
    float m = _cvtsh_ss(static_cast<unsigned short>(blk[2] | (blk[3] << 8)));
    for (int r = 0; r < R; ++r) offset[r] += m * p.xsum[(m0 + r) * (p.K / 32) + b];
  }
}

// out[r, n] for n in [n0, n1) and R input rows starting at m0; even and odd blocks go to two
// sets of accumulators so consecutive FMAs don't wait on each other.
template <QType Q, int R>
TT_QUANT_AVX512 void rows512(const Problem& p, int64_t m0, int64_t n0, int64_t n1) {
  constexpr int64_t kBytes = Format<Q>::kBytes;
  int64_t nb = p.K / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wr = p.w + n * p.row;
    __m512 acc0[R], acc1[R];
    float offset[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps(), offset[r] = 0.f;
    int64_t b = 0;
    for (; b + 1 < nb; b += 2) {
      _mm_prefetch(reinterpret_cast<const char*>(wr + (b + 8) * kBytes), _MM_HINT_T0);
      block512<Q, R>(p, wr + b * kBytes, b, m0, acc0, offset);
      block512<Q, R>(p, wr + (b + 1) * kBytes, b + 1, m0, acc1, offset);
    }
    if (b < nb) block512<Q, R>(p, wr + b * kBytes, b, m0, acc0, offset);
    for (int r = 0; r < R; ++r)
      p.out[(m0 + r) * p.ldo + n] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r])) + offset[r];
  }
}

// ---------------------------------------------------------------- AVX2
TT_QUANT_AVX2 inline void decode256(QType q, const uint8_t* b, __m256 v[4]) {
  __m128i c0, c1;  // the 32 codes as int8: values 0..15, 16..31
  if (q == QType::Q8_0) {
    c0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
    c1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 18));
  } else {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (q == QType::Q4_1 ? 4 : 2)));
    __m128i mask = _mm_set1_epi8(0x0F);
    c0 = _mm_and_si128(x, mask);
    c1 = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
    if (q == QType::Q4_0) {
      c0 = _mm_sub_epi8(c0, _mm_set1_epi8(8));
      c1 = _mm_sub_epi8(c1, _mm_set1_epi8(8));
    }
  }
  v[0] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c0));
  v[1] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(c0, 8)));
  v[2] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c1));
  v[3] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(c1, 8)));
}

TT_QUANT_AVX2 inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <QType Q, int R>
TT_QUANT_AVX2 __attribute__((always_inline)) inline void block256(const Problem& p, const uint8_t* blk, int64_t b,
                                                                  int64_t m0, __m256 (&acc)[R], float (&offset)[R]) {
  __m256 v[4];
  decode256(Q, blk, v);
  __m256 d = _mm256_set1_ps(_cvtsh_ss(static_cast<unsigned short>(blk[0] | (blk[1] << 8))));
  for (int r = 0; r < R; ++r) {
    const float* xb = p.x + (m0 + r) * p.K + b * 32;
    __m256 t = _mm256_mul_ps(v[0], _mm256_loadu_ps(xb));
    t = _mm256_fmadd_ps(v[1], _mm256_loadu_ps(xb + 8), t);
    t = _mm256_fmadd_ps(v[2], _mm256_loadu_ps(xb + 16), t);
    t = _mm256_fmadd_ps(v[3], _mm256_loadu_ps(xb + 24), t);
    acc[r] = _mm256_fmadd_ps(t, d, acc[r]);
  }
  if constexpr (Q == QType::Q4_1) {
    float m = _cvtsh_ss(static_cast<unsigned short>(blk[2] | (blk[3] << 8)));
    for (int r = 0; r < R; ++r) offset[r] += m * p.xsum[(m0 + r) * (p.K / 32) + b];
  }
}

template <QType Q, int R>
TT_QUANT_AVX2 void rows256(const Problem& p, int64_t m0, int64_t n0, int64_t n1) {
  constexpr int64_t kBytes = Format<Q>::kBytes;
  int64_t nb = p.K / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wr = p.w + n * p.row;
    __m256 acc0[R], acc1[R];
    float offset[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps(), offset[r] = 0.f;
    int64_t b = 0;
    for (; b + 1 < nb; b += 2) {
      block256<Q, R>(p, wr + b * kBytes, b, m0, acc0, offset);
      block256<Q, R>(p, wr + (b + 1) * kBytes, b + 1, m0, acc1, offset);
    }
    if (b < nb) block256<Q, R>(p, wr + b * kBytes, b, m0, acc0, offset);
    for (int r = 0; r < R; ++r) p.out[(m0 + r) * p.ldo + n] = hsum256(_mm256_add_ps(acc0[r], acc1[r])) + offset[r];
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
  if constexpr (Q == QType::Q4_0 || Q == QType::Q4_1 || Q == QType::Q8_0) {
    if (cpu_isa() == Isa::Avx512) return rows512<Q, R>;
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
  std::vector<float> xsum;
  if (qtype == static_cast<int64_t>(QType::Q4_1)) {
    xsum.assign(static_cast<size_t>(M * (K / 32)), 0.f);
    for (int64_t i = 0; i < M * (K / 32); ++i)
      for (int j = 0; j < 32; ++j) xsum[i] += xp[i * 32 + j];
  }
  float* op = out.dtype() == DType::Float32 ? out.data<float>() : (of.resize(static_cast<size_t>(M * N)), of.data());
  Problem p{xp, xsum.data(), w.data<uint8_t>(), op, M, K, w.size(1), N};
  quant::dispatch_format(qtype, [&](auto fmt) {
    constexpr QType Q = decltype(fmt)::kType;
    // Each task gets >= ~64K weights; rows are independent, so the split never changes results.
    int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(K, 1));
    parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
      for (int64_t m0 = 0; m0 < M; m0 += kRows) {
        int r = static_cast<int>(std::min<int64_t>(kRows, M - m0));
        pick_rows<Q>(r)(p, m0, n0, n1);
      }
    });
  });
  if (out.dtype() != DType::Float32) {
    TT_DISPATCH_FLOATING(out.dtype(), "quant_matvec", [&] {
      scalar_t* o = out.data<scalar_t>();
      for (int64_t i = 0; i < M * N; ++i) o[i] = static_cast<scalar_t>(of[i]);
    });
  }
}

// w: (N, row) -> out: (N, K), each row decoded by the scalar formulas.
void cpu_quant_dequantize(const Tensor& w, int64_t qtype, const Tensor& out) {
  int64_t N = w.size(0), row = w.size(1), K = out.size(1);
  const uint8_t* wp = w.data<uint8_t>();
  TT_DISPATCH_FLOATING(out.dtype(), "quant_dequantize", [&] {
    scalar_t* op = out.data<scalar_t>();
    quant::dispatch_format(qtype, [&](auto fmt) {
      using F = decltype(fmt);
      int64_t sub = F::kValues / 32;
      parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K, 1)), [&](int64_t n0, int64_t n1) {
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

}  // namespace

TT_REGISTER_KERNEL(quant_matvec, CPU, cpu_quant_matvec)
TT_REGISTER_KERNEL(quant_dequantize, CPU, cpu_quant_dequantize)

}  // namespace tt::cpu
