#pragma once
// Pooling kernels. Operands arrive validated and contiguous, in the shapes noted (the op
// layer flattens batch/channel dims into "planes" P).
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

struct Pool2dParams {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false, count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
};

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

}  // namespace tt
