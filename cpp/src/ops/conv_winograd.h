#pragma once
// conv2d's CPU Winograd F(2x2, 3x3) path for stride-1 3x3 convolutions (forward, and the input
// gradient as a convolution of grad_output): 2.25x fewer multiply-adds than im2col + GEMM.
#include "tinytorch/kernels/conv.h"
#include "tinytorch/tensor.h"

namespace tt {

// Whether a conv of C -> O channels with these params runs as Winograd on `dev`: the CPU, float32
// compute, groups 1, 3x3, stride 1, dilation 1, padding <= 2, C and O >= 16, an output plane of at
// least 64 (8x8: smaller ones don't amortize the weight transform). TINYTORCH_CONV_WINOGRAD=0 turns it off (the im2col + GEMM path then runs).
bool winograd_applies(Device dev, DType compute, const Conv2dParams& p, int64_t groups, int64_t C, int64_t O,
                      int64_t Ho, int64_t Wo);

// x: (B, C, H, W) float32 contiguous, u: (16, O, C) from winograd_weight -> out: (B, O, Ho, Wo)
// float32 contiguous, overwritten with the stride-1 3x3 convolution of x padded by (ph, pw).
void conv2d_winograd(const Tensor& x, const Tensor& u, int64_t ph, int64_t pw, const Tensor& out);

// The same with w: (O, C, 3, 3) float32 contiguous, transformed here.
void conv2d_winograd_forward(const Tensor& x, const Tensor& w, int64_t ph, int64_t pw, const Tensor& out);
// conv2d's input gradient: go: (B, O, Ho, Wo), w: (O, C, 3, 3) -> gx: (B, C, H, W), all float32
// contiguous; applies where winograd_applies(..., O, C, H, W) with padding 2 - (ph, pw) holds.
void conv2d_winograd_grad_input(const Tensor& go, const Tensor& w, int64_t ph, int64_t pw, const Tensor& gx);

// conv2d's weight gradient: x: (B, C, H, W), go: (B, O, Ho, Wo) -> gw: (O, C, 3, 3), all float32
// contiguous; applies where winograd_applies(..., C, O, Ho, Wo) holds.
void conv2d_winograd_grad_weight(const Tensor& x, const Tensor& go, int64_t ph, int64_t pw, const Tensor& gw);

}  // namespace tt
