// CPU GEMM: OpenBLAS for float32/float64, float32 OpenBLAS for the 16-bit floats (convert,
// sgemm, round once), a plain loop for integers. On AVX-512 CPUs float32 uses our own packed
// kernel instead: OpenBLAS picks its AVX2 (Haswell) kernels on AMD Zen 4/5, ~half the speed.
#include <cblas.h>
#include <immintrin.h>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "tinytorch/kernels/linalg.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// Below ~64^3 multiply-adds a product isn't worth splitting over threads.
constexpr int64_t kSmallGemm = 64 * 64 * 64;

// ---------------------------------------------------------------- AVX-512 float32 GEMM
// C (m, n) = alpha * A (m, k) @ B (k, n) + beta * C, with A[i, p] = a[i*rsa + p*csa] read in
// place (its entries are broadcast) and B packed into panels of kNR columns. Every C entry
// sums its k products in the same fixed order whatever the m/n split, so results do not
// depend on how many threads share a product.
constexpr int kMR = 8, kNR = 32;  // micro-tile: 8 rows x 2 zmm of C in 16 accumulators
constexpr int64_t kKC = 384;
constexpr int64_t kDirectMaxN = 1024;  // a non-transposed B up to this wide is read in place      // k-block: a packed B panel (kKC x 32 floats, 48 KiB) ~ L1

#define TT_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,fma")))

bool has_avx512() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512vl") && std::getenv("TINYTORCH_NO_AVX512_GEMM") == nullptr;
  return ok;
}

// Packs B[k0:k0+kc, j0:j0+nc] into ceil(nc/32) panels, panel q: (kc, 32), zero-padded columns.
TT_AVX512 void pack_b(const float* b, int64_t ldb, bool tb, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                      float* dst) {
  for (int64_t q = 0; q < nc; q += kNR, dst += kc * kNR) {
    int64_t w = std::min<int64_t>(kNR, nc - q);
    if (!tb) {  // row p of the panel: 32 consecutive floats of B's row k0 + p
      __mmask16 m0 = static_cast<__mmask16>(w >= 16 ? 0xFFFF : (1u << w) - 1);
      __mmask16 m1 = static_cast<__mmask16>(w >= 32 ? 0xFFFF : w > 16 ? (1u << (w - 16)) - 1 : 0);
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b + (k0 + p) * ldb + j0 + q;
        _mm512_storeu_ps(dst + p * kNR, _mm512_maskz_loadu_ps(m0, src));
        _mm512_storeu_ps(dst + p * kNR + 16, _mm512_maskz_loadu_ps(m1, src + 16));
      }
    } else {  // B[k, j] = b[j*ldb + k]: column j of the panel is a contiguous run of b
      if (w < kNR) std::fill(dst, dst + kc * kNR, 0.f);
      for (int64_t j = 0; j < w; ++j) {
        const float* src = b + (j0 + q + j) * ldb + k0;
        for (int64_t p = 0; p < kc; ++p) dst[p * kNR + j] = src[p];
      }
    }
  }
}

// C[0:mr, 0:w] (=|+=) alpha * A[0:mr, 0:kc] @ panel; first: apply beta (0 -> C not read).
// The panel's row p is bp[p*ldp : p*ldp + w]: a packed panel (ldp = 32) or B itself (ldp = ldb).
// 16 named accumulators (an array of them makes GCC spill to the stack every iteration); rows
// past mr re-read row 0 and are dropped.
TT_AVX512 void micro(int64_t mr, int64_t kc, const float* a, int64_t rsa, int64_t csa, const float* bp,
                     int64_t ldp, float* c, int64_t ldc, int64_t w, float alpha, float beta, bool first) {
  __mmask16 m0 = static_cast<__mmask16>(w >= 16 ? 0xFFFF : (1u << w) - 1);
  __mmask16 m1 = static_cast<__mmask16>(w >= 32 ? 0xFFFF : w > 16 ? (1u << (w - 16)) - 1 : 0);
  const float* ar[kMR];
  for (int r = 0; r < kMR; ++r) ar[r] = a + (r < mr ? r : 0) * rsa;
  const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5], *a6 = ar[6], *a7 = ar[7];
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
         c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  for (int64_t p = 0; p < kc; ++p) {
    __m512 b0 = _mm512_maskz_loadu_ps(m0, bp + p * ldp), b1 = _mm512_maskz_loadu_ps(m1, bp + p * ldp + 16);
    int64_t o = p * csa;
#define TT_ROW(r)                                   \
  {                                                 \
    __m512 av = _mm512_set1_ps(a##r[o]);            \
    c##r##0 = _mm512_fmadd_ps(av, b0, c##r##0);     \
    c##r##1 = _mm512_fmadd_ps(av, b1, c##r##1);     \
  }
    TT_ROW(0) TT_ROW(1) TT_ROW(2) TT_ROW(3) TT_ROW(4) TT_ROW(5) TT_ROW(6) TT_ROW(7)
#undef TT_ROW
  }
  __m512 acc[2 * kMR] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71};
  __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(first ? beta : 1.f);
  bool read = !first || beta != 0.f;
  for (int64_t r = 0; r < mr; ++r) {
    float* cr = c + r * ldc;
    __m512 v0 = _mm512_mul_ps(va, acc[2 * r]), v1 = _mm512_mul_ps(va, acc[2 * r + 1]);
    if (read) {
      v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), v0);
      v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), v1);
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

// One product on the calling thread. k is cut into equal blocks of <= kKC (a function of k
// only); for each, B's block is packed once and every (8 x 32) tile of C updated.
void avx512_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  int64_t rsa = ta ? 1 : lda, csa = ta ? lda : 1;
  int64_t nkb = (k + kKC - 1) / kKC, kc_max = (k + nkb - 1) / nkb;
  int64_t npan = (n + kNR - 1) / kNR;
  bool direct = !tb && n <= kDirectMaxN;  // B's rows are contiguous (and few panels): read in place
  thread_local std::vector<float> pack;
  if (!direct) pack.resize(static_cast<size_t>(kc_max * npan * kNR));
  for (int64_t k0 = 0; k0 < k; k0 += kc_max) {
    int64_t kc = std::min(kc_max, k - k0);
    if (!direct) pack_b(b, ldb, tb, k0, kc, 0, n, pack.data());
    for (int64_t q = 0; q < npan; ++q) {  // a B panel stays in L1 while the rows of A stream by
      const float* bp = direct ? b + k0 * ldb + q * kNR : pack.data() + q * kc * kNR;
      int64_t ldp = direct ? ldb : kNR, w = std::min<int64_t>(kNR, n - q * kNR);
      for (int64_t i = 0; i < m; i += kMR) {
        int64_t mr = std::min<int64_t>(kMR, m - i);
        micro(mr, kc, a + i * rsa + k0 * csa, rsa, csa, bp, ldp, c + i * ldc + q * kNR, ldc, w, alpha, beta,
                   k0 == 0);
      }
    }
  }
}

// X[r, c] of an operand stored as described in GemmArgs.
template <class T>
inline T at(const T* p, bool trans, int64_t ld, int64_t r, int64_t c) {
  return trans ? p[c * ld + r] : p[r * ld + c];
}

// C: (m, n) rows ldc apart; C = beta * C (beta == 0 writes zeros without reading C).
template <class T>
void scale_c(T* c, int64_t m, int64_t n, int64_t ldc, double beta) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T& v = c[i * ldc + j];
      if (beta == 0) v = T(0);
      else v = static_cast<T>(static_cast<double>(static_cast<opmath_t<T>>(v)) * beta);
    }
}

// One BLAS call on the calling thread: float -> sgemm, double -> dgemm.
template <class T>
void blas_call(bool ta_, bool tb_, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  auto ta = ta_ ? CblasTrans : CblasNoTrans, tb = tb_ ? CblasTrans : CblasNoTrans;
  auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  if constexpr (std::is_same_v<T, float>) {
    if (has_avx512())
      return avx512_sgemm(ta_, tb_, m, n, k, static_cast<float>(alpha), a, lda, b, ldb, static_cast<float>(beta), c,
                          ldc);
    scipy_cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, static_cast<float>(alpha), a, static_cast<blasint>(lda), b,
                      static_cast<blasint>(ldb), static_cast<float>(beta), c, static_cast<blasint>(ldc));
  } else
    scipy_cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, static_cast<blasint>(lda), b,
                      static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// One product, threaded through OUR pool (parallel_for), never OpenBLAS's: each thread runs a
// single-threaded BLAS call on a block of C's rows or columns. Two busy-waiting pools (OpenMP
// and OpenBLAS pthreads) on the same cores starve each other, badly on a loaded machine.
template <class T>
void blas_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  int64_t work = m * n * k;
  int64_t nt = get_num_threads();
  if (work <= kSmallGemm || nt <= 1) {
    return blas_call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  bool split_cols = n >= m;
  int64_t extent = split_cols ? n : m;
  int64_t block = std::max<int64_t>(32, ((extent + nt - 1) / nt + 31) / 32 * 32);  // whole 32-col panels
  int64_t nblocks = (extent + block - 1) / block;
  parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t bi = b0; bi < b1; ++bi) {
      int64_t s = bi * block, e = std::min(extent, s + block);
      if (split_cols)  // C[:, s:e] = A @ B[:, s:e]
        blas_call(ta, tb, m, e - s, k, alpha, a, lda, b + (tb ? s * ldb : s), ldb, beta, c + s, ldc);
      else  // C[s:e, :] = A[s:e, :] @ B
        blas_call(ta, tb, e - s, n, k, alpha, a + (ta ? s : s * lda), lda, b, ldb, beta, c + s * ldc, ldc);
    }
  });
}

// Half/bfloat16: A_i -> float (m, k), B_i -> float (k, n), C_i -> float (m, n), sgemm, round.
template <class T>
void half_one(const GemmArgs& g, const T* a, const T* b, T* c) {
  std::vector<float> fa(static_cast<size_t>(g.m * g.k)), fb(static_cast<size_t>(g.k * g.n)),
      fc(static_cast<size_t>(g.m * g.n), 0.f);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t p = 0; p < g.k; ++p) fa[i * g.k + p] = static_cast<float>(at(a, g.trans_a, g.lda, i, p));
  for (int64_t p = 0; p < g.k; ++p)
    for (int64_t j = 0; j < g.n; ++j) fb[p * g.n + j] = static_cast<float>(at(b, g.trans_b, g.ldb, p, j));
  if (g.beta != 0)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) fc[i * g.n + j] = static_cast<float>(c[i * g.ldc + j]);
  blas_one<float>(false, false, g.m, g.n, g.k, g.alpha, fa.data(), g.k, fb.data(), g.n, g.beta, fc.data(), g.n);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) c[i * g.ldc + j] = T(fc[i * g.n + j]);
}

// Integers: i-p-j loop accumulating in int64 (wraps like PyTorch on overflow).
template <class T>
void int_one(const GemmArgs& g, const T* a, const T* b, T* c) {
  std::vector<int64_t> acc(static_cast<size_t>(g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t p = 0; p < g.k; ++p) {
      int64_t av = static_cast<int64_t>(at(a, g.trans_a, g.lda, i, p));
      if (av == 0) continue;
      for (int64_t j = 0; j < g.n; ++j) acc[j] += av * static_cast<int64_t>(at(b, g.trans_b, g.ldb, p, j));
    }
    T* crow = c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) {
      if (g.alpha == 1 && g.beta == 0) crow[j] = static_cast<T>(acc[j]);
      else crow[j] = static_cast<T>(g.alpha * static_cast<double>(acc[j]) +
                                    (g.beta == 0 ? 0.0 : g.beta * static_cast<double>(crow[j])));
    }
  }
}

template <class T>
void gemm_typed(const GemmArgs& g) {
  const T* a = g.a.data<T>();
  const T* b = g.b.data<T>();
  T* c = g.c.data<T>();
  auto one = [&](int64_t i) {
    const T* ai = a + i * g.stride_a;
    const T* bi = b + i * g.stride_b;
    T* ci = c + i * g.stride_c;
    if (g.k == 0 || g.alpha == 0) return scale_c(ci, g.m, g.n, g.ldc, g.beta);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      blas_one<T>(g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, ai, g.lda, bi, g.ldb, g.beta, ci, g.ldc);
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) half_one<T>(g, ai, bi, ci);
    else int_one<T>(g, ai, bi, ci);
  };
  int64_t work = g.m * g.n * std::max<int64_t>(g.k, 1);
  if (g.batch > 1 && (work <= kSmallGemm || g.batch >= 4 * get_num_threads())) {
    // Many or small products: one thread each (inside, blas_one runs inline, unthreaded).
    int64_t grain = std::max<int64_t>(1, kSmallGemm / std::max<int64_t>(work, 1) / 4);
    parallel_for(0, g.batch, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < g.batch; ++i) one(i);
  }
}

// OpenBLAS (a pthreads build) must stay single-threaded: called from OpenMP workers with its
// own pool it warns "Detect OpenMP Loop and this application may hang", and its spinning pool
// next to ours made conv2d 20-70x slower on 2 cores. tt::set_num_threads(n) still governs GEMM
// threading: blas_one splits products over our n OpenMP threads.
void single_threaded_blas() {
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
}

void cpu_gemm(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  single_threaded_blas();
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc})
    TT_CHECK(v <= INT_MAX, "gemm: dimension ", v, " exceeds the 32-bit BLAS limit");
  TT_DISPATCH_NUMERIC(g.c.dtype(), "gemm", [&] { gemm_typed<scalar_t>(g); });
}

}  // namespace

TT_REGISTER_KERNEL(gemm, CPU, cpu_gemm)

}  // namespace tt::cpu
