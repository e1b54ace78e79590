// GELU / SiLU over contiguous float32: the plain loops of fast_gelu.h / fast_silu.h compiled
// for the baseline, AVX2+FMA and AVX-512 (the file builds with -fno-trapping-math so their
// selects if-convert and vectorize), and hand-written AVX-512 GELU loops: GCC's version divides
// (vdivps) and runs one latency-bound chain per vector, ~2.5x slower.
#include "activation_simd.h"
#include <immintrin.h>
#include "fast_gelu.h"
#include "fast_silu.h"
#include "simd_level.h"

namespace tt::cpu {
namespace {

// The plain loops of activation NAME (value FN, derivative GRAD), one copy per ISA (suffix);
// GELU's AVX-512 copy is hand-written below.
#define TT_ACTIVATION_LOOPS(attr, suffix, NAME, FN, GRAD)                                           \
  attr void NAME##_##suffix(const float* x, float* o, int64_t n) {                                  \
    for (int64_t i = 0; i < n; ++i) o[i] = FN(x[i]);                                                \
  }                                                                                                 \
  attr void NAME##_bwd_##suffix(const float* g, const float* x, float* o, int64_t n) {              \
    for (int64_t i = 0; i < n; ++i) o[i] = g[i] * GRAD(x[i]);                                       \
  }
#define TT_GELU_LOOPS(attr, suffix) TT_ACTIVATION_LOOPS(attr, suffix, gelu, gelu_fast, gelu_grad_fast)
#define TT_SILU_LOOPS(attr, suffix) TT_ACTIVATION_LOOPS(attr, suffix, silu, silu_fast, silu_grad_fast)

TT_GELU_LOOPS(, default)
TT_SILU_LOOPS(, default)
TT_GELU_LOOPS(TT_TARGET_AVX2, avx2)
TT_SILU_LOOPS(TT_TARGET_AVX2, avx2)
TT_SILU_LOOPS(TT_TARGET_AVX512, avx512)
#if !TT_X86_SIMD  // not x86 GCC: the plain loops stand in for the hand-written ones (never picked)
TT_GELU_LOOPS(, avx512)
#endif
#undef TT_GELU_LOOPS
#undef TT_SILU_LOOPS
#undef TT_ACTIVATION_LOOPS

#if TT_X86_SIMD

// fast_exp (fast_exp.h) on 16 lanes: 0 below -87, NaN stays NaN.
TT_TARGET_AVX512 inline __m512 exp16(__m512 x) {
  // max/min return their second operand when either is NaN: NaN passes through the clamp
  const __m512 xc = _mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-87.0f), x));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), xc);  // Cody-Waite: x - k ln2
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_NLT_UQ);  // !(x < -87)
  return _mm512_maskz_mov_ps(keep, _mm512_scalef_ps(y, k));
}

// Phi(x) = 0.5 * erfc(-x / sqrt(2)) on 16 lanes (normal_cdf in fast_gelu.h); 1 / (1 + |z| / 2)
// by rcp14 and one Newton step (~1 ulp), |z| capped at 1e4 where erfc is 0 anyway.
TT_TARGET_AVX512 inline __m512 normal_cdf16(__m512 x) {
  const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(-0.70710678118654752f));
  const __m512 az = _mm512_abs_ps(z);
  const __m512 d = _mm512_fmadd_ps(_mm512_set1_ps(0.5f), _mm512_min_ps(_mm512_set1_ps(1e4f), az),
                                   _mm512_set1_ps(1.0f));
  __m512 t = _mm512_rcp14_ps(d);
  t = _mm512_fmadd_ps(t, _mm512_fnmadd_ps(d, t, _mm512_set1_ps(1.0f)), t);
  __m512 p = _mm512_set1_ps(0.17087277f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
  const __m512 half = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), t), exp16(_mm512_fnmadd_ps(az, az, p)));
  const __mmask16 neg = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_sub_ps(half, neg, _mm512_set1_ps(1.0f), half);  // erfc(-a) = 2 - erfc(a)
}

TT_TARGET_AVX512 inline __m512 gelu16(__m512 x) { return _mm512_mul_ps(x, normal_cdf16(x)); }

TT_TARGET_AVX512 inline __m512 gelu_grad16(__m512 g, __m512 x) {
  const __m512 pdf = _mm512_mul_ps(_mm512_set1_ps(0.39894228040143268f),
                                   exp16(_mm512_mul_ps(_mm512_set1_ps(-0.5f), _mm512_mul_ps(x, x))));
  return _mm512_mul_ps(g, _mm512_fmadd_ps(x, pdf, normal_cdf16(x)));
}

// Two vectors per iteration (two independent chains), then a masked tail.
TT_TARGET_AVX512 void gelu_avx512(const float* x, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = gelu16(_mm512_loadu_ps(x + i)), b = gelu16(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(o + i, a);
    _mm512_storeu_ps(o + i + 16, b);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(o + i, m, gelu16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

TT_TARGET_AVX512 void gelu_bwd_avx512(const float* g, const float* x, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = gelu_grad16(_mm512_loadu_ps(g + i), _mm512_loadu_ps(x + i));
    const __m512 b = gelu_grad16(_mm512_loadu_ps(g + i + 16), _mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(o + i, a);
    _mm512_storeu_ps(o + i + 16, b);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(o + i, m, gelu_grad16(_mm512_maskz_loadu_ps(m, g + i), _mm512_maskz_loadu_ps(m, x + i)));
  }
}
#endif

}  // namespace

void gelu_f32(const float* x, float* out, int64_t n) { simd_pick(gelu_avx512, gelu_avx2, gelu_default)(x, out, n); }

void gelu_backward_f32(const float* grad, const float* x, float* out, int64_t n) {
  simd_pick(gelu_bwd_avx512, gelu_bwd_avx2, gelu_bwd_default)(grad, x, out, n);
}

void silu_f32(const float* x, float* out, int64_t n) { simd_pick(silu_avx512, silu_avx2, silu_default)(x, out, n); }

void silu_backward_f32(const float* grad, const float* x, float* out, int64_t n) {
  simd_pick(silu_bwd_avx512, silu_bwd_avx2, silu_bwd_default)(grad, x, out, n);
}

}  // namespace tt::cpu
