// Dropout: argument checks and allocation; the op reserves numel Philox counters from its
// generator and hands (seed, offset) to the kernel, as the random ops do.
#include "tinytorch/ops/dropout.h"
#include "tinytorch/ops/elementwise.h"

namespace tt {

TT_DEFINE_KERNEL(dropout)
TT_DEFINE_KERNEL(masked_scale)

std::pair<Tensor, Tensor> dropout(const Tensor& x, double p, bool train, Generator* gen) {
  TT_CHECK_VALUE(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  TT_CHECK(is_floating(x.dtype()), "dropout: expected a floating point tensor, got ", x.describe());
  if (!train || p == 0) return {x.clone(), full(x.shape(), 1, DType::Bool, x.device())};
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor mask = Tensor::empty(x.shape(), DType::Bool, x.device());
  PhiloxState st = (gen ? *gen : default_generator(x.device())).reserve(x.numel());
  dropout_kernel[x.device()](x.contiguous(), p, y, mask, st);
  return {y, mask};
}

Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double p) {
  TT_CHECK(mask.dtype() == DType::Bool, "dropout_backward: expected a bool mask, got ", mask.describe());
  check_same_device("dropout_backward", grad, mask);
  Shape shape = broadcast_shapes(grad.shape(), mask.shape(), "dropout_backward");
  TT_CHECK(shape == grad.shape(), "dropout_backward: mask ", shape_str(mask.shape()), " does not broadcast to grad ",
           shape_str(grad.shape()));
  Tensor out = Tensor::empty(grad.shape(), grad.dtype(), grad.device());
  masked_scale_kernel[grad.device()](grad, mask, p >= 1 ? 0.0 : 1.0 / (1.0 - p), out);
  return out;
}

}  // namespace tt
