// Factorizations and solvers: shape/dtype checks, batch flattening and broadcasting, and the
// column-major buffers LAPACK/cuSOLVER work in. A matrix (..., r, c) becomes a fresh (B, c, r)
// contiguous buffer (its transpose made contiguous); results are views of such buffers with
// transposed strides, as PyTorch returns them.
#include "tinytorch/ops/decomposition.h"
#include <algorithm>
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/shape.h"

namespace tt {

TT_DEFINE_KERNEL(lu_factor)
TT_DEFINE_KERNEL(lu_solve)
TT_DEFINE_KERNEL(cholesky)
TT_DEFINE_KERNEL(geqrf)
TT_DEFINE_KERNEL(orgqr)
TT_DEFINE_KERNEL(eigh)
TT_DEFINE_KERNEL(svd)
TT_DEFINE_KERNEL(triangular_solve)

namespace {

void check_matrix(const char* op, const Tensor& A, bool square) {
  TT_CHECK(A.defined(), op, ": undefined tensor argument");
  TT_CHECK(A.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  TT_CHECK(A.dtype() == DType::Float32 || A.dtype() == DType::Float64, op,
           ": expected a float32 or float64 tensor, got ", dtype_name(A.dtype()));
  if (square)
    TT_CHECK(A.size(-2) == A.size(-1), op, ": A must be batches of square matrices, but they are ", A.size(-2),
             " by ", A.size(-1), " matrices");
}

Shape batch_of(const Tensor& A) { return Shape(A.shape().begin(), A.shape().end() - 2); }

int64_t count(const Shape& batch) {
  int64_t n = 1;
  for (int64_t s : batch) n *= s;
  return n;
}

Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// A (..., r, c) as a fresh (B, c, r) buffer: per batch element the column-major (r, c) matrix.
Tensor col_major_copy(const Tensor& A) {
  int64_t r = A.size(-2), c = A.size(-1);
  return A.transpose(-2, -1).clone().view({count(batch_of(A)), c, r});
}

// Read-only operand: no copy when A already is a batch of column-major matrices.
Tensor col_major(const Tensor& A) {
  int64_t r = A.size(-2), c = A.size(-1);
  return A.transpose(-2, -1).contiguous().reshape({count(batch_of(A)), c, r});
}

// buffer (B, c, r) -> (batch..., r, c) with column-major strides.
Tensor from_col_major(const Tensor& buf, const Shape& batch, int64_t r, int64_t c) {
  return buf.view(with(batch, {c, r})).transpose(-2, -1);
}

Tensor new_info(const Shape& batch, Device device) {
  return full(batch, 0.0, DType::Int32, device);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A) {
  check_matrix("linalg.lu_factor", A, true);
  Shape batch = batch_of(A);
  int64_t n = A.size(-1);
  Tensor lu = col_major_copy(A);
  Tensor pivots = full(with(batch, {n}), 0.0, DType::Int32, A.device());
  Tensor info = new_info(batch, A.device());
  if (n > 0 && count(batch) > 0)
    lu_factor_kernel[A.device()](lu, pivots.view({count(batch), n}), info.view({count(batch)}));
  return {from_col_major(lu, batch, n, n), pivots, info};
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool adjoint) {
  check_matrix("linalg.lu_solve", LU, true);
  TT_CHECK(B.dim() >= 2 && B.size(-2) == LU.size(-1), "linalg.lu_solve: Incompatible shapes of A and B for the "
           "equation AX = B (", LU.size(-2), "x", LU.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  TT_CHECK(B.dtype() == LU.dtype(), "linalg.lu_solve: Expected LU and B to have the same dtype, got ",
           dtype_name(LU.dtype()), " and ", dtype_name(B.dtype()));
  check_same_device("linalg.lu_solve", LU, B);
  int64_t n = LU.size(-1), k = B.size(-1);
  Shape batch = broadcast_shapes(batch_of(LU), batch_of(B), "linalg.lu_solve");
  Tensor x = col_major_copy(B.expand(with(batch, {n, k})));
  if (n > 0 && k > 0 && count(batch) > 0) {
    Tensor lu = col_major(LU.expand(with(batch, {n, n})));
    Tensor piv = pivots.to(DType::Int32).expand(with(batch, {n})).contiguous().reshape({count(batch), n});
    lu_solve_kernel[B.device()](lu, piv, x, adjoint);
  }
  return from_col_major(x, batch, n, k);
}

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper) {
  check_matrix("linalg.cholesky", A, true);
  Shape batch = batch_of(A);
  int64_t n = A.size(-1);
  Tensor buf = col_major_copy(A);
  Tensor info = new_info(batch, A.device());
  if (n > 0 && count(batch) > 0) cholesky_kernel[A.device()](buf, info.view({count(batch)}));
  Tensor L = tril(from_col_major(buf, batch, n, n));  // LAPACK leaves the upper triangle as it was
  return {upper ? L.transpose(-2, -1) : L, info};
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode) {
  check_matrix("linalg.qr", A, false);
  TT_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
           "' but expected one of 'reduced' (default), 'r', or 'complete'");
  Shape batch = batch_of(A);
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), Bn = count(batch);
  Tensor a = col_major_copy(A);
  Tensor tau = Tensor::empty({Bn, k}, A.dtype(), A.device());
  if (k > 0 && Bn > 0) geqrf_kernel[A.device()](a, tau);
  int64_t rrows = mode == "complete" ? m : k;
  Tensor R = triu(from_col_major(a, batch, m, n).narrow(-2, 0, rrows));
  if (mode == "r") return {Tensor::empty({0}, A.dtype(), A.device()), R};
  int64_t qc = mode == "complete" ? m : k;
  Tensor q = full({Bn, qc, m}, 0.0, A.dtype(), A.device());
  q.narrow(1, 0, k).copy_(a.narrow(1, 0, k));
  if (qc > 0 && m > 0 && Bn > 0) {
    if (k == 0) q.copy_(eye(m, m, A.dtype(), A.device()).expand({Bn, m, m}));
    else orgqr_kernel[A.device()](q, tau);
  }
  return {from_col_major(q, batch, m, qc), R};
}

std::tuple<Tensor, Tensor, Tensor> eigh(const Tensor& A, bool upper, bool vectors) {
  check_matrix("linalg.eigh", A, true);
  Shape batch = batch_of(A);
  int64_t n = A.size(-1), Bn = count(batch);
  Tensor a = col_major_copy(A);
  Tensor w = Tensor::empty(with(batch, {n}), A.dtype(), A.device());
  Tensor info = new_info(batch, A.device());
  if (n > 0 && Bn > 0) eigh_kernel[A.device()](a, w.view({Bn, n}), info.view({Bn}), upper, vectors);
  return {w, vectors ? from_col_major(a, batch, n, n) : Tensor(), info};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices, bool compute_uv) {
  check_matrix("linalg.svd", A, false);
  Shape batch = batch_of(A);
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), Bn = count(batch);
  int64_t uc = full_matrices ? m : k, vc = full_matrices ? n : k;
  Tensor a = col_major_copy(A);
  Tensor s = Tensor::empty(with(batch, {k}), A.dtype(), A.device());
  Tensor info = new_info(batch, A.device());
  Tensor u = full({Bn, compute_uv ? uc : 0, m}, 0.0, A.dtype(), A.device());
  Tensor v = full({Bn, compute_uv ? vc : 0, n}, 0.0, A.dtype(), A.device());
  if (k > 0 && Bn > 0) {
    svd_kernel[A.device()](a, u, s.view({Bn, k}), v, info.view({Bn}), full_matrices, compute_uv);
  } else if (compute_uv && Bn > 0) {  // an empty matrix: the full bases are identities
    if (uc > 0) u.copy_(eye(m, m, A.dtype(), A.device()).expand({Bn, m, m}));
    if (vc > 0) v.copy_(eye(n, n, A.dtype(), A.device()).expand({Bn, n, n}));
  }
  if (!compute_uv) return {Tensor(), s, Tensor(), info};
  // v (B, vc, n) holds V column-major, i.e. Vh row-major
  return {from_col_major(u, batch, m, uc), s, v.view(with(batch, {vc, n})), info};
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  check_matrix("linalg.solve_triangular", A, true);
  TT_CHECK(B.dim() >= 2, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
  TT_CHECK(B.dtype() == A.dtype(), "linalg.solve_triangular: Expected A and B to have the same dtype, but found A "
           "of type ", dtype_name(A.dtype()), " and B of type ", dtype_name(B.dtype()), " instead");
  check_same_device("linalg.solve_triangular", A, B);
  int64_t n = A.size(-1);
  int64_t inner = left ? B.size(-2) : B.size(-1);
  TT_CHECK(inner == n, "linalg.solve_triangular: Incompatible shapes of A and B for the equation ",
           left ? "AX = B (" : "XA = B (", A.size(-2), "x", A.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  Shape batch = broadcast_shapes(batch_of(A), batch_of(B), "linalg.solve_triangular");
  // X A = B  <=>  A^T X^T = B^T: solve with the transposed triangle on B^T
  Tensor Bl = left ? B : B.transpose(-2, -1);
  int64_t k = Bl.size(-1);
  Tensor x = col_major_copy(Bl.expand(with(batch, {n, k})));
  if (n > 0 && k > 0 && count(batch) > 0)
    triangular_solve_kernel[B.device()](col_major(A.expand(with(batch, {n, n}))), x, upper, !left, unitriangular);
  Tensor X = from_col_major(x, batch, n, k);
  return left ? X : X.transpose(-2, -1);
}

}  // namespace tt
