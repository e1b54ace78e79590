// Reductions, scans, softmax and normalization: argument checks, dtype choice, and the
// reshaping that brings every call to the kernels' simple contiguous shapes.
#include "tinytorch/ops/reduce.h"
#include "tinytorch/ops/elementwise.h"
#include <algorithm>
#include <cmath>

namespace tt {

TT_DEFINE_KERNEL(reduce)
TT_DEFINE_KERNEL(reduce_index)
TT_DEFINE_KERNEL(cumulative)
TT_DEFINE_KERNEL(softmax)
TT_DEFINE_KERNEL(softmax_backward)
TT_DEFINE_KERNEL(layer_norm)
TT_DEFINE_KERNEL(layer_norm_backward)

#define TT_NAME_ENTRY(Name, name) #name,
const char* op_name(ReduceOp op) {
  static const char* names[] = {TT_REDUCE_OPS(TT_NAME_ENTRY)};
  return names[static_cast<int>(op)];
}
#undef TT_NAME_ENTRY

namespace {

DType opmath_dtype(DType d) { return (d == DType::Float16 || d == DType::BFloat16) ? DType::Float32 : d; }

// Which dims are reduced; nullopt/empty = all. IndexError for out-of-range, RuntimeError
// for repeats (PyTorch's messages).
std::vector<bool> reduce_mask(const Tensor& x, const OptDims& dims, const char* op) {
  int64_t nd = x.dim();
  std::vector<bool> mask(nd, false);
  if (!dims || dims->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, nd, op);
    if (nd == 0) continue;  // a 0-dim tensor accepts dim 0 / -1
    TT_CHECK(!mask[w], op, ": dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

// The input as a contiguous (O, R, I) tensor reducing over R, plus the output's shape.
struct Plan {
  Tensor in;        // (O, R, I)
  Shape out_shape;  // with keepdim applied
  int64_t O = 1, R = 1, I = 1;
};

Plan plan_reduce(const Tensor& x, const std::vector<bool>& mask, bool keepdim, bool allow_columns) {
  Plan p;
  const int64_t nd = x.dim();
  Shape perm;
  for (int64_t d = 0; d < nd; ++d) {
    if (mask[d]) {
      p.R *= x.size(d);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.O *= x.size(d);
      perm.push_back(d);
      p.out_shape.push_back(x.size(d));
    }
  }
  for (int64_t d = 0; d < nd; ++d)
    if (mask[d]) perm.push_back(d);
  Tensor permuted = x.permute(perm);
  if (permuted.is_contiguous()) {  // reduced dims already innermost in memory: no copy
    p.in = permuted.view({p.O, p.R, 1});
    return p;
  }
  if (allow_columns && x.is_contiguous()) {
    // The reduced dims (ignoring size-1 ones) form one block [a, b]: view as (O, R, I).
    int64_t a = -1, b = -1;
    for (int64_t d = 0; d < nd; ++d)
      if (mask[d] && x.size(d) != 1) { if (a < 0) a = d; b = d; }
    bool block = a >= 0;
    for (int64_t d = a; block && d <= b; ++d) block = mask[d] || x.size(d) == 1;
    if (block) {
      int64_t O = 1, I = 1;
      for (int64_t d = 0; d < a; ++d) O *= x.size(d);
      for (int64_t d = b + 1; d < nd; ++d) I *= x.size(d);
      p.O = O;
      p.I = I;
      p.in = x.view({O, p.R, I});
      return p;
    }
  }
  p.in = permuted.contiguous().view({p.O, p.R, 1});
  return p;
}

Tensor run_reduce(ReduceOp op, const Tensor& x, const OptDims& dims, bool keepdim, DType out_dtype, double arg = 0) {
  const char* name = op_name(op);
  auto mask = reduce_mask(x, dims, name);
  Plan p = plan_reduce(x, mask, keepdim, !is_two_pass(op));
  Tensor out = Tensor::empty({p.O, p.I}, out_dtype, x.device());
  if (out.numel() > 0) reduce_kernel[x.device()](op, p.in, out, arg);
  return out.view(p.out_shape);
}

void check_floating(const Tensor& x, const char* op, const char* what) {
  TT_CHECK_TYPE(is_floating(x.dtype()), op, ": ", what, " Got: ", dtype_name(x.dtype()));
}

// amax/amin/norm(inf) cannot reduce an empty dim.
void check_nonempty_reduce(const Tensor& x, const OptDims& dims, const char* op) {
  if (x.numel() != 0) return;
  auto mask = reduce_mask(x, dims, op);
  for (int64_t d = 0; d < x.dim(); ++d)
    TT_CHECK_INDEX(!(mask[d] && x.size(d) == 0), op, "(): Expected reduction dim ", d,
                   " to have non-zero size.");
}

Tensor sum_like(ReduceOp op, const Tensor& x, const OptDims& dims, bool keepdim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : x;
  DType kernel_out = is_floating(in.dtype()) ? in.dtype() : DType::Int64;
  Tensor out = run_reduce(op, in, dims, keepdim, kernel_out);
  return dtype ? out.to(*dtype) : out;
}

Tensor minmax(ReduceOp op, const Tensor& x, const OptDims& dims, bool keepdim) {
  check_nonempty_reduce(x, dims, op_name(op));
  return run_reduce(op, x, dims, keepdim, x.dtype());
}

// (O, L, I) view of x contiguous around `dim`.
Tensor view_around(const Tensor& x, int64_t dim) {
  int64_t O = 1, I = 1;
  for (int64_t d = 0; d < dim; ++d) O *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) I *= x.size(d);
  return x.contiguous().view({O, x.dim() == 0 ? 1 : x.size(dim), I});
}

std::tuple<Tensor, Tensor> index_reduce(bool is_max, const Tensor& x, std::optional<int64_t> dim, bool keepdim,
                                        bool want_values) {
  const char* name = want_values ? (is_max ? "max" : "min") : (is_max ? "argmax" : "argmin");
  Tensor rows;
  Shape out_shape;
  if (!dim) {
    TT_CHECK_INDEX(x.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0.");
    rows = x.reshape({1, x.numel()});
    if (keepdim) out_shape.assign(x.dim(), 1);
  } else {
    int64_t d = wrap_dim(*dim, x.dim(), name);
    if (x.dim() == 0) {
      rows = x.reshape({1, 1});
    } else {
      TT_CHECK_INDEX(x.size(d) > 0, name, "(): Expected reduction dim ", d, " to have non-zero size.");
      Shape perm;
      for (int64_t k = 0; k < x.dim(); ++k) {
        if (k != d) perm.push_back(k);
        if (k != d || keepdim) out_shape.push_back(k == d ? 1 : x.size(k));
      }
      perm.push_back(d);
      rows = x.permute(perm).contiguous();
      rows = rows.view({rows.numel() / x.size(d), x.size(d)});
    }
  }
  int64_t N = rows.size(0);
  Tensor values = want_values ? Tensor::empty({N}, x.dtype(), x.device()) : Tensor();
  Tensor indices = Tensor::empty({N}, DType::Int64, x.device());
  if (N > 0) reduce_index_kernel[x.device()](is_max, rows, values, indices);
  return {want_values ? values.view(out_shape) : values, indices.view(out_shape)};
}

Tensor cumulative_op(bool is_prod, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  const char* name = is_prod ? "cumprod" : "cumsum";
  int64_t d = wrap_dim(dim, x.dim(), name);
  Tensor in = dtype ? x.to(*dtype) : x;
  DType kernel_out = is_floating(in.dtype()) ? in.dtype() : DType::Int64;
  Tensor out = Tensor::empty(x.shape(), kernel_out, x.device());
  if (x.numel() > 0) cumulative_kernel[x.device()](is_prod, view_around(in, d), out.view(view_around(out, d).shape()));
  return dtype ? out.to(*dtype) : out;
}

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
  int64_t D = shape_numel(normalized_shape);
  return {D == 0 ? 0 : x.numel() / D, D};
}

Tensor norm_param(const Tensor& p, const Tensor& x, const Shape& normalized_shape, const char* op, const char* what) {
  if (!p.defined()) return p;
  check_same_device(op, x, p);
  TT_CHECK(p.shape() == normalized_shape, op, ": Expected ", what, " to be of same shape as normalized_shape, but got ",
           what, " of shape ", shape_str(p.shape()), " and normalized_shape = ", shape_str(normalized_shape));
  return p.to(x.dtype()).contiguous();
}

Shape stats_shape(const Tensor& x, size_t k) {
  Shape s(x.shape().begin(), x.shape().end() - k);
  s.resize(x.shape().size(), 1);
  return s;
}

}  // namespace

Tensor sum(const Tensor& x, const OptDims& dims, bool keepdim, std::optional<DType> dtype) {
  return sum_like(ReduceOp::Sum, x, dims, keepdim, dtype);
}
Tensor prod(const Tensor& x, const OptDims& dims, bool keepdim, std::optional<DType> dtype) {
  return sum_like(ReduceOp::Prod, x, dims, keepdim, dtype);
}
Tensor mean(const Tensor& x, const OptDims& dims, bool keepdim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : x;
  check_floating(in, "mean", "could not infer output dtype. Input dtype must be either a floating point or complex dtype.");
  return run_reduce(ReduceOp::Mean, in, dims, keepdim, in.dtype());
}
Tensor amax(const Tensor& x, const OptDims& dims, bool keepdim) { return minmax(ReduceOp::Amax, x, dims, keepdim); }
Tensor amin(const Tensor& x, const OptDims& dims, bool keepdim) { return minmax(ReduceOp::Amin, x, dims, keepdim); }
Tensor all(const Tensor& x, const OptDims& dims, bool keepdim) {
  return run_reduce(ReduceOp::All, x, dims, keepdim, DType::Bool);
}
Tensor any(const Tensor& x, const OptDims& dims, bool keepdim) {
  return run_reduce(ReduceOp::Any, x, dims, keepdim, DType::Bool);
}
Tensor var(const Tensor& x, const OptDims& dims, double correction, bool keepdim) {
  check_floating(x, "var", "std and var only support floating point and complex dtypes.");
  return run_reduce(ReduceOp::Var, x, dims, keepdim, x.dtype(), correction);
}
Tensor std(const Tensor& x, const OptDims& dims, double correction, bool keepdim) {
  check_floating(x, "std", "std and var only support floating point and complex dtypes.");
  return run_reduce(ReduceOp::Std, x, dims, keepdim, x.dtype(), correction);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const OptDims& dims, double correction, bool keepdim) {
  check_floating(x, "var_mean", "std and var only support floating point and complex dtypes.");
  return {var(x, dims, correction, keepdim), mean(x, dims, keepdim)};
}
Tensor logsumexp(const Tensor& x, const OptDims& dims, bool keepdim) {
  Tensor in = is_floating(x.dtype()) ? x : x.to(DType::Float32);
  return run_reduce(ReduceOp::LogSumExp, in, dims, keepdim, in.dtype());
}
Tensor norm(const Tensor& x, double p, const OptDims& dims, bool keepdim) {
  check_floating(x, "norm", "input dtype should be either floating point or complex.");
  if (std::isinf(p)) check_nonempty_reduce(x, dims, "norm");
  return run_reduce(ReduceOp::Norm, x, dims, keepdim, x.dtype(), p);
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return index_reduce(true, x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return index_reduce(false, x, dim, keepdim, true);
}
Tensor max_all(const Tensor& x) {
  TT_CHECK_INDEX(x.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                 "reduction dim with the 'dim' argument.");
  return run_reduce(ReduceOp::Amax, x, std::nullopt, false, x.dtype());
}
Tensor min_all(const Tensor& x) {
  TT_CHECK_INDEX(x.numel() > 0, "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                 "reduction dim with the 'dim' argument.");
  return run_reduce(ReduceOp::Amin, x, std::nullopt, false, x.dtype());
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(index_reduce(true, x, dim, keepdim, false));
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(index_reduce(false, x, dim, keepdim, false));
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return cumulative_op(false, x, dim, dtype); }
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return cumulative_op(true, x, dim, dtype); }

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
  Shape s = stats_shape(x, normalized_shape.size());
  return {y, mu.view(s), rstd.view(s)};
}

std::tuple<Tensor, Tensor> rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, double eps) {
  auto [N, D] = norm_rows(x, normalized_shape, "rms_norm");
  Tensor w = norm_param(weight, x, normalized_shape, "rms_norm", "weight");
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor rstd = Tensor::empty({N}, opmath_dtype(x.dtype()), x.device());
  if (N > 0 && D > 0) layer_norm_kernel[x.device()](true, x.contiguous().view({N, D}), w, Tensor(), eps, y.view({N, D}), Tensor(), rstd);
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
