// CPU GEMM: OpenBLAS for float32/float64, float32 OpenBLAS for the 16-bit floats (convert,
// sgemm, round once), a plain loop for integers. On AVX-512 CPUs float32 uses our own packed
// kernel instead (sgemm_avx512.h).
#include <cblas.h>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <type_traits>

#include "sgemm_avx512.h"
#include "tinytorch/kernels/linalg.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// Below ~64^3 multiply-adds a product isn't worth splitting over threads.
constexpr int64_t kSmallGemm = 64 * 64 * 64;

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
    if (sgemm_avx512_enabled())
      return sgemm_avx512(ta_, tb_, m, n, k, static_cast<float>(alpha), a, lda, b, ldb, static_cast<float>(beta), c,
                          ldc);
    scipy_cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, static_cast<float>(alpha), a, static_cast<blasint>(lda), b,
                      static_cast<blasint>(ldb), static_cast<float>(beta), c, static_cast<blasint>(ldc));
  } else
    scipy_cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, static_cast<blasint>(lda), b,
                      static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// One product, threaded through OUR pool (parallel_for), never OpenBLAS's: each thread runs a
// single-threaded BLAS call on a block of C's rows or columns. Two busy-waiting pools (ours
// and OpenBLAS's pthreads) on the same cores starve each other, badly on a loaded machine.
//
// OpenBLAS's result for an entry of C can depend on the block's size (seen on Zen 5: C[:160] of one
// call differs in the last bit from rows 0..159 of the whole product), so where it computes, the
// blocks depend on the shape alone, never on the thread count: 1 or N threads give the same bits.
// Our AVX-512 kernel sums each entry in one order whatever the block, so it keeps one block a thread.
constexpr int64_t kShapeBlocks = 8;
template <class T>
void blas_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  int64_t work = m * n * k;
  int64_t nt = get_num_threads();
  bool own_kernel = std::is_same_v<T, float> && sgemm_avx512_enabled();
  if (work <= kSmallGemm || (nt <= 1 && own_kernel)) {
    return blas_call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  bool split_cols = n >= m;
  int64_t extent = split_cols ? n : m;
  int64_t parts = own_kernel ? nt : kShapeBlocks;
  int64_t block = std::max<int64_t>(32, ((extent + parts - 1) / parts + 31) / 32 * 32);  // whole 32-col panels
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

// OpenBLAS (a pthreads build) must stay single-threaded: called from our workers with its
// own pool it warns (under OpenMP) "Detect OpenMP Loop and this application may hang", and its spinning pool
// next to ours made conv2d 20-70x slower on 2 cores. tt::set_num_threads(n) still governs GEMM
// threading: blas_one splits products over our n threads.
void single_threaded_blas() {
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
}

void cpu_gemm(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  if (g.bias.defined()) return cpu_gemm(bias_into_c(g));
  single_threaded_blas();
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc})
    TT_CHECK(v <= INT_MAX, "gemm: dimension ", v, " exceeds the 32-bit BLAS limit");
  TT_DISPATCH_NUMERIC(g.c.dtype(), "gemm", [&] { gemm_typed<scalar_t>(g); });
}

}  // namespace

TT_REGISTER_KERNEL(gemm, CPU, cpu_gemm)

}  // namespace tt::cpu
