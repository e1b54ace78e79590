#pragma once
// Device-independent reductions and scans: check arguments, pick dtypes, bring inputs to the
// kernels' simple (O, R, I) shapes, allocate, call the kernels.
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

}  // namespace tt
