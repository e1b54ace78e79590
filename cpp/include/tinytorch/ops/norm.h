#pragma once
// Device-independent softmax / log_softmax and layer_norm / rms_norm: check arguments, pick
// dtypes, bring inputs to the kernels' simple shapes, allocate, call the kernels.
#include <array>
#include <optional>
#include <tuple>
#include "tinytorch/kernels/norm.h"

namespace tt {

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim);

// Normalizes over the last `normalized_shape.size()` dims, which must equal normalized_shape.
// Returns (y, mean, rstd); mean/rstd have x's leading dims followed by ones, in x's dtype
// (float32 for float16/bfloat16 x). weight/bias may be undefined.
std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                                              const Tensor& bias, double eps = 1e-5);
// Returns (grad_x, grad_weight, grad_bias); grad_weight undefined without weight, grad_bias
// undefined unless has_bias. The normalized size is x.numel() / mean.numel().
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                                       const Tensor& rstd, const Tensor& weight, bool has_bias);
// Returns (y, rstd).
std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                                    double eps = 1e-6);
// Returns (grad_x, grad_weight); grad_weight undefined without weight.
std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& rstd,
                                             const Tensor& weight);

// batch_norm over dim 1 of x: (N, C, *). training: batch statistics; else running_mean/var
// (required). Returns (y, mean, var, invstd) with mean/var/invstd (C) in opmath type (var biased;
// in eval mode mean/var are the running ones). weight/bias may be undefined.
std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                                      const Tensor& running_mean, const Tensor& running_var,
                                                      bool training, double eps = 1e-5);
// Returns (grad_x, grad_weight, grad_bias), each undefined unless asked for in needs
// (grad_weight also undefined without weight).
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                                       const Tensor& invstd, const Tensor& weight, bool training,
                                                       std::array<bool, 3> needs);

}  // namespace tt
