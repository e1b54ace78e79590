// Gradient clipping over tensor lists: argument checks, then one multi-tensor kernel call.
#include "tinytorch/ops/grad_clip.h"
#include "tinytorch/kernels/grad_clip.h"

namespace tt {

TT_DEFINE_KERNEL(multi_sum_squares)
TT_DEFINE_KERNEL(multi_scale)

namespace {

DType accumulation_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

void check_list(const char* op, const std::vector<Tensor>& xs) {
  TT_CHECK(!xs.empty(), op, ": expected a non-empty list of tensors");
  const Tensor& x0 = xs[0];
  TT_CHECK_TYPE(is_floating(x0.dtype()), op, ": expected floating tensors, got ", x0.describe());
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    TT_CHECK_TYPE(x.dtype() == x0.dtype(), op, ": expected tensors of one dtype, got ", x0.describe(), " and ",
                  x.describe(), " (tensor ", i, ")");
    TT_CHECK(x.device() == x0.device(), op, ": expected tensors on one device, got ", x0.describe(), " and ",
             x.describe(), " (tensor ", i, ")");
    TT_CHECK(x.is_contiguous(), op, ": expected contiguous tensors, got ", x.describe(), " (tensor ", i, ")");
  }
}

}  // namespace

Tensor multi_sum_squares(const std::vector<Tensor>& xs) {
  check_list("multi_sum_squares", xs);
  Tensor sums = Tensor::empty({int64_t(xs.size())}, accumulation_dtype(xs[0].dtype()), xs[0].device());
  multi_sum_squares_kernel[sums.device()](xs, sums);
  return sums;
}

void multi_scale_(const std::vector<Tensor>& xs, const Tensor& coef) {
  const char* op = "multi_scale_";
  check_list(op, xs);
  TT_CHECK(coef.numel() == 1 && is_floating(coef.dtype()), op, ": coef must be a one-element floating tensor, got ",
           coef.describe());
  TT_CHECK(coef.device() == xs[0].device(), op, ": coef ", coef.describe(), " must be on the tensors' device ",
           xs[0].device().str());
  multi_scale_kernel[coef.device()](xs, coef.to(accumulation_dtype(xs[0].dtype())).contiguous());
  for (const Tensor& x : xs) x.bump_version();
}

}  // namespace tt
