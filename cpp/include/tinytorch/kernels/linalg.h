#pragma once
// The GEMM primitive every linear-algebra and NN op builds on. The CPU backend registers
// OpenBLAS (half types through float32), the CUDA backend registers cuBLAS.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// Strided-batched, row-major GEMM:
//   for i in [0, batch): C_i = alpha * op(A_i) @ op(B_i) + beta * C_i
// op(A_i): (m, k), op(B_i): (k, n), C_i: (m, n). A_i starts at a.data_ptr() + i * stride_a
// elements (likewise B, C); a/b/c supply only the base pointer, device and dtype (all three
// share one dtype). A row-major operand X with trans=false is read as X[r, col] = p[r*ld + col];
// with trans=true as X[r, col] = p[col*ld + r]. C's rows are ldc apart and C_i never overlap
// (stride_c may be 0 only when batch == 1). beta == 0 means C is not read (NaNs ignored).
struct GemmArgs {
  Tensor a, b, c;
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 1, ldb = 1, ldc = 1;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  double alpha = 1.0, beta = 0.0;
  // Optional (n,) contiguous in C's dtype, with batch == 1 and beta == 0: C = alpha op(A) op(B) + bias
  // (broadcast over the rows; cuBLASLt's epilogue on CUDA, so linear's output is written once).
  Tensor bias;
  bool conv = false;  // a convolution's GEMM: float32 may use TF32 per backends.cudnn.allow_tf32
};

TT_DECLARE_KERNEL(gemm, const GemmArgs& args)

// For a backend with no bias epilogue for this problem: C <- the bias broadcast over the rows, and
// the returned arguments (no bias, beta = 1) then add alpha op(A) op(B) to it.
inline GemmArgs bias_into_c(const GemmArgs& g) {
  g.c.as_strided({g.m, g.n}, {g.ldc, 1}).copy_(g.bias);
  GemmArgs rest = g;
  rest.bias = Tensor(), rest.beta = 1.0;
  return rest;
}

}  // namespace tt
