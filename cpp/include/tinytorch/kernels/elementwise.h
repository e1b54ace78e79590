#pragma once
// Elementwise kernel families. Kernels receive validated operands: out allocated with the
// broadcast shape, inputs broadcastable to it, inputs already cast to the compute dtype.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"
#include "tinytorch/kernels/elementwise_ops.h"

namespace tt {

// Scalar parameters some ops take (leaky slope, softplus beta/threshold, clamp bounds, ...).
struct OpScalars {
  double a = 0, b = 0;
};

// The op lists TT_UNARY_OPS / TT_BINARY_OPS come from the op schema (codegen/ops.py).
#define TT_ENUM_ENTRY(Name, name, cls) Name,
enum class UnaryOp { TT_UNARY_OPS(TT_ENUM_ENTRY) };
enum class BinaryOp { TT_BINARY_OPS(TT_ENUM_ENTRY) };
#undef TT_ENUM_ENTRY

// Which dtypes an op takes and returns: each schema row names its class.
enum class UnaryClass {
  Floating,   // integer inputs compute in float32
  FloatOnly,  // floating inputs only: integer and bool inputs raise (activations, as PyTorch)
  Integral,   // integer inputs keep their dtype; bool is rejected
  Predicate,  // any dtype in, bool out
};
enum class BinaryClass {
  Arith,       // integers keep their dtype; bool rejected
  ArithBool,   // as Arith, and bool works too (or/and/max/min of 0/1)
  TrueDivide,  // integers divide in float32
  Floating,    // integer inputs compute in float32
  Compare,     // bool out
  Logical,     // any dtype in, bool out
  Bitwise,     // integers and bool only
};

constexpr UnaryClass op_class(UnaryOp op) {
#define TT_CLASS_ENTRY(Name, name, cls) UnaryClass::cls,
  constexpr UnaryClass classes[] = {TT_UNARY_OPS(TT_CLASS_ENTRY)};
#undef TT_CLASS_ENTRY
  return classes[static_cast<int>(op)];
}
constexpr BinaryClass op_class(BinaryOp op) {
#define TT_CLASS_ENTRY(Name, name, cls) BinaryClass::cls,
  constexpr BinaryClass classes[] = {TT_BINARY_OPS(TT_CLASS_ENTRY)};
#undef TT_CLASS_ENTRY
  return classes[static_cast<int>(op)];
}
constexpr bool is_predicate(UnaryOp op) { return op_class(op) == UnaryClass::Predicate; }
constexpr bool is_comparison(BinaryOp op) {  // result is bool
  return op_class(op) == BinaryClass::Compare || op_class(op) == BinaryClass::Logical;
}

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);

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
