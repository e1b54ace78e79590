#pragma once
// Matrix products with PyTorch semantics, built on the gemm kernel table.
#include <array>
#include <tuple>
#include "tinytorch/kernels/linalg.h"

namespace tt {

// torch.matmul: 1-D.1-D dot, mv, vm, mm, and batched products with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
// torch.mm / torch.bmm (strict 2-D / 3-D forms).
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
// x @ w.T + b, x: (..., in), w: (out, in), b: (out) or undefined -> (..., out).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias);
// Gradients of linear(x, w, b) for the output gradient g: (gx, gw, gb), each computed only
// where needs[i] (else undefined); gb is g summed over its batch dims.
std::tuple<Tensor, Tensor, Tensor> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w,
                                                   std::array<bool, 3> needs);
// beta * input + alpha * (m1 @ m2); input broadcastable to (n, p).
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta = 1.0, double alpha = 1.0);

// Describes how a 2-D (rows, cols) view with the given strides can be fed to BLAS without a
// copy; ok=false when it can't (then the caller makes it contiguous).
struct BlasLayout {
  bool ok = false, trans = false;
  int64_t ld = 1;
};
BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t stride_row, int64_t stride_col);

}  // namespace tt
