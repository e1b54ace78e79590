// batch_norm forward/backward: argument checks, dtypes, and the (N, C, L) views the fused
// kernels take (one pass set per channel instead of the ~10 elementwise/reduce ops of the
// composite form).
#include "common.h"
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/norm.h"

namespace tt {

TT_DEFINE_KERNEL(batch_norm)
TT_DEFINE_KERNEL(batch_norm_backward)

namespace {

DType stat_dtype(DType d) { return (d == DType::Float16 || d == DType::BFloat16) ? DType::Float32 : d; }

// x: (N, C, *) -> the contiguous (N, C, L) view.
Tensor ncl(const Tensor& x) {
  int64_t L = 1;
  for (int64_t d = 2; d < x.dim(); ++d) L *= x.size(d);
  return x.contiguous().view({x.size(0), x.size(1), L});
}

// A per-channel tensor (C elements, any shape) as a contiguous (C) tensor of dtype dt.
Tensor channel_param(const Tensor& t, const Tensor& x, DType dt, const char* op, const char* what) {
  if (!t.defined()) return t;
  check_same_device(op, t, x);
  TT_CHECK(t.numel() == x.size(1), op, ": ", what, " ", t.describe(), " must have ", x.size(1),
           " elements (the channels of input ", x.describe(), ")");
  return t.to(dt).contiguous().view({x.size(1)});
}

void check_input(const Tensor& x, const char* op) {
  TT_CHECK(x.defined(), op, ": undefined input");
  check_floating(x, op, "expected a floating point input.");
  TT_CHECK(x.dim() >= 2, op, ": expected (N, C, *) input, got ", x.describe());
  TT_CHECK(batch_norm_kernel.has(x.device().type), op, ": no kernel for device of ", x.describe());
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                                      const Tensor& running_mean, const Tensor& running_var,
                                                      bool training, double eps) {
  const char* op = "batch_norm";
  check_input(x, op);
  int64_t C = x.size(1);
  DType st = stat_dtype(x.dtype());
  Tensor w = channel_param(weight, x, x.dtype(), op, "weight");
  Tensor b = channel_param(bias, x, x.dtype(), op, "bias");
  Tensor mean, var;
  if (training) {
    TT_CHECK_VALUE(x.numel() / std::max<int64_t>(C, 1) > 1 || x.numel() == 0, "Expected more than 1 value per ",
                   "channel when training, got input size ", shape_str(x.shape()));
    mean = Tensor::empty({C}, st, x.device()), var = Tensor::empty({C}, st, x.device());
  } else {
    TT_CHECK(running_mean.defined() && running_var.defined(), op,
             ": running_mean and running_var must be defined in evaluation mode");
    mean = channel_param(running_mean, x, st, op, "running_mean");
    var = channel_param(running_var, x, st, op, "running_var");
  }
  Tensor invstd = Tensor::empty({C}, st, x.device());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (x.numel() > 0) batch_norm_kernel[x.device()](ncl(x), w, b, eps, training, y.view({x.size(0), C, x.numel() / (x.size(0) * C)}), mean, var, invstd);
  return {y, mean, var, invstd};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                                       const Tensor& invstd, const Tensor& weight, bool training,
                                                       std::array<bool, 3> needs) {
  const char* op = "batch_norm_backward";
  check_input(x, op);
  TT_CHECK(grad_y.defined() && grad_y.shape() == x.shape(), op, ": grad ", grad_y.describe(), " and input ",
           x.describe(), " must have the same shape");
  check_same_device(op, grad_y, x);
  DType st = stat_dtype(x.dtype());
  Tensor m = channel_param(mean, x, st, op, "mean"), is = channel_param(invstd, x, st, op, "invstd");
  TT_CHECK(m.defined() && is.defined(), op, ": mean and invstd must be defined");
  Tensor w = channel_param(weight, x, x.dtype(), op, "weight");
  int64_t C = x.size(1);
  Tensor gx = needs[0] ? Tensor::empty(x.shape(), x.dtype(), x.device()) : Tensor();
  Tensor gw = needs[1] && weight.defined() ? Tensor::empty({C}, x.dtype(), x.device()) : Tensor();
  Tensor gb = needs[2] ? Tensor::empty({C}, x.dtype(), x.device()) : Tensor();
  if (x.numel() > 0) {
    batch_norm_backward_kernel[x.device()](ncl(grad_y.to(x.dtype())), ncl(x), m, is, w, training,
                                           gx.defined() ? gx.view({x.size(0), C, x.numel() / (x.size(0) * C)}) : gx, gw, gb);
  } else {  // sums over no elements
    if (gw.defined()) fill_(gw, 0);
    if (gb.defined()) fill_(gb, 0);
  }
  if (gw.defined() && weight.defined()) gw = gw.view(weight.shape());
  return {gx, gw, gb};
}

}  // namespace tt
