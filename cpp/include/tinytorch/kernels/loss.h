#pragma once
// Loss kernels (nll_loss, fused cross_entropy). Operands arrive validated and contiguous, in the
// shapes noted (the op layer flattens spatial dims to S).
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };  // PyTorch's enum values

// input: (N, C, S) log-probs, target: (N, S) int64, weight: (C) or undefined
//   -> out: (N, S) for Reduction::None, else 0-dim. IndexError for a target outside [0, C).
TT_DECLARE_KERNEL(nll_loss, const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out,
                  Reduction reduction, int64_t ignore_index)
// grad_out: (N, S) or 0-dim -> grad_in: (N, C, S), overwritten.
TT_DECLARE_KERNEL(nll_loss_backward, const Tensor& grad_out, const Tensor& target, const Tensor& weight,
                  const Tensor& grad_in, Reduction reduction, int64_t ignore_index)
// Fused log_softmax over C + nll (+ label smoothing): logits: (N, C, S) -> out as nll_loss, in
// out's floating dtype (the logits' or wider).
TT_DECLARE_KERNEL(cross_entropy, const Tensor& logits, const Tensor& target, const Tensor& weight,
                  const Tensor& out, Reduction reduction, int64_t ignore_index, double label_smoothing)
// grad_out: (N, S) or 0-dim float64 (the loss may be wider than the logits) ->
// grad_in: (N, C, S) = scale * ((1-eps) w_t (softmax - onehot_t) + eps/C (sum(w) softmax - w)).
TT_DECLARE_KERNEL(cross_entropy_backward, const Tensor& grad_out, const Tensor& logits, const Tensor& target,
                  const Tensor& weight, const Tensor& grad_in, Reduction reduction, int64_t ignore_index,
                  double label_smoothing)

}  // namespace tt
