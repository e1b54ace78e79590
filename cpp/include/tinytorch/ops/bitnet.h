#pragma once
// BitNet b1.58 ops (checks, shapes; kernels in kernels/bitnet.h).
#include "tinytorch/kernels/bitnet.h"

namespace tt {

// q: (M, K) float32 int8-valued activations, packed: (N, ceil(K / 4)) uint8 ternary rows,
// mult: (M) float32 per-token output scale -> (M, N) float32 (see kernels/bitnet.h).
Tensor bitnet_matmul(const Tensor& q, const Tensor& packed, const Tensor& mult);

}  // namespace tt
