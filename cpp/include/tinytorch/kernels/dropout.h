#pragma once
// Dropout kernels. The mask draws from the same counter-based Philox stream as the random
// kernels (kernels/random.h): element i uses philox(seed, offset + i), on CPU and CUDA alike.
#include "tinytorch/dispatch.h"
#include "tinytorch/kernels/random.h"
#include "tinytorch/tensor.h"

namespace tt {

// x: any -> y = x * m / (1 - p), mask bool m = U >= p; y, mask contiguous of x's shape
TT_DECLARE_KERNEL(dropout, const Tensor& x, double p, const Tensor& y, const Tensor& mask, PhiloxState st)
// grad_in = grad * mask * scale; mask bool broadcast to grad's shape
TT_DECLARE_KERNEL(masked_scale, const Tensor& grad, const Tensor& mask, double scale, const Tensor& out)

}  // namespace tt
