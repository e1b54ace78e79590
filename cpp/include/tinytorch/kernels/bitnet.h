#pragma once
// BitNet b1.58 inference kernels: ternary weights packed 2 bits per value (the plane layout of
// tinytorch/nn/modules/bitlinear.py), activations quantized to int8 per token.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// q: (M, K) float32 holding int8 values (the quantized activations), w: (N, K4) uint8 with
// K4 = ceil(K / 4), byte j of a row holding columns j + k*K4 in bits 2k..2k+1 as value + 1,
// mult: (M) float32 -> out: (M, N) float32, out[m, n] = float(sum_k q[m, k] * t[n, k]) * mult[m],
// the sum exact in int32.
TT_DECLARE_KERNEL(bitnet_matmul, const Tensor& q, const Tensor& w, const Tensor& mult, const Tensor& out)

}  // namespace tt
