#pragma once
// Pooling ops (checks, shapes, allocation; kernels in kernels/pool.h).
#include <array>
#include <optional>
#include <tuple>
#include "tinytorch/kernels/pool.h"

namespace tt {

using Pair2 = std::array<int64_t, 2>;

// x: (B, C, H, W) or (C, H, W). stride defaults to kernel. Returns (out, indices int64).
std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x, Pair2 kernel, std::optional<Pair2> stride, Pair2 padding,
                                      Pair2 dilation, bool ceil_mode);
Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, const Shape& input_shape);
Tensor avg_pool2d(const Tensor& x, Pair2 kernel, std::optional<Pair2> stride, Pair2 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override);
Tensor avg_pool2d_backward(const Tensor& grad_out, const Shape& input_shape, Pair2 kernel,
                           std::optional<Pair2> stride, Pair2 padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d(const Tensor& x, Pair2 output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_out, const Shape& input_shape);

}  // namespace tt
