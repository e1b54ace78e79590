#pragma once
// Multi-tensor kernels of nn.utils.clip_grad_norm_ (norm_type 2): a whole parameter list in one or
// two launches, where a norm and a scale per gradient cost four launches each. The op layer
// (ops/grad_clip.h) hands over validated lists: every tensor contiguous, of one floating dtype, on
// the kernel's device.
#include <vector>
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// xs[i]: any shape -> sums: (len(xs),) contiguous, float32 (float64 for float64 xs): sums[i] is the
// sum of xs[i]'s squares, accumulated in that type in a fixed order (deterministic).
TT_DECLARE_KERNEL(multi_sum_squares, const std::vector<Tensor>& xs, const Tensor& sums)
// every xs[i] *= coef[0] in place; coef: one element, float32 (float64 for float64 xs), on the device.
TT_DECLARE_KERNEL(multi_scale, const std::vector<Tensor>& xs, const Tensor& coef)

}  // namespace tt
