// Loss ops (nll_loss, cross_entropy): argument checks, output shapes, then the kernels.
#include "tinytorch/ops/loss.h"

namespace tt {

TT_DEFINE_KERNEL(nll_loss)
TT_DEFINE_KERNEL(nll_loss_backward)
TT_DEFINE_KERNEL(cross_entropy)
TT_DEFINE_KERNEL(cross_entropy_backward)

namespace {

Reduction to_reduction(const char* op, int64_t r) {
  TT_CHECK_VALUE(r >= 0 && r <= 2, op, ": reduction must be 0 (none), 1 (mean) or 2 (sum), got ", r);
  return static_cast<Reduction>(r);
}

struct LossGeom {
  Tensor input, target, weight;  // (N, C, S), (N, S) int64, (C) contiguous
  Shape out_shape;               // for Reduction::None
};

LossGeom check_loss(const char* op, const Tensor& input, const Tensor& target, const Tensor& weight) {
  TT_CHECK(input.defined() && target.defined(), op, ": undefined tensor argument");
  check_same_device(op, input, target);
  if (!is_floating(input.dtype())) throw_unsupported_dtype(op, input.dtype());
  TT_CHECK(target.dtype() == DType::Int64 || target.dtype() == DType::Int32, op,
           ": expected target of dtype int64 (class indices), got ", target.describe());
  TT_CHECK(input.dim() >= 1, op, ": input must have at least 1 dim (C), got ", input.describe());
  LossGeom g;
  if (input.dim() == 1) {
    TT_CHECK_VALUE(target.dim() == 0, op, ": 1D input ", input.describe(), " expects a 0D target, got ",
                   target.describe());
    g.input = input.contiguous().view({1, input.size(0), 1});
    g.target = target.to(DType::Int64).contiguous().view({1, 1});
  } else {
    int64_t N = input.size(0), C = input.size(1);
    TT_CHECK_VALUE(target.dim() >= 1 && target.size(0) == N, op, ": Expected input batch_size (", N,
                   ") to match target batch_size (", target.dim() ? target.size(0) : 0, ").");
    Shape expect{N};
    for (int64_t i = 2; i < input.dim(); ++i) expect.push_back(input.size(i));
    TT_CHECK_VALUE(target.shape() == expect, op, ": Expected target size ", shape_str(expect), ", got ",
                   shape_str(target.shape()));
    int64_t S = shape_numel(Shape(expect.begin() + 1, expect.end()));
    g.input = input.contiguous().view({N, C, S});
    g.target = target.to(DType::Int64).contiguous().view({N, S});
  }
  g.out_shape = target.shape();
  if (weight.defined()) {
    check_same_device(op, input, weight);
    int64_t C = g.input.size(1);
    TT_CHECK(weight.dim() == 1 && weight.numel() == C, op, ": weight tensor should be defined either for all ", C,
             " classes or no classes but got weight tensor of shape: ", shape_str(weight.shape()));
    TT_CHECK(weight.dtype() == input.dtype(), op, ": expected weight dtype ", dtype_name(input.dtype()), ", got ",
             dtype_name(weight.dtype()));
    g.weight = weight.contiguous();
  }
  return g;
}

void check_loss_grad(const char* op, const Tensor& grad_out, const LossGeom& g, Reduction r) {
  TT_CHECK(grad_out.defined(), op, ": undefined grad_output");
  if (r == Reduction::None)
    TT_CHECK(grad_out.shape() == g.out_shape, op, ": grad_output ", grad_out.describe(), " should have shape ",
             shape_str(g.out_shape));
  else
    TT_CHECK(grad_out.numel() == 1, op, ": grad_output of a reduced loss must have one element, got ",
             grad_out.describe());
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  Reduction r = to_reduction("nll_loss", reduction);
  LossGeom g = check_loss("nll_loss", input, target, weight);
  Tensor out = Tensor::empty(r == Reduction::None ? g.out_shape : Shape{}, input.dtype(), input.device());
  nll_loss_kernel[input.device()](g.input, g.target, g.weight, out, r, ignore_index);
  return out;
}

Tensor nll_loss_backward(const Tensor& grad_out, const Tensor& input, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index) {
  Reduction r = to_reduction("nll_loss_backward", reduction);
  LossGeom g = check_loss("nll_loss_backward", input, target, weight);
  check_loss_grad("nll_loss_backward", grad_out, g, r);
  Tensor gi = Tensor::empty(input.shape(), input.dtype(), input.device());
  Tensor go = r == Reduction::None ? grad_out.to(input.dtype()).contiguous().view(g.target.shape())
                                   : grad_out.to(input.dtype()).contiguous().view({});
  nll_loss_backward_kernel[input.device()](go, g.target, g.weight, gi.view(g.input.shape()), r, ignore_index);
  return gi;
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, double label_smoothing, std::optional<DType> dtype) {
  Reduction r = to_reduction("cross_entropy", reduction);
  TT_CHECK_VALUE(label_smoothing >= 0.0 && label_smoothing <= 1.0,
                 "cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  LossGeom g = check_loss("cross_entropy", logits, target, weight);
  DType out_dtype = dtype.value_or(logits.dtype());
  TT_CHECK(is_floating(out_dtype), "cross_entropy: dtype must be a floating dtype, got ", dtype_name(out_dtype));
  Tensor out = Tensor::empty(r == Reduction::None ? g.out_shape : Shape{}, out_dtype, logits.device());
  cross_entropy_kernel[logits.device()](g.input, g.target, g.weight, out, r, ignore_index, label_smoothing);
  return out;
}

Tensor cross_entropy_backward(const Tensor& grad_out, const Tensor& logits, const Tensor& target,
                              const Tensor& weight, int64_t reduction, int64_t ignore_index,
                              double label_smoothing) {
  Reduction r = to_reduction("cross_entropy_backward", reduction);
  TT_CHECK_VALUE(label_smoothing >= 0.0 && label_smoothing <= 1.0,
                 "cross_entropy_backward: label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  LossGeom g = check_loss("cross_entropy_backward", logits, target, weight);
  check_loss_grad("cross_entropy_backward", grad_out, g, r);
  Tensor gi = Tensor::empty(logits.shape(), logits.dtype(), logits.device());
  Tensor go = r == Reduction::None ? grad_out.to(DType::Float64).contiguous().view(g.target.shape())
                                   : grad_out.to(DType::Float64).contiguous().view({});
  cross_entropy_backward_kernel[logits.device()](go, g.input, g.target, g.weight, gi.view(g.input.shape()), r,
                                                 ignore_index, label_smoothing);
  return gi;
}

}  // namespace tt
