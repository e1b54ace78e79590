// Pooling ops: argument checks, output shapes, then the kernels.
#include "tinytorch/ops/pool.h"

namespace tt {

TT_DEFINE_KERNEL(max_pool2d)
TT_DEFINE_KERNEL(max_pool2d_backward)
TT_DEFINE_KERNEL(avg_pool2d)
TT_DEFINE_KERNEL(avg_pool2d_backward)
TT_DEFINE_KERNEL(adaptive_avg_pool2d)
TT_DEFINE_KERNEL(adaptive_avg_pool2d_backward)

namespace {

// PyTorch's pooling_output_shape: floor or ceil, and a last window must start inside the
// input or its left padding.
int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * pad - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

void check_float_input(const char* op, const Tensor& x) {
  TT_CHECK(x.defined(), op, ": undefined input");
  if (!is_floating(x.dtype())) throw_unsupported_dtype(op, x.dtype());
  TT_CHECK(x.dim() == 3 || x.dim() == 4, op, ": Expected 3D or 4D (batch mode) tensor for input, got ",
           x.describe());
}

// (B, C, H, W) or (C, H, W) -> planes (P, H, W) view of a contiguous copy.
Tensor as_planes(const Tensor& x) {
  int64_t d = x.dim();
  return x.contiguous().view({-1, x.size(d - 2), x.size(d - 1)});
}

Shape with_hw(const Shape& s, int64_t h, int64_t w) {
  Shape r = s;
  r[r.size() - 2] = h, r[r.size() - 1] = w;
  return r;
}

Pool2dParams pool_params(const char* op, Pair2 kernel, std::optional<Pair2> stride, Pair2 padding, Pair2 dilation,
                         bool ceil_mode) {
  Pair2 s = stride.value_or(kernel);
  if (s[0] == 0 && s[1] == 0) s = kernel;  // PyTorch treats an empty stride as "= kernel"
  for (int i = 0; i < 2; ++i) {
    TT_CHECK(kernel[i] > 0, op, ": kernel size should be greater than zero, but got kH: ", kernel[0],
             " kW: ", kernel[1]);
    TT_CHECK(s[i] > 0, op, ": stride should be greater than zero, but got dH: ", s[0], " dW: ", s[1]);
    TT_CHECK(dilation[i] > 0, op, ": dilation should be greater than zero, but got dilationH: ", dilation[0],
             " dilationW: ", dilation[1]);
    TT_CHECK(padding[i] >= 0 && padding[i] <= kernel[i] / 2, op,
             ": pad should be at most half of effective kernel size, but got pad=", padding[i], ", kernel_size=",
             kernel[i], " and dilation=", dilation[i]);
  }
  Pool2dParams p;
  p.kh = kernel[0], p.kw = kernel[1], p.sh = s[0], p.sw = s[1], p.ph = padding[0], p.pw = padding[1];
  p.dh = dilation[0], p.dw = dilation[1], p.ceil_mode = ceil_mode;
  return p;
}

std::pair<int64_t, int64_t> pool_out_hw(const char* op, const Shape& in, const Pool2dParams& p) {
  int64_t H = in[in.size() - 2], W = in[in.size() - 1];
  int64_t Ho = pool_out(H, p.kh, p.ph, p.sh, p.dh, p.ceil_mode), Wo = pool_out(W, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  TT_CHECK(Ho >= 1 && Wo >= 1, op, ": Given input size: (", shape_str(in), "). Calculated output size: (", Ho, "x",
           Wo, "). Output size is too small");
  return {Ho, Wo};
}

void check_grad_shape(const char* op, const Tensor& g, const Shape& expect) {
  TT_CHECK(g.defined() && g.shape() == expect, op, ": grad_output ", g.defined() ? g.describe() : "undefined",
           " should have shape ", shape_str(expect));
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x, Pair2 kernel, std::optional<Pair2> stride, Pair2 padding,
                                      Pair2 dilation, bool ceil_mode) {
  check_float_input("max_pool2d", x);
  Pool2dParams p = pool_params("max_pool2d", kernel, stride, padding, dilation, ceil_mode);
  auto [Ho, Wo] = pool_out_hw("max_pool2d", x.shape(), p);
  Shape os = with_hw(x.shape(), Ho, Wo);
  Tensor out = Tensor::empty(os, x.dtype(), x.device()), idx = Tensor::empty(os, DType::Int64, x.device());
  if (out.numel() > 0)
    max_pool2d_kernel[x.device()](as_planes(x), out.view({-1, Ho, Wo}), idx.view({-1, Ho, Wo}), p);
  return {out, idx};
}

Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, const Shape& input_shape) {
  TT_CHECK(input_shape.size() == 3 || input_shape.size() == 4, "max_pool2d_backward: input_shape must be 3-D or "
           "4-D, got ", shape_str(input_shape));
  TT_CHECK(grad_out.defined() && indices.defined() && indices.dtype() == DType::Int64 &&
               grad_out.shape() == indices.shape() && grad_out.dim() == static_cast<int64_t>(input_shape.size()),
           "max_pool2d_backward: grad_output ", grad_out.describe(), " and int64 indices ",
           indices.defined() ? indices.describe() : "undefined", " must share a shape matching input ",
           shape_str(input_shape));
  check_same_device("max_pool2d_backward", grad_out, indices);
  int64_t d = grad_out.dim();
  for (int64_t i = 0; i < d - 2; ++i)
    TT_CHECK(grad_out.size(i) == input_shape[i], "max_pool2d_backward: grad_output ", grad_out.describe(),
             " does not match input shape ", shape_str(input_shape));
  Tensor gx = Tensor::empty(input_shape, grad_out.dtype(), grad_out.device());
  if (gx.numel() == 0) return gx;
  int64_t H = input_shape[d - 2], W = input_shape[d - 1];
  max_pool2d_backward_kernel[gx.device()](as_planes(grad_out), as_planes(indices), gx.view({-1, H, W}));
  return gx;
}

Tensor avg_pool2d(const Tensor& x, Pair2 kernel, std::optional<Pair2> stride, Pair2 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  check_float_input("avg_pool2d", x);
  Pool2dParams p = pool_params("avg_pool2d", kernel, stride, padding, {1, 1}, ceil_mode);
  p.count_include_pad = count_include_pad;
  if (divisor_override) {
    TT_CHECK(*divisor_override != 0, "avg_pool2d: divisor must be not zero");
    p.divisor_override = *divisor_override;
  }
  auto [Ho, Wo] = pool_out_hw("avg_pool2d", x.shape(), p);
  Tensor out = Tensor::empty(with_hw(x.shape(), Ho, Wo), x.dtype(), x.device());
  if (out.numel() > 0) avg_pool2d_kernel[x.device()](as_planes(x), out.view({-1, Ho, Wo}), p);
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_out, const Shape& input_shape, Pair2 kernel,
                           std::optional<Pair2> stride, Pair2 padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  TT_CHECK(input_shape.size() == 3 || input_shape.size() == 4, "avg_pool2d_backward: input_shape must be 3-D or "
           "4-D, got ", shape_str(input_shape));
  Pool2dParams p = pool_params("avg_pool2d_backward", kernel, stride, padding, {1, 1}, ceil_mode);
  p.count_include_pad = count_include_pad;
  if (divisor_override) {
    TT_CHECK(*divisor_override != 0, "avg_pool2d_backward: divisor must be not zero");
    p.divisor_override = *divisor_override;
  }
  auto [Ho, Wo] = pool_out_hw("avg_pool2d_backward", input_shape, p);
  check_grad_shape("avg_pool2d_backward", grad_out, with_hw(input_shape, Ho, Wo));
  if (!is_floating(grad_out.dtype())) throw_unsupported_dtype("avg_pool2d_backward", grad_out.dtype());
  int64_t d = static_cast<int64_t>(input_shape.size());
  Tensor gx = Tensor::empty(input_shape, grad_out.dtype(), grad_out.device());
  if (gx.numel() > 0)
    avg_pool2d_backward_kernel[gx.device()](as_planes(grad_out), gx.view({-1, input_shape[d - 2], input_shape[d - 1]}),
                                            p);
  return gx;
}

Tensor adaptive_avg_pool2d(const Tensor& x, Pair2 output_size) {
  check_float_input("adaptive_avg_pool2d", x);
  TT_CHECK(output_size[0] >= 0 && output_size[1] >= 0, "adaptive_avg_pool2d: output_size must be non-negative, "
           "got ", output_size[0], "x", output_size[1]);
  for (int64_t i = 0; i < x.dim() - 2; ++i)
    TT_CHECK(x.size(i) > 0, "adaptive_avg_pool2d: Expected input to have non-zero size for non-batch dimensions, "
             "but input has sizes ", shape_str(x.shape()));
  Tensor out = Tensor::empty(with_hw(x.shape(), output_size[0], output_size[1]), x.dtype(), x.device());
  if (out.numel() > 0) {
    TT_CHECK(x.size(x.dim() - 2) > 0 && x.size(x.dim() - 1) > 0, "adaptive_avg_pool2d: empty spatial input ",
             x.describe());
    adaptive_avg_pool2d_kernel[x.device()](as_planes(x), out.view({-1, output_size[0], output_size[1]}));
  }
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_out, const Shape& input_shape) {
  TT_CHECK(grad_out.defined() && grad_out.dim() == static_cast<int64_t>(input_shape.size()) &&
               (grad_out.dim() == 3 || grad_out.dim() == 4),
           "adaptive_avg_pool2d_backward: grad_output must be 3-D or 4-D matching input ", shape_str(input_shape));
  int64_t d = grad_out.dim();
  check_grad_shape("adaptive_avg_pool2d_backward", grad_out,
                   with_hw(input_shape, grad_out.size(d - 2), grad_out.size(d - 1)));
  if (!is_floating(grad_out.dtype())) throw_unsupported_dtype("adaptive_avg_pool2d_backward", grad_out.dtype());
  Tensor gx = Tensor::empty(input_shape, grad_out.dtype(), grad_out.device());
  if (gx.numel() > 0)
    adaptive_avg_pool2d_backward_kernel[gx.device()](as_planes(grad_out),
                                                     gx.view({-1, input_shape[d - 2], input_shape[d - 1]}));
  return gx;
}

}  // namespace tt
