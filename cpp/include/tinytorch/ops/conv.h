#pragma once
// 2-D convolution (NCHW) via im2col + gemm, and its backward.
#include <array>
#include <tuple>
#include "tinytorch/kernels/conv.h"

namespace tt {

using Pair = std::array<int64_t, 2>;

// x: (B, C, H, W) or (C, H, W), w: (O, C/groups, kh, kw), bias: (O) or undefined
//   -> (B, O, Ho, Wo) (or (O, Ho, Wo)), Ho = (H + 2*ph - dh*(kh-1) - 1) / sh + 1.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Pair stride, Pair padding, Pair dilation,
              int64_t groups);
// Gradients wrt (x, w, bias); an entry is undefined when its `needs` flag is false.
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& grad_out, const Tensor& x, const Tensor& w,
                                                   Pair stride, Pair padding, Pair dilation, int64_t groups,
                                                   std::array<bool, 3> needs);

}  // namespace tt
