// CPU factorizations: LAPACK from scipy-openblas32 (Fortran symbols prefixed scipy_, 32-bit
// integers), one call per matrix, the batch split over tinytorch's threads. OpenBLAS itself stays
// single-threaded (see cpu/linalg.cpp). Layouts are the kernel table's: column-major per matrix.
#include <cblas.h>
#include <algorithm>
#include <climits>
#include <vector>
#include "tinytorch/kernels/decomposition.h"
#include "tinytorch/parallel.h"

// Fortran LAPACK/BLAS; trailing size_t are the hidden lengths of the character arguments.
extern "C" {
#define TT_LAPACK_DECLS(T, p)                                                                        \
  void scipy_##p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);  \
  void scipy_##p##getrs_(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, \
                         const int* ipiv, T* b, const int* ldb, int* info, size_t);                 \
  void scipy_##p##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);  \
  void scipy_##p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work,         \
                         const int* lwork, int* info);                                              \
  void scipy_##p##orgqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, \
                         T* work, const int* lwork, int* info);                                     \
  void scipy_##p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, \
                         T* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t, \
                         size_t);                                                                   \
  void scipy_##p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s,  \
                         T* u, const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork,   \
                         int* iwork, int* info, size_t);                                            \
  void scipy_##p##trsm_(const char* side, const char* uplo, const char* transa, const char* diag,  \
                        const int* m, const int* n, const T* alpha, const T* a, const int* lda, T* b, \
                        const int* ldb, size_t, size_t, size_t, size_t);
TT_LAPACK_DECLS(float, s)
TT_LAPACK_DECLS(double, d)
#undef TT_LAPACK_DECLS
}

namespace tt::cpu {
namespace {

// Typed overloads over the s/d routines (by value: LAPACK's pointers to scalars are ours to make).
#define TT_LAPACK_OVERLOADS(T, p)                                                                   \
  void getrf(int n, T* a, int* ipiv, int* info) { scipy_##p##getrf_(&n, &n, a, &n, ipiv, info); } \
  void getrs(char tr, int n, int k, const T* a, const int* ipiv, T* b, int* info) {                \
    scipy_##p##getrs_(&tr, &n, &k, a, &n, ipiv, b, &n, info, 1);                                   \
  }                                                                                               \
  void potrf(int n, T* a, int* info) { scipy_##p##potrf_("L", &n, a, &n, info, 1); }              \
  void geqrf(int m, int n, T* a, T* tau, T* work, int lwork, int* info) {                         \
    scipy_##p##geqrf_(&m, &n, a, &m, tau, work, &lwork, info);                                     \
  }                                                                                               \
  void orgqr(int m, int n, int k, T* a, const T* tau, T* work, int lwork, int* info) {            \
    scipy_##p##orgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);                                 \
  }                                                                                               \
  void syevd(char jobz, char uplo, int n, T* a, T* w, T* work, int lwork, int* iwork, int liwork,  \
             int* info) {                                                                         \
    scipy_##p##syevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);       \
  }                                                                                               \
  void gesdd(char jobz, int m, int n, T* a, T* s, T* u, int ldu, T* vt, int ldvt, T* work,        \
             int lwork, int* iwork, int* info) {                                                  \
    scipy_##p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);  \
  }                                                                                               \
  void trsm(char uplo, char trans, char diag, int n, int k, const T* a, T* b) {                   \
    T one = 1;                                                                                    \
    scipy_##p##trsm_("L", &uplo, &trans, &diag, &n, &k, &one, a, &n, b, &n, 1, 1, 1, 1);           \
  }
TT_LAPACK_OVERLOADS(float, s)
TT_LAPACK_OVERLOADS(double, d)
#undef TT_LAPACK_OVERLOADS

int as_int(int64_t v, const char* op) {
  TT_CHECK(v <= INT_MAX, op, ": dimension ", v, " exceeds LAPACK's 32-bit limit");
  return static_cast<int>(v);
}

// Runs one(i) for every matrix i < batch, over the threads when the batch is worth splitting
// (flops: the work of one matrix).
template <class F>
void batch_for(int64_t batch, int64_t flops, const F& one) {
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
  int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(flops, 1));
  parallel_for(0, batch, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) one(i);
  });
}

// a: (B, n, n); pivots: (B, n); info: (B)
void cpu_lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  int64_t B = a.size(0), n = a.size(1);
  int ni = as_int(n, "lu_factor");
  dispatch_lapack_dtype(a.dtype(), "lu_factor", [&](auto tag) {
    using T = decltype(tag);
    T* p = a.data<T>();
    batch_for(B, n * n * n, [&](int64_t i) { getrf(ni, p + i * n * n, pivots.data<int>() + i * n, info.data<int>() + i); });
  });
}

// lu: (B, n, n); pivots: (B, n); b: (B, k, n)
void cpu_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool trans) {
  int64_t B = b.size(0), k = b.size(1), n = b.size(2);
  int ni = as_int(n, "lu_solve"), ki = as_int(k, "lu_solve");
  dispatch_lapack_dtype(b.dtype(), "lu_solve", [&](auto tag) {
    using T = decltype(tag);
    batch_for(B, n * n * k, [&](int64_t i) {
      int info = 0;
      getrs(trans ? 'T' : 'N', ni, ki, lu.data<T>() + i * n * n, pivots.data<int>() + i * n, b.data<T>() + i * n * k, &info);
    });
  });
}

// a: (B, n, n); info: (B)
void cpu_cholesky(const Tensor& a, const Tensor& info) {
  int64_t B = a.size(0), n = a.size(1);
  int ni = as_int(n, "cholesky");
  dispatch_lapack_dtype(a.dtype(), "cholesky", [&](auto tag) {
    using T = decltype(tag);
    batch_for(B, n * n * n / 3, [&](int64_t i) { potrf(ni, a.data<T>() + i * n * n, info.data<int>() + i); });
  });
}

// a: (B, n, m); tau: (B, min(m, n))
void cpu_geqrf(const Tensor& a, const Tensor& tau) {
  int64_t B = a.size(0), n = a.size(1), m = a.size(2), k = std::min(m, n);
  int mi = as_int(m, "geqrf"), ni = as_int(n, "geqrf");
  dispatch_lapack_dtype(a.dtype(), "geqrf", [&](auto tag) {
    using T = decltype(tag);
    T query = 0;
    int info = 0;
    geqrf(mi, ni, a.data<T>(), tau.data<T>(), &query, -1, &info);
    int lwork = std::max(1, static_cast<int>(query));
    batch_for(B, m * n * k, [&](int64_t i) {
      std::vector<T> work(lwork);
      int inf = 0;
      geqrf(mi, ni, a.data<T>() + i * m * n, tau.data<T>() + i * k, work.data(), lwork, &inf);
    });
  });
}

// q: (B, c, m); tau: (B, k)
void cpu_orgqr(const Tensor& q, const Tensor& tau) {
  int64_t B = q.size(0), c = q.size(1), m = q.size(2), k = tau.size(1);
  int mi = as_int(m, "orgqr"), ci = as_int(c, "orgqr"), ki = as_int(k, "orgqr");
  dispatch_lapack_dtype(q.dtype(), "orgqr", [&](auto tag) {
    using T = decltype(tag);
    T query = 0;
    int info = 0;
    orgqr(mi, ci, ki, q.data<T>(), tau.data<T>(), &query, -1, &info);
    int lwork = std::max(1, static_cast<int>(query));
    batch_for(B, m * c * k, [&](int64_t i) {
      std::vector<T> work(lwork);
      int inf = 0;
      orgqr(mi, ci, ki, q.data<T>() + i * m * c, tau.data<T>() + i * k, work.data(), lwork, &inf);
    });
  });
}

// a: (B, n, n); w: (B, n); info: (B)
void cpu_eigh(const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors) {
  int64_t B = a.size(0), n = a.size(1);
  int ni = as_int(n, "eigh");
  char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  dispatch_lapack_dtype(a.dtype(), "eigh", [&](auto tag) {
    using T = decltype(tag);
    T query = 0;
    int iquery = 0, inf = 0;
    syevd(jobz, uplo, ni, a.data<T>(), w.data<T>(), &query, -1, &iquery, -1, &inf);
    int lwork = std::max(1, static_cast<int>(query)), liwork = std::max(1, iquery);
    batch_for(B, 4 * n * n * n, [&](int64_t i) {
      std::vector<T> work(lwork);
      std::vector<int> iwork(liwork);
      syevd(jobz, uplo, ni, a.data<T>() + i * n * n, w.data<T>() + i * n, work.data(), lwork, iwork.data(),
            liwork, info.data<int>() + i);
    });
  });
}

// a: (B, n, m); u: (B, uc, m); s: (B, k); v: (B, vc, n); info: (B)
void cpu_svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& v, const Tensor& info, bool full,
             bool vectors) {
  int64_t B = a.size(0), n = a.size(1), m = a.size(2), k = std::min(m, n);
  int mi = as_int(m, "svd"), ni = as_int(n, "svd");
  char jobz = !vectors ? 'N' : full ? 'A' : 'S';
  int64_t uc = !vectors ? 0 : full ? m : k, vr = !vectors ? 0 : full ? n : k;  // U (m, uc), V^T (vr, n)
  int ldu = std::max<int>(1, mi), ldvt = std::max<int>(1, static_cast<int>(vr));
  dispatch_lapack_dtype(a.dtype(), "svd", [&](auto tag) {
    using T = decltype(tag);
    T query = 0;
    int inf = 0;
    std::vector<int> iwork(8 * std::max<int64_t>(k, 1));
    T dummy_u = 0, dummy_vt = 0;
    gesdd(jobz, mi, ni, a.data<T>(), s.data<T>(), &dummy_u, ldu, &dummy_vt, ldvt, &query, -1, iwork.data(), &inf);
    int lwork = std::max(1, static_cast<int>(query));
    batch_for(B, 8 * m * n * k, [&](int64_t i) {
      std::vector<T> work(lwork), vt(std::max<int64_t>(1, vr * n));
      std::vector<int> iw(8 * std::max<int64_t>(k, 1));
      T* up = vectors ? u.data<T>() + i * m * uc : &dummy_u;
      gesdd(jobz, mi, ni, a.data<T>() + i * m * n, s.data<T>() + i * k, up, ldu, vt.data(), ldvt, work.data(), lwork,
            iw.data(), info.data<int>() + i);
      if (!vectors) return;
      // V^T (vr, n) column-major -> V (n, vr) column-major
      T* vp = v.data<T>() + i * n * vr;
      for (int64_t r = 0; r < vr; ++r)
        for (int64_t c = 0; c < n; ++c) vp[r * n + c] = vt[c * vr + r];
    });
  });
}

// a: (B, n, n); b: (B, k, n)
void cpu_triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool trans, bool unitriangular) {
  int64_t B = b.size(0), k = b.size(1), n = b.size(2);
  int ni = as_int(n, "solve_triangular"), ki = as_int(k, "solve_triangular");
  dispatch_lapack_dtype(b.dtype(), "solve_triangular", [&](auto tag) {
    using T = decltype(tag);
    batch_for(B, n * n * k, [&](int64_t i) {
      trsm(upper ? 'U' : 'L', trans ? 'T' : 'N', unitriangular ? 'U' : 'N', ni, ki, a.data<T>() + i * n * n,
           b.data<T>() + i * n * k);
    });
  });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, lu_factor, lu_solve, cholesky, geqrf, orgqr, eigh, svd, triangular_solve)

}  // namespace tt::cpu
