#pragma once
// Matrix factorizations and solvers over batches (..., m, n), built on the decomposition kernel
// tables (LAPACK on the CPU, cuSOLVER on CUDA). Results are laid out as LAPACK leaves them:
// matrices column-major (transposed strides), as PyTorch's. float32/float64 only; `info` results
// are int32 (...) tensors holding LAPACK's info per matrix, for the caller to check.
#include <string>
#include <tuple>
#include "tinytorch/kernels/decomposition.h"

namespace tt {

// P A = L U of A (..., n, n): (LU (..., n, n), pivots (..., n) int32 1-based, info (...)).
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A);
// X solving A X = B (adjoint: A^T X = B) from lu_factor_ex's (LU, pivots); B: (..., n, k), batch
// dims broadcast with LU's.
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool adjoint = false);
// Cholesky factor of A (..., n, n): (L, or U = L^T when upper, info).
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper);
// QR of A (..., m, n); mode "reduced" (Q (m, k), R (k, n)), "complete" (Q (m, m), R (m, n)) or
// "r" (Q empty, R (k, n)), k = min(m, n).
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode);
// Eigen-decomposition of symmetric A (..., n, n) from its lower (or upper) triangle:
// (eigenvalues (..., n) ascending, eigenvectors (..., n, n) or undefined, info).
std::tuple<Tensor, Tensor, Tensor> eigh(const Tensor& A, bool upper, bool vectors);
// A (..., m, n) = U diag(S) Vh: (U, S (..., k) descending, Vh, info); U (m, k or m) and
// Vh (k or n, n) per full_matrices, undefined unless compute_uv.
std::tuple<Tensor, Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices, bool compute_uv);
// X solving A X = B (left) or X A = B for triangular A (..., n, n); batch dims broadcast.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular);

}  // namespace tt
