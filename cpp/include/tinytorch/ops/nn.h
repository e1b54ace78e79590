#pragma once
// Pooling, embedding and loss ops (checks, shapes, allocation; kernels in kernels/nn.h).
#include <array>
#include <optional>
#include <tuple>
#include "tinytorch/kernels/nn.h"

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

// weight: (V, D), indices: any shape, int32/int64 -> (*indices.shape, D).
Tensor embedding(const Tensor& weight, const Tensor& indices);
// grad: (*indices.shape, D) -> (V, D); padding_idx < 0 (after wrapping) means none.
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                          std::optional<int64_t> padding_idx);

// input: (C), (N, C) or (N, C, d1, ...); target: (), (N) or (N, d1, ...) class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_out, const Tensor& input, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index);
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, double label_smoothing);
Tensor cross_entropy_backward(const Tensor& grad_out, const Tensor& logits, const Tensor& target,
                              const Tensor& weight, int64_t reduction, int64_t ignore_index,
                              double label_smoothing);

}  // namespace tt
