#pragma once
// Winograd F(2x2, 3x3) transforms for stride-1 3x3 float32 convolutions on the CPU (the op layer,
// ops/conv_winograd.cpp, does the 16 GEMMs between them). Tile t = (b*th + ty)*tw + tx covers output
// rows 2ty, 2ty+1 and columns 2tx, 2tx+1.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// v and m below: (16, R, T) float32 with dense (R, T) blocks, any stride between the 16 (the op layer
// pads it: 16 streams a multiple of 4 KiB apart would share cache sets).
// x: (nb, C, H, W) float32 contiguous -> v: (16, C, nb*th*tw), v[4a + j, c, t] =
// (B^T d B)[a, j] for the 4x4 input tile d of x[b, c] at rows 2ty - ph.., columns 2tx - pw.. (0 outside x).
TT_DECLARE_KERNEL(winograd_input, const Tensor& x, const Tensor& v, int64_t ph, int64_t pw, int64_t th, int64_t tw)
// w: (O, C, 3, 3) float32 contiguous -> u: (16, O, C) = G w[o, c] G^T, or with transposed: (16, C, O) from
// w[o, c] rotated by 180 degrees (the weight of conv2d's input gradient as a convolution of grad_output).
TT_DECLARE_KERNEL(winograd_weight, const Tensor& w, const Tensor& u, bool transposed)
// m: (16, O, nb*th*tw) -> out: (nb, O, Ho, Wo) float32 contiguous, the 2x2 block
// A^T m[:, o, t] A of each tile (cropped to Ho x Wo).
TT_DECLARE_KERNEL(winograd_output, const Tensor& m, const Tensor& out, int64_t th, int64_t tw)

// For the weight gradient: go: (nb, O, Ho, Wo) float32 contiguous -> z: (16, O, nb*th*tw), z[:, o, t] =
// A dY A^T of the 2x2 block dY of go[b, o] at tile t (0 past Ho, Wo); then du[e] = z[e] @ v[e]^T (the op
// layer's GEMMs) and
TT_DECLARE_KERNEL(winograd_grad_output, const Tensor& go, const Tensor& z, int64_t th, int64_t tw)
// du: (16, O, C) float32 contiguous -> gw: (O, C, 3, 3) float32 contiguous = G^T du[:, o, c] G.
TT_DECLARE_KERNEL(winograd_weight_grad, const Tensor& du, const Tensor& gw)

}  // namespace tt
