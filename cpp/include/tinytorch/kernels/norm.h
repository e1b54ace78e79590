#pragma once
// softmax / log_softmax and layer_norm / rms_norm kernel families. The op layer
// (cpp/src/ops/norm.cpp) brings every call to one of the simple shapes below: inputs
// contiguous, outputs freshly allocated and contiguous, dtypes already chosen.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// x: (O, L, I) contiguous floating -> out: (O, L, I), softmax (or log_softmax) over L.
TT_DECLARE_KERNEL(softmax, bool is_log, const Tensor& x, const Tensor& out)
// grad, out: (O, L, I) contiguous -> grad_in: (O, L, I).
// softmax: out * (g - sum_L(g * out)); log_softmax: g - exp(out) * sum_L(g).
TT_DECLARE_KERNEL(softmax_backward, bool is_log, const Tensor& grad, const Tensor& out, const Tensor& grad_in)

// x: (N, D) contiguous, weight/bias: (D) or undefined -> y: (N, D), mean/rstd: (N) in
// opmath type (float32 for 16-bit x). rms: mean is undefined and not computed.
TT_DECLARE_KERNEL(layer_norm, bool rms, const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                  const Tensor& y, const Tensor& mean, const Tensor& rstd)
// grad_y, x: (N, D), mean/rstd: (N) (mean undefined for rms), weight: (D) or undefined ->
// grad_x: (N, D), grad_weight/grad_bias: (D) in x's dtype (each may be undefined = skip).
TT_DECLARE_KERNEL(layer_norm_backward, bool rms, const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                  const Tensor& rstd, const Tensor& weight, const Tensor& grad_x, const Tensor& grad_weight,
                  const Tensor& grad_bias)

// batch_norm (cpp/src/cpu/batch_norm.cpp). x: (N, C, L) contiguous, weight/bias: (C) in x's
// dtype or undefined -> y: (N, C, L); mean/var/invstd: (C) in opmath type. training: writes the
// batch mean, biased var and invstd = 1/sqrt(var + eps); else reads mean/var, writes invstd.
TT_DECLARE_KERNEL(batch_norm, const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, bool training,
                  const Tensor& y, const Tensor& mean, const Tensor& var, const Tensor& invstd)
// grad_y, x: (N, C, L), mean/invstd: (C) opmath, weight: (C) or undefined -> grad_x: (N, C, L),
// grad_weight/grad_bias: (C) in x's dtype (each may be undefined = skip). training: the batch
// statistics depend on x (their gradient terms are included); else they are constants.
TT_DECLARE_KERNEL(batch_norm_backward, const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                  const Tensor& invstd, const Tensor& weight, bool training, const Tensor& grad_x,
                  const Tensor& grad_weight, const Tensor& grad_bias)

}  // namespace tt
