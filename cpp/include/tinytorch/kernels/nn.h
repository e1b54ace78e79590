#pragma once
// NN kernels: pooling, embedding, losses. Operands arrive validated and contiguous, in the
// shapes noted (the op layer flattens batch/channel dims into "planes" and spatial dims to S).
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

struct Pool2dParams {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false, count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
};

enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };  // PyTorch's enum values

// x: (P, H, W) -> out: (P, Ho, Wo), idx: (P, Ho, Wo) int64, flat h*W + w within each plane.
TT_DECLARE_KERNEL(max_pool2d, const Tensor& x, const Tensor& out, const Tensor& idx, const Pool2dParams& p)
// gout: (P, Ho, Wo), idx: (P, Ho, Wo) -> gx: (P, H, W), overwritten.
TT_DECLARE_KERNEL(max_pool2d_backward, const Tensor& gout, const Tensor& idx, const Tensor& gx)
// x: (P, H, W) -> out: (P, Ho, Wo).
TT_DECLARE_KERNEL(avg_pool2d, const Tensor& x, const Tensor& out, const Pool2dParams& p)
// gout: (P, Ho, Wo) -> gx: (P, H, W), overwritten.
TT_DECLARE_KERNEL(avg_pool2d_backward, const Tensor& gout, const Tensor& gx, const Pool2dParams& p)
// x: (P, H, W) -> out: (P, Ho, Wo); window [floor(o*H/Ho), ceil((o+1)*H/Ho)).
TT_DECLARE_KERNEL(adaptive_avg_pool2d, const Tensor& x, const Tensor& out)
TT_DECLARE_KERNEL(adaptive_avg_pool2d_backward, const Tensor& gout, const Tensor& gx)

// weight: (V, D), idx: (N) int32/int64 -> out: (N, D). IndexError for an index outside [0, V).
TT_DECLARE_KERNEL(embedding, const Tensor& weight, const Tensor& idx, const Tensor& out)
// grad: (N, D), idx: (N) -> gw: (V, D), overwritten; row padding_idx (if >= 0) stays zero.
// Sums run in index order whatever the thread count (deterministic).
TT_DECLARE_KERNEL(embedding_backward, const Tensor& grad, const Tensor& idx, const Tensor& gw, int64_t padding_idx)

// input: (N, C, S) log-probs, target: (N, S) int64, weight: (C) or undefined
//   -> out: (N, S) for Reduction::None, else 0-dim. IndexError for a target outside [0, C).
TT_DECLARE_KERNEL(nll_loss, const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out,
                  Reduction reduction, int64_t ignore_index)
// grad_out: (N, S) or 0-dim -> grad_in: (N, C, S), overwritten.
TT_DECLARE_KERNEL(nll_loss_backward, const Tensor& grad_out, const Tensor& target, const Tensor& weight,
                  const Tensor& grad_in, Reduction reduction, int64_t ignore_index)
// Fused log_softmax over C + nll (+ label smoothing): logits: (N, C, S) -> out as nll_loss.
TT_DECLARE_KERNEL(cross_entropy, const Tensor& logits, const Tensor& target, const Tensor& weight,
                  const Tensor& out, Reduction reduction, int64_t ignore_index, double label_smoothing)
// grad_in: (N, C, S) = scale * ((1-eps) w_t (softmax - onehot_t) + eps/C (sum(w) softmax - w)).
TT_DECLARE_KERNEL(cross_entropy_backward, const Tensor& grad_out, const Tensor& logits, const Tensor& target,
                  const Tensor& weight, const Tensor& grad_in, Reduction reduction, int64_t ignore_index,
                  double label_smoothing)

}  // namespace tt
