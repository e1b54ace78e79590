#pragma once
// Convolution helpers: the op layer turns conv2d into im2col/col2im plus the gemm kernel.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

struct Conv2dParams {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// x: (nb, C, H, W) contiguous -> col: (nb, C*kh*kw, Ho*Wo), same dtype, any item/row strides with
// a dense last dim (the op layer lays col out batch-inner on GPUs).
// Row (c*kh + i)*kw + j of col holds x[c, oh*sh - ph + i*dh, ow*sw - pw + j*dw] (0 in padding).
TT_DECLARE_KERNEL(im2col, const Tensor& x, const Tensor& col, const Conv2dParams& p, int64_t Ho, int64_t Wo)
// The adjoint: col: (nb, C*kh*kw, Ho*Wo) -> x: (nb, C, H, W), x overwritten with the sum of
// every col entry that im2col would have read from each position.
TT_DECLARE_KERNEL(col2im, const Tensor& col, const Tensor& x, const Conv2dParams& p, int64_t Ho, int64_t Wo)
// A backend's own convolution (CUDA: cuDNN, where the build has it), used before im2col + GEMM.
// x: (B, C, H, W), w: (O, C/groups, kh, kw), out: (B, O, Ho, Wo) (no bias: the op layer adds it);
// all contiguous, one floating dtype. Sets handled = false (touching nothing) for a problem it can't take.
TT_DECLARE_KERNEL(conv2d_direct, const Tensor& x, const Tensor& w, const Conv2dParams& p, int64_t groups,
                  const Tensor& out, bool& handled)
// Its gradients: gx (B, C, H, W) and gw (w's shape), each only where defined; go: (B, O, Ho, Wo).
TT_DECLARE_KERNEL(conv2d_direct_backward, const Tensor& go, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                  int64_t groups, const Tensor& gx, const Tensor& gw, bool& handled)
// g: (B, C, L) contiguous -> out: (C) contiguous, out[c] (+)= sum_{b,l} g[b, c, l].
TT_DECLARE_KERNEL(channel_sum, const Tensor& g, const Tensor& out, bool accumulate)

}  // namespace tt
