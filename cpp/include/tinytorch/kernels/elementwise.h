#pragma once
// Elementwise kernel families. Kernels receive validated operands: out allocated with the
// broadcast shape, inputs broadcastable to it, inputs already cast to the compute dtype.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// Scalar parameters some ops take (leaky slope, softplus beta/threshold, clamp bounds, ...).
struct OpScalars {
  double a = 0, b = 0;
};

#define TT_UNARY_OPS(X)                                                                     \
  X(Neg, neg) X(Abs, abs) X(Sign, sign) X(Exp, exp) X(Log, log) X(Log1p, log1p)             \
  X(Expm1, expm1) X(Sqrt, sqrt) X(Rsqrt, rsqrt) X(Sin, sin) X(Cos, cos) X(Tanh, tanh)       \
  X(Sigmoid, sigmoid) X(Relu, relu) X(Gelu, gelu) X(GeluTanh, gelu_tanh) X(Silu, silu)      \
  X(Softplus, softplus) /* a=beta b=threshold */ X(LeakyRelu, leaky_relu) /* a=slope */     \
  X(Elu, elu) /* a=alpha */ X(Mish, mish) X(Hardswish, hardswish)                           \
  X(Erf, erf) X(Reciprocal, reciprocal) X(Square, square) X(LogicalNot, logical_not)        \
  X(Floor, floor) X(Ceil, ceil) X(Round, round) X(Trunc, trunc) X(Log2, log2) X(Log10, log10) \
  X(Exp2, exp2) X(Tan, tan) X(Asin, asin) X(Acos, acos) X(Atan, atan) X(Sinh, sinh) X(Cosh, cosh) \
  X(ClampMin, clamp_min) /* a=min */ X(ClampMax, clamp_max) /* a=max */                     \
  X(Clamp, clamp) /* a=min b=max */ X(PowScalar, pow_scalar) /* x**a */                     \
  X(RPowScalar, rpow_scalar) /* a**x */ X(IsNan, isnan) X(IsInf, isinf) X(IsFinite, isfinite)

#define TT_BINARY_OPS(X)                                                                    \
  X(Add, add) /* a + alpha*b, alpha in scalars.a */ X(Sub, sub) X(Mul, mul) X(Div, div)     \
  X(Pow, pow) X(Maximum, maximum) X(Minimum, minimum) X(Remainder, remainder)               \
  X(FloorDivide, floor_divide) X(Atan2, atan2)                                              \
  X(Eq, eq) X(Ne, ne) X(Lt, lt) X(Le, le) X(Gt, gt) X(Ge, ge)                               \
  X(LogicalAnd, logical_and) X(LogicalOr, logical_or) X(LogicalXor, logical_xor)            \
  X(BitwiseAnd, bitwise_and) X(BitwiseOr, bitwise_or) X(BitwiseXor, bitwise_xor)            \
  /* fused activation backwards: (grad, saved) -> grad_in */                                \
  X(ReluBackward, relu_backward) /* saved = output */                                       \
  X(SigmoidBackward, sigmoid_backward) /* saved = output */                                 \
  X(TanhBackward, tanh_backward) /* saved = output */                                       \
  X(GeluBackward, gelu_backward) /* saved = input */                                        \
  X(GeluTanhBackward, gelu_tanh_backward) X(SiluBackward, silu_backward)                    \
  X(SoftplusBackward, softplus_backward) /* a=beta b=threshold */                           \
  X(LeakyReluBackward, leaky_relu_backward) /* a=slope */                                   \
  X(EluBackward, elu_backward) /* a=alpha, saved = input */                                 \
  X(MishBackward, mish_backward) X(HardswishBackward, hardswish_backward)

#define TT_ENUM_ENTRY(Name, name) Name,
enum class UnaryOp { TT_UNARY_OPS(TT_ENUM_ENTRY) };
enum class BinaryOp { TT_BINARY_OPS(TT_ENUM_ENTRY) };
#undef TT_ENUM_ENTRY

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
bool is_comparison(BinaryOp op);  // result is bool
bool is_logical(BinaryOp op);     // inputs may be any dtype, result is bool

// out = op(in); in and out have the same dtype, except predicates (isnan...) write bool.
TT_DECLARE_KERNEL(unary, UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s)
// out = op(a, b); a and b share a dtype, out has it too or is bool (comparisons, logical).
TT_DECLARE_KERNEL(binary, BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s)
// out = cond ? a : b; cond bool, a/b/out one dtype.
TT_DECLARE_KERNEL(where, const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out)
// out = clamp(x, lo, hi) with tensor bounds (either may be undefined).
TT_DECLARE_KERNEL(clamp_tensor, const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out)
// dst = src, casting dtypes; src broadcastable to dst; any layouts. Same device.
TT_DECLARE_KERNEL(copy, const Tensor& src, const Tensor& dst)
// Copy between devices (registered by the CUDA backend).
TT_DECLARE_KERNEL(copy_across_devices, const Tensor& src, const Tensor& dst, bool non_blocking)
// out[...] = value
TT_DECLARE_KERNEL(fill, const Tensor& out, double value)

}  // namespace tt
