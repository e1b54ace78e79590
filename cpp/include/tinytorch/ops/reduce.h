#pragma once
// Device-independent reductions, scans, softmax and normalization: check arguments, pick
// dtypes, bring inputs to the kernels' simple (O, R, I) shapes, allocate, call the kernels.
#include <optional>
#include <tuple>
#include "tinytorch/kernels/reduce.h"

namespace tt {

using OptDims = std::optional<Shape>;  // nullopt or empty = every dim

// sum/prod: integral and bool inputs give int64; `dtype` casts the input first (PyTorch).
Tensor sum(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// TypeError for non-floating inputs (unless `dtype` names a floating type).
Tensor mean(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false);
Tensor amin(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false);
Tensor all(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false);
Tensor any(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& x, const OptDims& dims = std::nullopt, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, const OptDims& dims = std::nullopt, double correction = 1, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const OptDims& dims = std::nullopt, double correction = 1,
                                    bool keepdim = false);
// Integral inputs are promoted to float32.
Tensor logsumexp(const Tensor& x, const OptDims& dims = std::nullopt, bool keepdim = false);
// Vector p-norm: p = 2, 1, inf, -inf, 0 (count of nonzeros) or any float.
Tensor norm(const Tensor& x, double p = 2, const OptDims& dims = std::nullopt, bool keepdim = false);

// Over one dim: (values, int64 indices of the first extreme; NaN wins).
std::tuple<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max_all(const Tensor& x);  // 0-dim
Tensor min_all(const Tensor& x);
// dim nullopt = over the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

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

}  // namespace tt
