// Reductions and scans: argument checks, dtype choice, and the reshaping that brings every
// call to the kernels' simple contiguous shapes.
#include "tinytorch/ops/reduce.h"
#include "tinytorch/ops/elementwise.h"
#include <algorithm>
#include <cmath>
#include "common.h"

namespace tt {

TT_DEFINE_KERNEL(reduce)
TT_DEFINE_KERNEL(reduce_index)
TT_DEFINE_KERNEL(cumulative)

#define TT_NAME_ENTRY(Name, name) #name,
const char* op_name(ReduceOp op) {
  static const char* names[] = {TT_REDUCE_OPS(TT_NAME_ENTRY)};
  return names[static_cast<int>(op)];
}
#undef TT_NAME_ENTRY

namespace {

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

std::tuple<Tensor, Tensor> index_reduce(bool is_max, const Tensor& x, std::optional<int64_t> dim, bool keepdim,
                                        bool want_values) {
  const char* name = want_values ? (is_max ? "max" : "min") : (is_max ? "argmax" : "argmin");
  Tensor rows;
  Shape out_shape;
  if (!dim) {
    TT_CHECK_INDEX(x.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0.");
    // The kernels (CPU and CUDA) read each row as contiguous memory: a strided or expanded
    // input (diagonal(), expand()) is copied first.
    rows = x.contiguous().view({1, x.numel()});
    if (keepdim) out_shape.assign(x.dim(), 1);
  } else {
    int64_t d = wrap_dim(*dim, x.dim(), name);
    if (x.dim() == 0) {
      rows = x.contiguous().view({1, 1});
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
// all/any of a uint8 tensor are uint8 (PyTorch keeps that legacy rule); of anything else, bool.
Tensor all(const Tensor& x, const OptDims& dims, bool keepdim) {
  Tensor out = run_reduce(ReduceOp::All, x, dims, keepdim, DType::Bool);
  return x.dtype() == DType::UInt8 ? out.to(DType::UInt8) : out;
}
Tensor any(const Tensor& x, const OptDims& dims, bool keepdim) {
  Tensor out = run_reduce(ReduceOp::Any, x, dims, keepdim, DType::Bool);
  return x.dtype() == DType::UInt8 ? out.to(DType::UInt8) : out;
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
  TT_CHECK(x.dtype() != DType::Bool, "argmax(): does not support bool input (", x.describe(), ")");
  return std::get<1>(index_reduce(true, x, dim, keepdim, false));
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  TT_CHECK(x.dtype() != DType::Bool, "argmin(): does not support bool input (", x.describe(), ")");
  return std::get<1>(index_reduce(false, x, dim, keepdim, false));
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return cumulative_op(false, x, dim, dtype); }
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return cumulative_op(true, x, dim, dtype); }

}  // namespace tt
