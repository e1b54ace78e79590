#pragma once
// Loss ops: nll_loss and the fused cross_entropy (checks, shapes, allocation; kernels in
// kernels/loss.h).
#include <optional>
#include "tinytorch/kernels/loss.h"

namespace tt {

// input: (C), (N, C) or (N, C, d1, ...); target: (), (N) or (N, d1, ...) class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_out, const Tensor& input, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index);
// dtype: the loss's (default the logits'); autocast asks for float32 from float16/bfloat16 logits,
// which the kernels read in float32 anyway: the numbers of logits.float()'s, without that copy.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, double label_smoothing, std::optional<DType> dtype = std::nullopt);
Tensor cross_entropy_backward(const Tensor& grad_out, const Tensor& logits, const Tensor& target,
                              const Tensor& weight, int64_t reduction, int64_t ignore_index,
                              double label_smoothing);

}  // namespace tt
