// CPU fused attention (FlashAttention-2 on the CPU): threads take (batch, head, query block)
// tasks; each walks the key tiles with an online softmax, so memory is O(L) per thread, never
// (Lq, Lk). Tiles are converted to the accumulation type (float; double for float64) once and
// multiplied by a small register-blocked GEMM. The backward recomputes the scores per tile, and
// no two threads write one gradient row (no atomics, deterministic for a given thread count):
// in one pass per (batch, kv head) where there are two or more of those per thread, else in two
// passes (dK/dV per (batch, kv head, key block), then dQ per (batch, head, query block)). The
// forward's tasks are likewise whole (batch, head)s or their query blocks (whole_heads).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")  // lets GCC if-convert fast_exp's compares (as norm.cpp)
#endif
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include "fast_exp.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES, simd::extreme
#include "sgemm_avx512.h"
#include "tinytorch/kernels/attention.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

constexpr int64_t kBlockQ = 32;  // query rows per task
constexpr int64_t kBlockK = 128;  // keys per tile (bench/attention_bench.py: 64 was 10–15% slower)

// crow[0:w] = (acc ? crow : 0) + sum over kk of arow[kk * a_cs] * b[kk * ldb : kk * ldb + w], in a
// local accumulator the compiler keeps in registers; w is a compile-time constant for full blocks.
template <class A, class Width>
__attribute__((always_inline)) inline void tile_gemm_block(Width w, int64_t k, const A* arow, int64_t a_cs,
                                                           const A* b, int64_t ldb, A* crow, bool acc) {
  A t[256 / sizeof(A)];
  for (int64_t j = 0; j < w; ++j) t[j] = acc ? crow[j] : A(0);
  for (int64_t kk = 0; kk < k; ++kk) {
    const A av = arow[kk * a_cs];
    const A* brow = b + kk * ldb;
    for (int64_t j = 0; j < w; ++j) t[j] += av * brow[j];
  }
  for (int64_t j = 0; j < w; ++j) crow[j] = t[j];
}

// c (m, n) = (acc ? c : 0) + a @ b, where a's element (i, kk) is a[i * a_rs + kk * a_cs] (so
// a = P^T is a transposed view) and b is (k, n) row-major. Columns go in blocks of four 512-bit
// vectors, then one block of the rest.
template <class A>
__attribute__((always_inline)) inline void tile_gemm_impl(int64_t m, int64_t n, int64_t k, const A* a, int64_t a_rs,
                                                          int64_t a_cs, const A* b, int64_t ldb, A* c, int64_t ldc,
                                                          bool acc) {
  constexpr int64_t W = 256 / sizeof(A);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j0 = 0; j0 < n; j0 += W) {
      if (j0 + W <= n)
        tile_gemm_block(std::integral_constant<int64_t, W>{}, k, a + i * a_rs, a_cs, b + j0, ldb, c + i * ldc + j0,
                        acc);
      else
        tile_gemm_block(n - j0, k, a + i * a_rs, a_cs, b + j0, ldb, c + i * ldc + j0, acc);
    }
  }
}

TT_SIMD_CLONES void tile_gemm_clones(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
                                     const float* b, int64_t ldb, float* c, int64_t ldc, bool acc) {
  tile_gemm_impl(m, n, k, a, a_rs, a_cs, b, ldb, c, ldc, acc);
}
// float: the AVX-512 GEMM's register-blocked micro-kernel (8 rows x 32 columns) where enabled.
void tile_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
               int64_t ldb, float* c, int64_t ldc, bool acc) {
  if (sgemm_avx512_enabled()) return sgemm_avx512_small(m, n, k, a, a_rs, a_cs, b, ldb, c, ldc, acc);
  tile_gemm_clones(m, n, k, a, a_rs, a_cs, b, ldb, c, ldc, acc);
}
TT_SIMD_CLONES void tile_gemm(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs,
                              const double* b, int64_t ldb, double* c, int64_t ldc, bool acc) {
  tile_gemm_impl(m, n, k, a, a_rs, a_cs, b, ldb, c, ldc, acc);
}

// Whether tasks take whole heads (n of them: (batch, head) pairs in the forward, (batch, kv head)
// in the backward's one pass) rather than tiles of them: where every thread gets two or more and
// a head's scratch (per thread) stays within 64 MiB. TINYTORCH_ATTENTION_CPU_WHOLE_HEADS=1 or 0
// forces either (the tests run both).
bool whole_heads(int64_t n, int64_t scratch_bytes) {
  const char* forced = std::getenv("TINYTORCH_ATTENTION_CPU_WHOLE_HEADS");
  if (forced && (forced[0] == '0' || forced[0] == '1') && forced[1] == 0) return forced[0] == '1';
  return n >= 2 * int64_t(get_num_threads()) && scratch_bytes <= (int64_t(64) << 20);
}

// Row helpers for the online softmax: float vectorized (fast_exp), double through std::exp.
TT_SIMD_CLONES float row_max(const float* x, int64_t n) { return simd::extreme<true>(x, n); }
double row_max(const double* x, int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m || x[i] != x[i] ? x[i] : m;
  return m;
}
// x[i] = exp(x[i] - m); returns the sum (16 partial sums, so the loop vectorizes).
TT_SIMD_CLONES float exp_shift_sum(float* x, int64_t n, float m) {
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += (x[i + k] = fast_exp(x[i + k] - m));
  for (; i < n; ++i) acc[0] += (x[i] = fast_exp(x[i] - m));
  for (int k = 1; k < 16; ++k) acc[0] += acc[k];
  return acc[0];
}
double exp_shift_sum(double* x, int64_t n, double m) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += (x[i] = std::exp(x[i] - m));
  return acc;
}

// A (B, H, L, D) operand read or written in place: unit stride along D, any other strides (so q,
// k, v transposed out of a (B, L, H, D) projection need no copy). bh = b * H + h.
template <class Ptr>
struct HeadRowsOf {
  Ptr base;
  int64_t sb, sh, sl, H;
  explicit HeadRowsOf(const Tensor& t)
      : base(static_cast<Ptr>(t.data_ptr())), sb(t.stride(0)), sh(t.stride(1)), sl(t.stride(2)), H(t.shape()[1]) {}
  Ptr head(int64_t bh) const { return base + (bh / H) * sb + (bh % H) * sh; }
  Ptr row(int64_t bh, int64_t l) const { return head(bh) + l * sl; }
};
template <class T>
using HeadRows = HeadRowsOf<const T*>;
template <class T>
using HeadRowsOut = HeadRowsOf<T*>;

// dst (rows, cols) <- rows [r0, r0 + rows) of one head (rows ld apart, unit column stride),
// converted (and multiplied by `mul`); transposed: dst (cols, rows).
template <class T, class A>
void load_tile(const HeadRows<T>& x, int64_t bh, int64_t r0, int64_t rows, int64_t cols, A mul, A* dst,
               bool transposed) {
  const T* head = x.head(bh);
  for (int64_t r = 0; r < rows; ++r) {
    const T* s = head + (r0 + r) * x.sl;
    if (transposed)
      for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = A(s[c]) * mul;
    else
      for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = A(s[c]) * mul;
  }
}

#if defined(__SSE2__)
// float32 tiles: rows copied (or scaled) whole; transposed tiles in 4 x 4 register blocks (the
// scalar scatter was ~7% of a small GPT training step).
inline void load_tile(const HeadRows<float>& x, int64_t bh, int64_t r0, int64_t rows, int64_t cols, float mul,
                      float* dst, bool transposed) {
  const float* head = x.head(bh) + r0 * x.sl;
  if (!transposed) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* s = head + r * x.sl;
      float* d = dst + r * cols;
      if (mul == 1.0f) std::memcpy(d, s, static_cast<size_t>(cols) * sizeof(float));
      else for (int64_t c = 0; c < cols; ++c) d[c] = s[c] * mul;
    }
    return;
  }
  const __m128 vm = _mm_set1_ps(mul);
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {  // dst[c * rows + r .. r + 3] = column c of source rows r .. r + 3
    const float *s0 = head + r * x.sl, *s1 = s0 + x.sl, *s2 = s1 + x.sl, *s3 = s2 + x.sl;
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      __m128 a = _mm_loadu_ps(s0 + c), b = _mm_loadu_ps(s1 + c), e = _mm_loadu_ps(s2 + c), f = _mm_loadu_ps(s3 + c);
      _MM_TRANSPOSE4_PS(a, b, e, f);
      _mm_storeu_ps(dst + (c + 0) * rows + r, _mm_mul_ps(a, vm));
      _mm_storeu_ps(dst + (c + 1) * rows + r, _mm_mul_ps(b, vm));
      _mm_storeu_ps(dst + (c + 2) * rows + r, _mm_mul_ps(e, vm));
      _mm_storeu_ps(dst + (c + 3) * rows + r, _mm_mul_ps(f, vm));
    }
    for (; c < cols; ++c) {
      dst[c * rows + r] = s0[c] * mul, dst[c * rows + r + 1] = s1[c] * mul;
      dst[c * rows + r + 2] = s2[c] * mul, dst[c * rows + r + 3] = s3[c] * mul;
    }
  }
  for (; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = head[r * x.sl + c] * mul;
}
#endif

// s (nq, nk): scores of query rows [i0, i0 + nq) against keys [j0, j0 + nk) after the mask and
// the causal cut (masked = -inf); qs is already scaled; kt: K^T (E, nk), rows ldk apart.
template <class A>
void masked_scores(const AttentionParams& p, const A* mask, int64_t b, int64_t h, int64_t i0, int64_t nq,
                   int64_t j0, int64_t nk, const A* qs, const A* kt, int64_t ldk, A* s) {
  tile_gemm(nq, nk, p.E, qs, p.E, 1, kt, ldk, s, nk, false);
  const A ninf = -std::numeric_limits<A>::infinity();
  for (int64_t r = 0; r < nq; ++r) {
    A* row = s + r * nk;
    const int64_t i = i0 + r;
    if (mask) {
      const A* mrow = mask + b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2];
      for (int64_t c = 0; c < nk; ++c) row[c] += mrow[(j0 + c) * p.mask_stride[3]];
    }
    if (p.causal)
      for (int64_t c = std::max<int64_t>(0, i + 1 - j0); c < nk; ++c) row[c] = ninf;
  }
}

// Row r of the tile: multiplies `row` (nk) by keep / (1 - p) (the dropped probabilities).
template <class A>
void apply_dropout(const AttentionParams& p, int64_t bh, int64_t i, int64_t j0, int64_t nk, A* row) {
  const A inv = p.dropout_p >= 1 ? A(0) : A(1.0 / (1.0 - p.dropout_p));
  for (int64_t c = 0; c < nk; ++c) row[c] = attention_keep(p, bh, i, j0 + c) ? row[c] * inv : A(0);
}

template <class T>
void forward_typed(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                   const Tensor& out, const Tensor& lse) {
  using A = opmath_t<T>;
  const HeadRows<T> qr(q), kr(k), vr(v);
  const HeadRowsOut<T> outr(out);
  const A* mp = mask.defined() ? mask.data<A>() : nullptr;
  A* lp = lse.data<A>();
  const int64_t E = p.E, Ev = p.Ev, group = p.H / p.Hkv, nqb = (p.Lq + kBlockQ - 1) / kBlockQ;
  // Whole heads per task (K^T and V converted once per head instead of once per (query block, key
  // tile)) where every thread gets two or more.
  const bool whole = whole_heads(p.B * p.H, p.Lk * (E + Ev) * int64_t(sizeof(A)));  // K^T, V
  const int64_t kend = p.causal ? std::min(p.Lk, p.Lq) : p.Lk;  // the keys some query sees
  const int64_t ntasks = whole ? p.B * p.H : p.B * p.H * nqb;
  parallel_for(0, ntasks, 1, [&](int64_t t0, int64_t t1) {
    std::vector<A> qs(kBlockQ * E), s(kBlockQ * kBlockK), o(kBlockQ * Ev), m(kBlockQ), l(kBlockQ);
    std::vector<A> kt(E * (whole ? p.Lk : kBlockK)), vt((whole ? p.Lk : kBlockK) * Ev);
    int64_t loaded = -1;  // the kv head whose K^T, V fill kt, vt (whole)
    // query rows [i0, i0 + nq) of head bh: O and lse
    auto query_block = [&](int64_t bh, int64_t i0) {
      const int64_t b = bh / p.H, h = bh % p.H, bhk = b * p.Hkv + h / group, nq = std::min(kBlockQ, p.Lq - i0);
      load_tile(qr, bh, i0, nq, E, A(p.scale), qs.data(), false);
      std::fill(o.begin(), o.end(), A(0));
      std::fill(m.begin(), m.end(), -std::numeric_limits<A>::infinity());
      std::fill(l.begin(), l.end(), A(0));
      const int64_t jend = p.causal ? std::min(p.Lk, i0 + nq) : p.Lk;
      for (int64_t j0 = 0; j0 < jend; j0 += kBlockK) {
        const int64_t nk = std::min(kBlockK, jend - j0);
        const A *ktile = kt.data(), *vtile = vt.data();
        int64_t ldk = nk;
        if (whole) {
          ktile += j0, vtile += j0 * Ev, ldk = kend;
        } else {
          load_tile(kr, bhk, j0, nk, E, A(1), kt.data(), true);
          load_tile(vr, bhk, j0, nk, Ev, A(1), vt.data(), false);
        }
        masked_scores(p, mp, b, h, i0, nq, j0, nk, qs.data(), ktile, ldk, s.data());
        for (int64_t r = 0; r < nq; ++r) {  // online softmax: rescale what was summed so far
          A* row = s.data() + r * nk;
          const A mx = std::max(m[r], row_max(row, nk));
          if (mx == -std::numeric_limits<A>::infinity()) {  // every key so far masked
            std::fill(row, row + nk, A(0));
            continue;
          }
          const A corr = std::exp(m[r] - mx);
          l[r] = l[r] * corr + exp_shift_sum(row, nk, mx);
          m[r] = mx;
          for (int64_t e = 0; e < Ev; ++e) o[r * Ev + e] *= corr;
          if (p.dropout_p > 0) apply_dropout(p, bh, i0 + r, j0, nk, row);
        }
        tile_gemm(nq, Ev, nk, s.data(), nk, 1, vtile, Ev, o.data(), Ev, true);
      }
      for (int64_t r = 0; r < nq; ++r) {
        const A inv = l[r] > 0 ? A(1) / l[r] : A(0);
        T* orow = outr.row(bh, i0 + r);
        for (int64_t e = 0; e < Ev; ++e) orow[e] = T(o[r * Ev + e] * inv);
        lp[bh * p.Lq + i0 + r] = l[r] > 0 ? m[r] + std::log(l[r]) : -std::numeric_limits<A>::infinity();
      }
    };
    for (int64_t task = t0; task < t1; ++task) {
      if (!whole) {
        query_block(task / nqb, (task % nqb) * kBlockQ);
        continue;
      }
      const int64_t bh = task, bhk = bh / p.H * p.Hkv + bh % p.H / group;
      if (bhk != loaded) {
        load_tile(kr, bhk, 0, kend, E, A(1), kt.data(), true);  // K^T (E, kend)
        load_tile(vr, bhk, 0, kend, Ev, A(1), vt.data(), false);
        loaded = bhk;
      }
      for (int64_t i0 = 0; i0 < p.Lq; i0 += kBlockQ) query_block(bh, i0);
    }
  });
}

void cpu_attention_forward(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask, const Tensor& out, const Tensor& lse) {
  TT_DISPATCH_FLOATING(q.dtype(), "scaled_dot_product_attention", [&] { forward_typed<scalar_t>(p, q, k, v, mask, out, lse); });
}

// Backward scratch for one tile: P and dS (nq, nk) from the scores, given the row statistics.
// kt, vt: K^T, V^T (E or Ev, nk), rows ld apart. On return s holds P with dropout applied (what
// multiplied V) and dp holds dS.
template <class A>
void probs_and_dscores(const AttentionParams& p, const A* mask, const A* lse, const A* dvec, int64_t b,
                       int64_t h, int64_t bh, int64_t i0, int64_t nq, int64_t j0, int64_t nk, const A* qs,
                       const A* kt, const A* dout, const A* vt, int64_t ld, A* s, A* dp) {
  masked_scores(p, mask, b, h, i0, nq, j0, nk, qs, kt, ld, s);
  tile_gemm(nq, nk, p.Ev, dout, p.Ev, 1, vt, ld, dp, nk, false);  // dP~ = dO V^T
  const A inv = p.dropout_p >= 1 ? A(0) : A(1.0 / (1.0 - p.dropout_p));
  for (int64_t r = 0; r < nq; ++r) {
    const A lr = lse[r], d = dvec[r];
    A *srow = s + r * nk, *drow = dp + r * nk;
    if (lr == -std::numeric_limits<A>::infinity()) std::fill(srow, srow + nk, A(0));  // row with no key: P = 0
    else exp_shift_sum(srow, nk, lr);                                                 // P
    if (p.dropout_p > 0) {
      for (int64_t c = 0; c < nk; ++c) {  // dS = P (dP - D) with dP = dP~ keep / (1 - p); P dropped for dV
        const A kd = attention_keep(p, bh, i0 + r, j0 + c) ? inv : A(0);
        drow[c] = srow[c] * (drow[c] * kd - d);
        srow[c] *= kd;
      }
    } else {
      for (int64_t c = 0; c < nk; ++c) drow[c] = srow[c] * (drow[c] - d);
    }
  }
}

// The operands of one backward call, as the backward's paths read them.
template <class T>
struct BackwardArgs {
  using A = opmath_t<T>;
  const AttentionParams& p;
  HeadRows<T> qr, kr, vr, gr;
  HeadRowsOut<T> gqr, gkr, gvr;
  const A* mp;  // the float mask or null
  const A* lp;  // lse (B, H, Lq)
  const A* dvec;  // D = rowsum(dO * O) (B, H, Lq)
};

// Rows [r0, r0 + n) of kv head bhk's dK and dV from their accumulators (rows of E and Ev).
template <class T, class A>
void store_kv_rows(const BackwardArgs<T>& a, int64_t bhk, int64_t r0, int64_t n, const A* dk, const A* dv) {
  for (int64_t r = 0; r < n; ++r) {
    T *gkp = a.gkr.row(bhk, r0 + r), *gvp = a.gvr.row(bhk, r0 + r);
    for (int64_t e = 0; e < a.p.E; ++e) gkp[e] = T(dk[r * a.p.E + e]);
    for (int64_t e = 0; e < a.p.Ev; ++e) gvp[e] = T(dv[r * a.p.Ev + e]);
  }
}

// Rows [i0, i0 + nq) of head bh's dQ from its accumulator (rows of E), times the scale.
template <class T, class A>
void store_q_rows(const BackwardArgs<T>& a, int64_t bh, int64_t i0, int64_t nq, const A* dq) {
  for (int64_t r = 0; r < nq; ++r) {
    T* gqp = a.gqr.row(bh, i0 + r);
    for (int64_t e = 0; e < a.p.E; ++e) gqp[e] = T(dq[r * a.p.E + e] * A(a.p.scale));
  }
}

// One pass: a task owns a (batch, kv head) with every query row of its group's heads, so it adds
// dQ, dK and dV without atomics: S and dP once per tile, 5 tile products instead of the two
// passes' 7. K^T, V^T and K of the head are converted once per task; dK/dV accumulate over the
// whole head (scratch O(Lk) per thread).
template <class T>
void backward_one_pass(const BackwardArgs<T>& a) {
  using A = opmath_t<T>;
  const AttentionParams& p = a.p;
  const int64_t E = p.E, Ev = p.Ev, group = p.H / p.Hkv, Lk = p.Lk;
  const int64_t kend = p.causal ? std::min(Lk, p.Lq) : Lk;  // the keys some query sees
  parallel_for(0, p.B * p.Hkv, 1, [&](int64_t t0, int64_t t1) {
    std::vector<A> qs(kBlockQ * E), dout(kBlockQ * Ev), s(kBlockQ * kBlockK), dp(kBlockQ * kBlockK), dq(kBlockQ * E);
    std::vector<A> kt(E * Lk), vt(Ev * Lk), kn(Lk * E), dk(Lk * E), dv(Lk * Ev);
    for (int64_t bhk = t0; bhk < t1; ++bhk) {
      const int64_t b = bhk / p.Hkv, hk = bhk % p.Hkv;
      load_tile(a.kr, bhk, 0, kend, E, A(1), kt.data(), true);  // K^T (E, kend)
      load_tile(a.vr, bhk, 0, kend, Ev, A(1), vt.data(), true);
      load_tile(a.kr, bhk, 0, kend, E, A(1), kn.data(), false);
      std::fill(dk.begin(), dk.end(), A(0));
      std::fill(dv.begin(), dv.end(), A(0));
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
        const int64_t bh = b * p.H + h;
        for (int64_t i0 = 0; i0 < p.Lq; i0 += kBlockQ) {
          const int64_t nq = std::min(kBlockQ, p.Lq - i0);
          load_tile(a.qr, bh, i0, nq, E, A(p.scale), qs.data(), false);
          load_tile(a.gr, bh, i0, nq, Ev, A(1), dout.data(), false);
          std::fill(dq.begin(), dq.end(), A(0));
          const int64_t jend = p.causal ? std::min(Lk, i0 + nq) : Lk;
          for (int64_t j0 = 0; j0 < jend; j0 += kBlockK) {
            const int64_t nk = std::min(kBlockK, jend - j0);
            probs_and_dscores(p, a.mp, a.lp + bh * p.Lq + i0, a.dvec + bh * p.Lq + i0, b, h, bh, i0, nq, j0, nk,
                              qs.data(), kt.data() + j0, dout.data(), vt.data() + j0, kend, s.data(), dp.data());
            tile_gemm(nk, Ev, nq, s.data(), 1, nk, dout.data(), Ev, dv.data() + j0 * Ev, Ev, true);  // dV += P^T dO
            tile_gemm(nk, E, nq, dp.data(), 1, nk, qs.data(), E, dk.data() + j0 * E, E, true);  // dK += dS^T (Q scale)
            tile_gemm(nq, E, nk, dp.data(), nk, 1, kn.data() + j0 * E, E, dq.data(), E, true);  // dQ += dS K
          }
          store_q_rows(a, bh, i0, nq, dq.data());
        }
      }
      store_kv_rows(a, bhk, 0, Lk, dk.data(), dv.data());
    }
  });
}

// Two passes, for few (batch, kv head) pairs per thread: dK/dV per key block, then dQ per query
// block, each recomputing S and dP (7 tile products), so that every thread has work.
template <class T>
void backward_two_pass(const BackwardArgs<T>& a) {
  using A = opmath_t<T>;
  const AttentionParams& p = a.p;
  const int64_t E = p.E, Ev = p.Ev, group = p.H / p.Hkv, BH = p.B * p.H;
  // Pass 1: dK, dV per (batch, kv head, key block), over every query row of the group's heads.
  const int64_t nkb = (p.Lk + kBlockK - 1) / kBlockK;
  parallel_for(0, p.B * p.Hkv * nkb, 1, [&](int64_t t0, int64_t t1) {
    std::vector<A> qs(kBlockQ * E), dout(kBlockQ * Ev), kt(E * kBlockK), vt(Ev * kBlockK), s(kBlockQ * kBlockK),
        dp(kBlockQ * kBlockK), dk(kBlockK * E), dv(kBlockK * Ev);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t bhk = task / nkb, b = bhk / p.Hkv, hk = bhk % p.Hkv;
      const int64_t j0 = (task % nkb) * kBlockK, nk = std::min(kBlockK, p.Lk - j0);
      load_tile(a.kr, bhk, j0, nk, E, A(1), kt.data(), true);
      load_tile(a.vr, bhk, j0, nk, Ev, A(1), vt.data(), true);
      std::fill(dk.begin(), dk.end(), A(0));
      std::fill(dv.begin(), dv.end(), A(0));
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
        const int64_t bh = b * p.H + h;
        for (int64_t i0 = p.causal ? j0 / kBlockQ * kBlockQ : 0; i0 < p.Lq; i0 += kBlockQ) {
          const int64_t nq = std::min(kBlockQ, p.Lq - i0);
          load_tile(a.qr, bh, i0, nq, E, A(p.scale), qs.data(), false);
          load_tile(a.gr, bh, i0, nq, Ev, A(1), dout.data(), false);
          probs_and_dscores(p, a.mp, a.lp + bh * p.Lq + i0, a.dvec + bh * p.Lq + i0, b, h, bh, i0, nq, j0, nk,
                            qs.data(), kt.data(), dout.data(), vt.data(), nk, s.data(), dp.data());
          tile_gemm(nk, Ev, nq, s.data(), 1, nk, dout.data(), Ev, dv.data(), Ev, true);  // dV += P^T dO
          tile_gemm(nk, E, nq, dp.data(), 1, nk, qs.data(), E, dk.data(), E, true);      // dK += dS^T (Q scale)
        }
      }
      store_kv_rows(a, bhk, j0, nk, dk.data(), dv.data());
    }
  });
  // Pass 2: dQ per (batch, head, query block), over the key tiles.
  const int64_t nqb = (p.Lq + kBlockQ - 1) / kBlockQ;
  parallel_for(0, BH * nqb, 1, [&](int64_t t0, int64_t t1) {
    std::vector<A> qs(kBlockQ * E), dout(kBlockQ * Ev), kt(E * kBlockK), vt(Ev * kBlockK), kn(kBlockK * E),
        s(kBlockQ * kBlockK), dp(kBlockQ * kBlockK), dq(kBlockQ * E);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t bh = task / nqb, b = bh / p.H, h = bh % p.H, bhk = b * p.Hkv + h / group;
      const int64_t i0 = (task % nqb) * kBlockQ, nq = std::min(kBlockQ, p.Lq - i0);
      load_tile(a.qr, bh, i0, nq, E, A(p.scale), qs.data(), false);
      load_tile(a.gr, bh, i0, nq, Ev, A(1), dout.data(), false);
      std::fill(dq.begin(), dq.end(), A(0));
      const int64_t jend = p.causal ? std::min(p.Lk, i0 + nq) : p.Lk;
      for (int64_t j0 = 0; j0 < jend; j0 += kBlockK) {
        const int64_t nk = std::min(kBlockK, jend - j0);
        load_tile(a.kr, bhk, j0, nk, E, A(1), kt.data(), true);
        load_tile(a.kr, bhk, j0, nk, E, A(1), kn.data(), false);
        load_tile(a.vr, bhk, j0, nk, Ev, A(1), vt.data(), true);
        probs_and_dscores(p, a.mp, a.lp + bh * p.Lq + i0, a.dvec + bh * p.Lq + i0, b, h, bh, i0, nq, j0, nk,
                          qs.data(), kt.data(), dout.data(), vt.data(), nk, s.data(), dp.data());
        tile_gemm(nq, E, nk, dp.data(), nk, 1, kn.data(), E, dq.data(), E, true);  // dQ += dS K
      }
      store_q_rows(a, bh, i0, nq, dq.data());
    }
  });
}

template <class T>
void backward_typed(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor& mask, const Tensor& out, const Tensor& lse, const Tensor& gq, const Tensor& gk,
                    const Tensor& gv) {
  using A = opmath_t<T>;
  const HeadRows<T> qr(q), kr(k), vr(v), gr(gout), outr(out);
  const HeadRowsOut<T> gqr(gq), gkr(gk), gvr(gv);
  const A* mp = mask.defined() ? mask.data<A>() : nullptr;
  const A* lp = lse.data<A>();
  const int64_t Ev = p.Ev, BH = p.B * p.H;
  // D = rowsum(dO * O): (B, H, Lq)
  std::vector<A> dvec(BH * p.Lq);
  parallel_for(0, BH * p.Lq, 256, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *go = gr.head(r / p.Lq) + (r % p.Lq) * gr.sl, *o = outr.head(r / p.Lq) + (r % p.Lq) * outr.sl;
      A acc = 0;
      for (int64_t e = 0; e < Ev; ++e) acc += A(go[e]) * A(o[e]);
      dvec[r] = acc;
    }
  });
  const BackwardArgs<T> args{p, qr, kr, vr, gr, gqr, gkr, gvr, mp, lp, dvec.data()};
  // one pass where every thread gets two or more (batch, kv head) pairs (the paths round differently)
  if (whole_heads(p.B * p.Hkv, p.Lk * (3 * p.E + 2 * p.Ev) * int64_t(sizeof(A))))  // K^T, K, V^T, dK, dV
    backward_one_pass(args);
  else
    backward_two_pass(args);
}

void cpu_attention_backward(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& mask, const Tensor& out, const Tensor& lse,
                            const Tensor& gq, const Tensor& gk, const Tensor& gv) {
  TT_DISPATCH_FLOATING(q.dtype(), "scaled_dot_product_attention_backward",
                       [&] { backward_typed<scalar_t>(p, gout, q, k, v, mask, out, lse, gq, gk, gv); });
}

// keep: (B, H, Lq, Lk) bool contiguous
void cpu_attention_dropout_mask(const AttentionParams& p, const Tensor& keep) {
  bool* kp = keep.data<bool>();
  parallel_for(0, p.B * p.H * p.Lq, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < p.Lk; ++j) kp[r * p.Lk + j] = attention_keep(p, r / p.Lq, r % p.Lq, j);
  });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, attention_forward, attention_backward, attention_dropout_mask)

}  // namespace tt::cpu
