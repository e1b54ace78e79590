#pragma once
// Dropout kernels. The mask draws from the counter-based Philox stream of the random kernels
// (kernels/random.h), four elements per block as attention's dropout: element i keeps when word
// i % 4 of philox(seed, offset + i / 4) gives U >= p (24-bit uniform, compared in float), on CPU
// and CUDA alike. The op still reserves numel counters.
#include "tinytorch/dispatch.h"
#include "tinytorch/kernels/random.h"
#include "tinytorch/tensor.h"

namespace tt {

// The keep decision for one 32-bit word of a Philox block.
TT_INLINE bool dropout_keep_word(uint32_t word, float p) { return uniform_float(word) >= p; }

// x: contiguous -> y = x * m / (1 - p), mask bool m = U >= p; y, mask contiguous of x's shape
TT_DECLARE_KERNEL(dropout, const Tensor& x, double p, const Tensor& y, const Tensor& mask, PhiloxState st)
// grad_in = grad * mask * scale; mask bool broadcast to grad's shape
TT_DECLARE_KERNEL(masked_scale, const Tensor& grad, const Tensor& mask, double scale, const Tensor& out)

}  // namespace tt
