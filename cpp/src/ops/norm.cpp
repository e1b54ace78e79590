// softmax / log_softmax and layer_norm / rms_norm: argument checks, dtype choice, and the
// reshaping that brings every call to the kernels' simple contiguous shapes.
#include <limits>
#include "tinytorch/ops/norm.h"
#include "tinytorch/ops/elementwise.h"
#include "common.h"

namespace tt {

TT_DEFINE_KERNEL(softmax)
TT_DEFINE_KERNEL(softmax_backward)
TT_DEFINE_KERNEL(layer_norm)
TT_DEFINE_KERNEL(layer_norm_backward)

namespace {

DType opmath_dtype(DType d) { return (d == DType::Float16 || d == DType::BFloat16) ? DType::Float32 : d; }

Tensor softmax_op(bool is_log, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  const char* name = is_log ? "log_softmax" : "softmax";
  int64_t d = wrap_dim(dim, x.dim(), name);
  Tensor in = dtype ? x.to(*dtype) : x;
  TT_CHECK_TYPE(is_floating(in.dtype()), name, ": expected a floating point input, but got ", in.describe(),
                " (pass dtype= to compute in a floating type)");
  Tensor out = Tensor::empty(x.shape(), in.dtype(), x.device());
  if (x.numel() > 0) softmax_kernel[x.device()](is_log, view_around(in, d), out.view(view_around(out, d).shape()));
  return out;
}

Tensor softmax_backward_op(bool is_log, const Tensor& grad, const Tensor& out, int64_t dim) {
  const char* name = is_log ? "log_softmax_backward" : "softmax_backward";
  check_same_device(name, grad, out);
  TT_CHECK(grad.shape() == out.shape(), name, ": grad_output ", grad.describe(), " and output ", out.describe(),
           " must have the same shape");
  TT_CHECK_TYPE(grad.dtype() == out.dtype() && is_floating(out.dtype()), name,
                ": expected grad_output and output of one floating dtype, got ", grad.describe(), " and ",
                out.describe());
  int64_t d = wrap_dim(dim, out.dim(), name);
  Tensor gin = Tensor::empty(out.shape(), out.dtype(), out.device());
  if (out.numel() > 0)
    softmax_backward_kernel[out.device()](is_log, view_around(grad, d), view_around(out, d),
                                          gin.view(view_around(gin, d).shape()));
  return gin;
}

// Checks x's trailing dims against normalized_shape; returns (N, D).
std::pair<int64_t, int64_t> norm_rows(const Tensor& x, const Shape& normalized_shape, const char* op) {
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  TT_CHECK(k >= 1, op, ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
           "element, but got normalized_shape = ", shape_str(normalized_shape));
  bool ok = x.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = x.size(x.dim() - k + i) == normalized_shape[i];
  TT_CHECK(ok, op, ": Given normalized_shape=", shape_str(normalized_shape), ", expected input with shape [*, ",
           shape_str(normalized_shape).substr(1), ", but got input of size", shape_str(x.shape()));
  check_floating(x, op, "expected a floating point input.");
  int64_t D = shape_numel(normalized_shape), N = 1;
  for (int64_t i = 0; i < x.dim() - k; ++i) N *= x.size(i);  // the rows, also when they are empty (D == 0)
  return {N, D};
}

Tensor norm_param(const Tensor& p, const Tensor& x, const Shape& normalized_shape, const char* op, const char* what) {
  if (!p.defined()) return p;
  check_same_device(op, x, p);
  TT_CHECK(p.shape() == normalized_shape, op, ": Expected ", what, " to be of same shape as normalized_shape, but got ",
           what, " of shape ", shape_str(p.shape()), " and normalized_shape = ", shape_str(normalized_shape));
  return p.to(x.dtype()).contiguous();
}

// Statistics of rows with no elements, as PyTorch's: mean 0 (a sum over nothing) and variance
// 0 / 0, so rstd is NaN.
void empty_row_stats(Tensor mean, Tensor rstd) {
  if (mean.defined()) fill_(mean, 0.0);
  fill_(rstd, std::numeric_limits<double>::quiet_NaN());
}

Shape stats_shape(const Tensor& x, size_t k) {
  Shape s(x.shape().begin(), x.shape().end() - k);
  s.resize(x.shape().size(), 1);
  return s;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return softmax_op(false, x, dim, dtype); }
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return softmax_op(true, x, dim, dtype); }
Tensor softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim) {
  return softmax_backward_op(false, grad, out, dim);
}
Tensor log_softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim) {
  return softmax_backward_op(true, grad, out, dim);
}

std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                                              const Tensor& bias, double eps) {
  auto [N, D] = norm_rows(x, normalized_shape, "layer_norm");
  Tensor w = norm_param(weight, x, normalized_shape, "layer_norm", "weight");
  Tensor b = norm_param(bias, x, normalized_shape, "layer_norm", "bias");
  DType stat = opmath_dtype(x.dtype());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor mu = Tensor::empty({N}, stat, x.device()), rstd = Tensor::empty({N}, stat, x.device());
  if (N > 0 && D > 0) layer_norm_kernel[x.device()](false, x.contiguous().view({N, D}), w, b, eps, y.view({N, D}), mu, rstd);
  else if (N > 0) empty_row_stats(mu, rstd);
  Shape s = stats_shape(x, normalized_shape.size());
  return {y, mu.view(s), rstd.view(s)};
}

std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, double eps) {
  auto [N, D] = norm_rows(x, normalized_shape, "rms_norm");
  Tensor w = norm_param(weight, x, normalized_shape, "rms_norm", "weight");
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor rstd = Tensor::empty({N}, opmath_dtype(x.dtype()), x.device());
  if (N > 0 && D > 0) layer_norm_kernel[x.device()](true, x.contiguous().view({N, D}), w, Tensor(), eps, y.view({N, D}), Tensor(), rstd);
  else if (N > 0) empty_row_stats(Tensor(), rstd);
  return {y, rstd.view(stats_shape(x, normalized_shape.size()))};
}

namespace {
std::tuple<Tensor, Tensor, Tensor> norm_backward(bool rms, const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                                 const Tensor& rstd, const Tensor& weight, bool has_bias) {
  const char* name = rms ? "rms_norm_backward" : "layer_norm_backward";
  check_floating(x, name, "expected a floating point input.");
  check_same_device(name, grad_y, x);
  check_same_device(name, rstd, x);
  TT_CHECK(grad_y.shape() == x.shape(), name, ": grad ", grad_y.describe(), " and input ", x.describe(),
           " must have the same shape");
  int64_t N = rstd.numel();
  TT_CHECK(N > 0 ? x.numel() % N == 0 : x.numel() == 0, name, ": rstd ", rstd.describe(),
           " does not match input ", x.describe());
  TT_CHECK(rms || (mean.defined() && mean.numel() == N), name, ": mean must have as many elements as rstd (", N, ")");
  int64_t D = N > 0 ? x.numel() / N : (weight.defined() ? weight.numel() : 0);
  DType stat = opmath_dtype(x.dtype());
  Tensor w;
  if (weight.defined()) {
    check_same_device(name, weight, x);
    TT_CHECK(weight.numel() == D, name, ": weight ", weight.describe(), " must have ", D, " elements");
    w = weight.to(x.dtype()).contiguous().view({D});
  }
  Tensor gx = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor gw = weight.defined() ? Tensor::empty(weight.shape(), x.dtype(), x.device()) : Tensor();
  Tensor gb = has_bias ? Tensor::empty(weight.defined() ? weight.shape() : Shape{D}, x.dtype(), x.device()) : Tensor();
  if (N > 0 && D > 0) {
    layer_norm_backward_kernel[x.device()](rms, grad_y.to(x.dtype()).contiguous().view({N, D}), x.contiguous().view({N, D}),
                                           rms ? Tensor() : mean.to(stat).contiguous().view({N}),
                                           rstd.to(stat).contiguous().view({N}), w, gx.view({N, D}),
                                           gw.defined() ? gw.view({D}) : gw, gb.defined() ? gb.view({D}) : gb);
  } else {  // nothing to normalize: parameter grads are sums over no rows
    if (gw.defined()) fill_(gw, 0);
    if (gb.defined()) fill_(gb, 0);
  }
  return {gx, gw, gb};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                                       const Tensor& rstd, const Tensor& weight, bool has_bias) {
  return norm_backward(false, grad_y, x, mean, rstd, weight, has_bias);
}

std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& rstd,
                                             const Tensor& weight) {
  auto [gx, gw, gb] = norm_backward(true, grad_y, x, Tensor(), rstd, weight, false);
  return {gx, gw};
}

}  // namespace tt
