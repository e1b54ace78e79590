// CUDA factorizations: cuSOLVER (getrf/getrs, potrf, geqrf/orgqr, syevd, gesvdj) and cuBLAS trsm,
// one call per matrix on the current stream; layouts are the kernel table's (column-major per
// matrix, kernels/decomposition.h). Info codes are written to device memory and checked by the
// caller (one synchronizing read, as PyTorch's checks).
//
// cuSOLVER is loaded at first use with dlopen, so libtinytorch_cuda has no link-time dependency
// on it (nor on the cuSPARSE and nvJitLink it needs): where the library is missing, the linalg
// ops raise a RuntimeError naming it and everything else works. Built only where cuSOLVER's
// headers were found (TINYTORCH_WITH_CUSOLVER); otherwise the ops raise "built without cuSOLVER".
#include "tinytorch/kernels/decomposition.h"

#ifdef TINYTORCH_WITH_CUSOLVER
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <dlfcn.h>
#include <algorithm>
#include <array>
#include <mutex>
#include <type_traits>
#include "tinytorch/cuda/common.h"

namespace tt::cuda {
namespace {

#define TT_CUSOLVER_FUNCTIONS(X)                                                                   \
  X(cusolverDnCreate) X(cusolverDnSetStream) X(cusolverDnCreateGesvdjInfo) X(cusolverDnDestroyGesvdjInfo) \
  X(cusolverDnSgetrf_bufferSize) X(cusolverDnDgetrf_bufferSize) X(cusolverDnSgetrf) X(cusolverDnDgetrf) \
  X(cusolverDnSgetrs) X(cusolverDnDgetrs) X(cusolverDnSpotrf_bufferSize) X(cusolverDnDpotrf_bufferSize) \
  X(cusolverDnSpotrf) X(cusolverDnDpotrf) X(cusolverDnSgeqrf_bufferSize) X(cusolverDnDgeqrf_bufferSize) \
  X(cusolverDnSgeqrf) X(cusolverDnDgeqrf) X(cusolverDnSorgqr_bufferSize) X(cusolverDnDorgqr_bufferSize) \
  X(cusolverDnSorgqr) X(cusolverDnDorgqr) X(cusolverDnSsyevd_bufferSize) X(cusolverDnDsyevd_bufferSize) \
  X(cusolverDnSsyevd) X(cusolverDnDsyevd) X(cusolverDnSgesvdj_bufferSize) X(cusolverDnDgesvdj_bufferSize) \
  X(cusolverDnSgesvdj) X(cusolverDnDgesvdj)

// The cuSOLVER entry points, resolved once from the library.
struct Cusolver {
#define TT_FN_PTR(name) decltype(&::name) name = nullptr;
  TT_CUSOLVER_FUNCTIONS(TT_FN_PTR)
#undef TT_FN_PTR
};

const Cusolver& cusolver() {
  static const Cusolver api = [] {
    // the soname through libtinytorch_cuda's runpath (the installed layout), then where the build found it
    const char* candidates[] = {TINYTORCH_CUSOLVER_SONAME, TINYTORCH_CUSOLVER_PATH};
    void* lib = nullptr;
    for (const char* c : candidates)
      if (!lib) lib = dlopen(c, RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      throw std::runtime_error(str_cat("linalg: cannot load cuSOLVER (", TINYTORCH_CUSOLVER_SONAME, "): ", dlerror(),
                                       ". Install it with: pip install nvidia-cusolver"));
    Cusolver a;
#define TT_FN_LOAD(name)                                                                    \
  a.name = reinterpret_cast<decltype(a.name)>(dlsym(lib, #name));                         \
  if (!a.name) throw std::runtime_error("linalg: cuSOLVER lacks " #name);
    TT_CUSOLVER_FUNCTIONS(TT_FN_LOAD)
#undef TT_FN_LOAD
    return a;
  }();
  return api;
}

#define TT_CUSOLVER_CHECK(EXPR)                                                                    \
  do {                                                                                             \
    cusolverStatus_t tt_st_ = (EXPR);                                                              \
    if (tt_st_ != CUSOLVER_STATUS_SUCCESS)                                                         \
      throw std::runtime_error(str_cat("cuSOLVER error ", static_cast<int>(tt_st_), " in ", #EXPR, " at ", \
                                       __FILE__, ":", __LINE__));                                  \
  } while (0)
#define TT_TRSM_CHECK(EXPR)                                                                        \
  do {                                                                                             \
    cublasStatus_t tt_st_ = (EXPR);                                                                \
    if (tt_st_ != CUBLAS_STATUS_SUCCESS)                                                           \
      throw std::runtime_error(str_cat("cuBLAS error ", static_cast<int>(tt_st_), " in ", #EXPR)); \
  } while (0)

constexpr int kMaxDevices = 64;

// One cuSOLVER and one cuBLAS handle per device, created on first use and never destroyed (as the
// GEMM's, linalg.cu); the lease locks them and points them at the current stream.
struct DeviceSolver {
  std::mutex mu;
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
};

class SolverLease {
 public:
  explicit SolverLease(Device dev) : guard_(dev), s_(slot(dev.index)), lock_(s_.mu) {
    const Cusolver& api = cusolver();
    if (!s_.solver) TT_CUSOLVER_CHECK(api.cusolverDnCreate(&s_.solver));
    if (!s_.blas) TT_TRSM_CHECK(cublasCreate(&s_.blas));
    cudaStream_t stream = current_stream(dev.index);
    TT_CUSOLVER_CHECK(api.cusolverDnSetStream(s_.solver, stream));
    TT_TRSM_CHECK(cublasSetStream(s_.blas, stream));
  }
  cusolverDnHandle_t solver() const { return s_.solver; }
  cublasHandle_t blas() const { return s_.blas; }

 private:
  static DeviceSolver& slot(int device) {
    static std::array<DeviceSolver, kMaxDevices> all;
    TT_CHECK(device >= 0 && device < kMaxDevices, "linalg: device index ", device, " out of range");
    return all[static_cast<size_t>(device)];
  }
  DeviceGuard guard_;
  DeviceSolver& s_;
  std::lock_guard<std::mutex> lock_;
};

int as_int(int64_t v, const char* op) {
  TT_CHECK(v <= INT32_MAX, op, ": dimension ", v, " exceeds cuSOLVER's 32-bit limit");
  return static_cast<int>(v);
}

// A device buffer of n elements of T from the caching allocator (freed in stream order).
template <class T>
Tensor scratch(int64_t n, Device dev) {
  return Tensor::empty({std::max<int64_t>(1, n) * static_cast<int64_t>(sizeof(T))}, DType::UInt8, dev);
}

// float -> the S routine, double -> the D routine
template <class T, class F, class D>
auto pick(F f, D d) {
  if constexpr (std::is_same_v<T, float>) return f;
  else return d;
}
#define TT_PICK(T, fn) pick<T>(api.cusolverDnS##fn, api.cusolverDnD##fn)

// a: (B, n, n); pivots: (B, n); info: (B)
void cuda_lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  int64_t B = a.size(0), n = a.size(1);
  int ni = as_int(n, "lu_factor");
  dispatch_lapack_dtype(a.dtype(), "lu_factor", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(a.device());
    T* p = a.data<T>();
    int lwork = 0;
    TT_CUSOLVER_CHECK(TT_PICK(T, getrf_bufferSize)(h.solver(), ni, ni, p, ni, &lwork));
    Tensor work = scratch<T>(lwork, a.device());
    for (int64_t i = 0; i < B; ++i)
      TT_CUSOLVER_CHECK(TT_PICK(T, getrf)(h.solver(), ni, ni, p + i * n * n, ni, work.data<T>(),
                                          pivots.data<int>() + i * n, info.data<int>() + i));
  });
}

// lu: (B, n, n); pivots: (B, n); b: (B, k, n)
void cuda_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool trans) {
  int64_t B = b.size(0), k = b.size(1), n = b.size(2);
  int ni = as_int(n, "lu_solve"), ki = as_int(k, "lu_solve");
  dispatch_lapack_dtype(b.dtype(), "lu_solve", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(b.device());
    Tensor dinfo = scratch<int>(1, b.device());
    for (int64_t i = 0; i < B; ++i)
      TT_CUSOLVER_CHECK(TT_PICK(T, getrs)(h.solver(), trans ? CUBLAS_OP_T : CUBLAS_OP_N, ni, ki,
                                          lu.data<T>() + i * n * n, ni, pivots.data<int>() + i * n,
                                          b.data<T>() + i * n * k, ni, dinfo.data<int>()));
  });
}

// a: (B, n, n); info: (B)
void cuda_cholesky(const Tensor& a, const Tensor& info) {
  int64_t B = a.size(0), n = a.size(1);
  int ni = as_int(n, "cholesky");
  dispatch_lapack_dtype(a.dtype(), "cholesky", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(a.device());
    int lwork = 0;
    TT_CUSOLVER_CHECK(TT_PICK(T, potrf_bufferSize)(h.solver(), CUBLAS_FILL_MODE_LOWER, ni, a.data<T>(), ni, &lwork));
    Tensor work = scratch<T>(lwork, a.device());
    for (int64_t i = 0; i < B; ++i)
      TT_CUSOLVER_CHECK(TT_PICK(T, potrf)(h.solver(), CUBLAS_FILL_MODE_LOWER, ni, a.data<T>() + i * n * n, ni,
                                          work.data<T>(), lwork, info.data<int>() + i));
  });
}

// a: (B, n, m); tau: (B, min(m, n))
void cuda_geqrf(const Tensor& a, const Tensor& tau) {
  int64_t B = a.size(0), n = a.size(1), m = a.size(2), k = std::min(m, n);
  int mi = as_int(m, "geqrf"), ni = as_int(n, "geqrf");
  dispatch_lapack_dtype(a.dtype(), "geqrf", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(a.device());
    int lwork = 0;
    TT_CUSOLVER_CHECK(TT_PICK(T, geqrf_bufferSize)(h.solver(), mi, ni, a.data<T>(), mi, &lwork));
    Tensor work = scratch<T>(lwork, a.device()), dinfo = scratch<int>(1, a.device());
    for (int64_t i = 0; i < B; ++i)
      TT_CUSOLVER_CHECK(TT_PICK(T, geqrf)(h.solver(), mi, ni, a.data<T>() + i * m * n, mi, tau.data<T>() + i * k,
                                          work.data<T>(), lwork, dinfo.data<int>()));
  });
}

// q: (B, c, m); tau: (B, k)
void cuda_orgqr(const Tensor& q, const Tensor& tau) {
  int64_t B = q.size(0), c = q.size(1), m = q.size(2), k = tau.size(1);
  int mi = as_int(m, "orgqr"), ci = as_int(c, "orgqr"), ki = as_int(k, "orgqr");
  dispatch_lapack_dtype(q.dtype(), "orgqr", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(q.device());
    int lwork = 0;
    TT_CUSOLVER_CHECK(TT_PICK(T, orgqr_bufferSize)(h.solver(), mi, ci, ki, q.data<T>(), mi, tau.data<T>(), &lwork));
    Tensor work = scratch<T>(lwork, q.device()), dinfo = scratch<int>(1, q.device());
    for (int64_t i = 0; i < B; ++i)
      TT_CUSOLVER_CHECK(TT_PICK(T, orgqr)(h.solver(), mi, ci, ki, q.data<T>() + i * m * c, mi, tau.data<T>() + i * k,
                                          work.data<T>(), lwork, dinfo.data<int>()));
  });
}

// a: (B, n, n); w: (B, n); info: (B)
void cuda_eigh(const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors) {
  int64_t B = a.size(0), n = a.size(1);
  int ni = as_int(n, "eigh");
  auto jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  auto uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  dispatch_lapack_dtype(a.dtype(), "eigh", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(a.device());
    int lwork = 0;
    TT_CUSOLVER_CHECK(TT_PICK(T, syevd_bufferSize)(h.solver(), jobz, uplo, ni, a.data<T>(), ni, w.data<T>(), &lwork));
    Tensor work = scratch<T>(lwork, a.device());
    for (int64_t i = 0; i < B; ++i)
      TT_CUSOLVER_CHECK(TT_PICK(T, syevd)(h.solver(), jobz, uplo, ni, a.data<T>() + i * n * n, ni, w.data<T>() + i * n,
                                          work.data<T>(), lwork, info.data<int>() + i));
  });
}

// a: (B, n, m); u: (B, uc, m); s: (B, k); v: (B, vc, n); info: (B). gesvdj (Jacobi) takes any m, n
// and returns V itself, as the kernel table wants.
void cuda_svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& v, const Tensor& info, bool full,
              bool vectors) {
  int64_t B = a.size(0), n = a.size(1), m = a.size(2), k = std::min(m, n);
  int mi = as_int(m, "svd"), ni = as_int(n, "svd");
  int econ = full ? 0 : 1;
  int64_t uc = full ? m : k, vc = full ? n : k;
  auto jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  dispatch_lapack_dtype(a.dtype(), "svd", [&](auto tag) {
    using T = decltype(tag);
    const Cusolver& api = cusolver();
    SolverLease h(a.device());
    gesvdjInfo_t params = nullptr;
    TT_CUSOLVER_CHECK(api.cusolverDnCreateGesvdjInfo(&params));
    // without vectors U and V are not referenced, but are given valid buffers all the same
    Tensor ubuf = vectors ? u : scratch<T>(m * uc, a.device()), vbuf = vectors ? v : scratch<T>(n * vc, a.device());
    int64_t ustride = vectors ? m * uc : 0, vstride = vectors ? n * vc : 0;
    try {
      int lwork = 0;
      TT_CUSOLVER_CHECK(TT_PICK(T, gesvdj_bufferSize)(h.solver(), jobz, econ, mi, ni, a.data<T>(), mi, s.data<T>(),
                                                      ubuf.data<T>(), mi, vbuf.data<T>(), ni, &lwork, params));
      Tensor work = scratch<T>(lwork, a.device());
      for (int64_t i = 0; i < B; ++i)
        TT_CUSOLVER_CHECK(TT_PICK(T, gesvdj)(h.solver(), jobz, econ, mi, ni, a.data<T>() + i * m * n, mi,
                                             s.data<T>() + i * k, ubuf.data<T>() + i * ustride, mi,
                                             vbuf.data<T>() + i * vstride, ni, work.data<T>(), lwork,
                                             info.data<int>() + i, params));
    } catch (...) {
      api.cusolverDnDestroyGesvdjInfo(params);
      throw;
    }
    api.cusolverDnDestroyGesvdjInfo(params);
  });
}

// a: (B, n, n); b: (B, k, n)
void cuda_triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool trans, bool unitriangular) {
  int64_t B = b.size(0), k = b.size(1), n = b.size(2);
  int ni = as_int(n, "solve_triangular"), ki = as_int(k, "solve_triangular");
  auto uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  auto op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto diag = unitriangular ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  dispatch_lapack_dtype(b.dtype(), "solve_triangular", [&](auto tag) {
    using T = decltype(tag);
    SolverLease h(b.device());
    const T one = 1;
    for (int64_t i = 0; i < B; ++i) {
      const T* ap = a.data<T>() + i * n * n;
      T* bp = b.data<T>() + i * n * k;
      if constexpr (std::is_same_v<T, float>)
        TT_TRSM_CHECK(cublasStrsm(h.blas(), CUBLAS_SIDE_LEFT, uplo, op, diag, ni, ki, &one, ap, ni, bp, ni));
      else
        TT_TRSM_CHECK(cublasDtrsm(h.blas(), CUBLAS_SIDE_LEFT, uplo, op, diag, ni, ki, &one, ap, ni, bp, ni));
    }
  });
}

}  // namespace
}  // namespace tt::cuda

#else  // no cuSOLVER headers at build time: the ops say so

namespace tt::cuda {
namespace {
[[noreturn]] void no_cusolver() {
  throw std::runtime_error("linalg: tinytorch was built without cuSOLVER, so its factorizations and solvers have "
                           "no CUDA kernels (pip install nvidia-cusolver and rebuild)");
}
void cuda_lu_factor(const Tensor&, const Tensor&, const Tensor&) { no_cusolver(); }
void cuda_lu_solve(const Tensor&, const Tensor&, const Tensor&, bool) { no_cusolver(); }
void cuda_cholesky(const Tensor&, const Tensor&) { no_cusolver(); }
void cuda_geqrf(const Tensor&, const Tensor&) { no_cusolver(); }
void cuda_orgqr(const Tensor&, const Tensor&) { no_cusolver(); }
void cuda_eigh(const Tensor&, const Tensor&, const Tensor&, bool, bool) { no_cusolver(); }
void cuda_svd(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, bool) { no_cusolver(); }
void cuda_triangular_solve(const Tensor&, const Tensor&, bool, bool, bool) { no_cusolver(); }
}  // namespace
}  // namespace tt::cuda

#endif  // TINYTORCH_WITH_CUSOLVER

namespace tt::cuda {
TT_REGISTER_KERNELS(CUDA, cuda, lu_factor, lu_solve, cholesky, geqrf, orgqr, eigh, svd, triangular_solve)
}  // namespace tt::cuda
