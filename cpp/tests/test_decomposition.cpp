// Factorizations and solvers (LAPACK kernels through the op layer) checked by what defines them:
// A X = B, L L^T = A, Q R = A with orthonormal Q, A V = V diag(w), U diag(S) Vh = A, in float32
// and float64, on batched and transposed inputs; LAPACK's info for singular / non-PD matrices;
// the 16-bit floats rejected.
#include "nn_test_util.h"
#include "tinytorch/ops/decomposition.h"
#include "tinytorch/ops/linalg.h"
#include "tinytorch/ops/shape.h"

using namespace tt;
using namespace tt::testing;

namespace {

const std::vector<DType> kLapackTypes = {DType::Float32, DType::Float64};

// Well-conditioned (B, n, n): uniform [-1, 1) plus 2n on the diagonal, given as a transposed view.
Tensor square(int64_t B, int64_t n, DType d, uint32_t seed) {
  Tensor t = rand_tensor({B, n, n}, DType::Float64, seed);
  double* p = t.data<double>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n; ++i) p[b * n * n + i * n + i] += 2.0 * n;
  return t.to(d).transpose(1, 2);
}

std::vector<double> values(const Tensor& t) { return to_vec(t); }

// A Float64 tensor of `shape` holding `v`, converted to d.
Tensor from_vec(const std::vector<double>& v, const Shape& shape, DType d) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.to(d);
}

TEST(Decomposition, SolveAndInverse) {
  for (DType d : kLapackTypes) {
    Tensor A = square(3, 5, d, 1), B = rand_tensor({3, 5, 2}, d, 2);
    auto [LU, piv, info] = lu_factor_ex(A);
    EXPECT_EQ(values(info), std::vector<double>(3, 0.0));
    expect_close(matmul(A, lu_solve(LU, piv, B)), values(B), d, 50, "A X = B");
    expect_close(matmul(A.transpose(1, 2), lu_solve(LU, piv, B, true)), values(B), d, 50, "A^T X = B");
    Tensor I = eye(5, 5, d).expand({3, 5, 5});
    expect_close(matmul(A, lu_solve(LU, piv, I)), values(I), d, 50, "A A^-1 = I");
  }
}

TEST(Decomposition, SingularInfo) {
  Tensor A = Tensor::empty({2, 2}, DType::Float64);
  double v[] = {1, 2, 2, 4};
  std::copy(v, v + 4, A.data<double>());
  auto [LU, piv, info] = lu_factor_ex(A);
  EXPECT_EQ(values(info), std::vector<double>{2.0});
  auto [L, cinfo] = cholesky_ex(A, false);
  EXPECT_EQ(values(cinfo), std::vector<double>{2.0});
}

TEST(Decomposition, Cholesky) {
  for (DType d : kLapackTypes) {
    Tensor M = square(2, 4, d, 3);
    Tensor A = matmul(M, M.transpose(1, 2));
    auto [L, info] = cholesky_ex(A, false);
    EXPECT_EQ(values(info), std::vector<double>(2, 0.0));
    expect_close(matmul(L, L.transpose(1, 2)), values(A), d, 100, "L L^T = A");
    expect_close(L, values(tril(L)), d, 1, "L lower");
    auto [U, uinfo] = cholesky_ex(A, true);
    expect_close(U, values(L.transpose(1, 2)), d, 1, "U = L^T");
  }
}

TEST(Decomposition, QR) {
  for (DType d : kLapackTypes)
    for (auto [m, n] : {std::pair<int64_t, int64_t>{6, 4}, {4, 4}, {3, 5}}) {
      Tensor A = rand_tensor({2, n, m}, d, 4).transpose(1, 2);
      for (const char* mode : {"reduced", "complete"}) {
        auto [Q, R] = qr(A, mode);
        expect_close(matmul(Q, R), values(A), d, 50, mode);
        expect_close(matmul(Q.transpose(1, 2), Q), values(eye(Q.size(2), Q.size(2), d).expand({2, Q.size(2), Q.size(2)})),
                     d, 50, "Q^T Q = I");
        expect_close(R, values(triu(R)), d, 1, "R upper");
      }
    }
}

TEST(Decomposition, EighAndSvd) {
  for (DType d : kLapackTypes) {
    Tensor M = rand_tensor({2, 5, 5}, d, 5);
    Tensor A = matmul(M, M.transpose(1, 2));
    auto [w, V, info] = eigh(A, false, true);
    EXPECT_EQ(values(info), std::vector<double>(2, 0.0));
    std::vector<double> vv = values(V), ww = values(w);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 5; ++j) vv[(b * 5 + i) * 5 + j] *= ww[b * 5 + j];  // V diag(w)
    expect_close(matmul(A, V), vv, d, 100, "A V = V diag(w)");
    for (int64_t j = 1; j < 5; ++j) EXPECT_LE(ww[j - 1], ww[j]) << "ascending";
    Tensor R = rand_tensor({2, 3, 6}, d, 6).transpose(1, 2);  // (2, 6, 3)
    for (bool full : {false, true}) {
      auto [U, S, Vh, sinfo] = svd(R, full, true);
      std::vector<double> us = values(U.narrow(2, 0, 3)), s = values(S);
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < 6; ++i)
          for (int64_t j = 0; j < 3; ++j) us[(b * 6 + i) * 3 + j] *= s[b * 3 + j];
      expect_close(matmul(from_vec(us, {2, 6, 3}, d), Vh.narrow(1, 0, 3)), values(R), d, 50, "U S Vh = A");
      EXPECT_EQ(U.size(2), full ? 6 : 3);
    }
  }
}

TEST(Decomposition, TriangularSolve) {
  for (DType d : kLapackTypes)
    for (bool upper : {false, true}) {
      Tensor A = square(2, 4, d, 7), B = rand_tensor({2, 4, 3}, d, 8);
      Tensor T = upper ? triu(A) : tril(A);
      expect_close(matmul(T, solve_triangular(A, B, upper, true, false)), values(B), d, 50, "T X = B");
      Tensor Bt = B.transpose(1, 2);
      expect_close(matmul(solve_triangular(A, Bt, upper, false, false), T), values(Bt), d, 50, "X T = B");
    }
}

TEST(Decomposition, RejectsHalfTypes) {
  for (DType d : {DType::Float16, DType::BFloat16, DType::Int64})
    EXPECT_THROW(lu_factor_ex(Tensor::empty({2, 2}, d)), std::runtime_error);
}

}  // namespace
