#pragma once
// Gradient clipping over a list of tensors (nn.utils.clip_grad_norm_ with norm_type 2).
#include <vector>
#include "tinytorch/tensor.h"

namespace tt {

// (len(xs),) float32 (float64 for float64 xs) on xs' device: the sum of squares of each tensor.
// xs: non-empty, one floating dtype, one device, contiguous.
Tensor multi_sum_squares(const std::vector<Tensor>& xs);
// Multiplies every tensor of xs (as above) by the one-element tensor coef, on the device: no host read.
void multi_scale_(const std::vector<Tensor>& xs, const Tensor& coef);

}  // namespace tt
