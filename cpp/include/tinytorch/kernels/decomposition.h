#pragma once
// Matrix factorizations and solvers (LAPACK's getrf/getrs, potrf, geqrf/orgqr, syevd, gesdd, trsm).
// The CPU backend registers LAPACK from scipy-openblas32, the CUDA backend cuSOLVER/cuBLAS.
//
// Every matrix operand is a contiguous (B, cols, rows) tensor: per batch element the column-major
// (rows, cols) matrix, as LAPACK reads it (ld = rows). Factorizations overwrite their input.
// `info` is an int32 (B) tensor on the operand's device receiving LAPACK's info per matrix.
// float32 and float64 only; zero-size matrices are the op layer's concern.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// Calls f(float{}) or f(double{}) for the dtype; the 16-bit floats and integers raise.
template <class F>
void dispatch_lapack_dtype(DType dtype, const char* op, F&& f) {
  if (dtype == DType::Float32) return f(float{});
  if (dtype == DType::Float64) return f(double{});
  throw_unsupported_dtype(op, dtype);
}

// a: (B, n, n) -> its LU factors (P A = L U); pivots: (B, n) int32, 1-based rows as LAPACK.
TT_DECLARE_KERNEL(lu_factor, const Tensor& a, const Tensor& pivots, const Tensor& info)
// Solves A X = B (trans: A^T X = B) for lu_factor's output; b: (B, k, n) overwritten with X.
TT_DECLARE_KERNEL(lu_solve, const Tensor& lu, const Tensor& pivots, const Tensor& b, bool trans)
// a: (B, n, n) symmetric positive-definite -> lower Cholesky factor in its lower triangle
// (the strict upper triangle is left as it was).
TT_DECLARE_KERNEL(cholesky, const Tensor& a, const Tensor& info)
// a: (B, n, m), an (m, n) matrix -> R in its upper triangle, Householder reflectors below;
// tau: (B, min(m, n)).
TT_DECLARE_KERNEL(geqrf, const Tensor& a, const Tensor& tau)
// q: (B, c, m) whose first k = tau.size(1) columns hold geqrf's reflectors -> the first c
// columns of Q (m, m) = H_1 ... H_k.
TT_DECLARE_KERNEL(orgqr, const Tensor& q, const Tensor& tau)
// a: (B, n, n) symmetric, read from its upper/lower triangle -> eigenvalues w: (B, n) ascending;
// with vectors, a is overwritten by the orthonormal eigenvectors (columns).
TT_DECLARE_KERNEL(eigh, const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors)
// a: (B, n, m), an (m, n) matrix, destroyed -> s: (B, k) descending, k = min(m, n); with vectors
// u: (B, uc, m) = U (m, uc) and v: (B, vc, n) = V (n, vc), uc = vc = k (reduced) or m, n (full).
TT_DECLARE_KERNEL(svd, const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& v,
                  const Tensor& info, bool full, bool vectors)
// Solves op(A) X = B for triangular a: (B, n, n), op(A) = A or A^T; b: (B, k, n) overwritten.
TT_DECLARE_KERNEL(triangular_solve, const Tensor& a, const Tensor& b, bool upper, bool trans,
                  bool unitriangular)

}  // namespace tt
