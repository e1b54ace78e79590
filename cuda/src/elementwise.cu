// CUDA unary ops, where, and clamp with tensor bounds. The formulas are the CPU's: one
// functor per op from tinytorch/math.h, run by the strided/vectorized loops of loops.cuh.
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/math.h"

namespace tt::cuda {
namespace {

// in: any layout, out: in's shape -> out = op(in). One kernel per (op, dtype).
template <UnaryOp op, class T>
void unary_op(const Tensor& in, const Tensor& out, OpScalars s) {
  using F = math::UnaryFn<op, T>;
  if constexpr (!F::kSupported) {
    throw TypeError(str_cat(op_name(op), ": not implemented for integer dtype ", dtype_name(in.dtype()),
                            " (convert to a floating dtype first)"));
  } else {
    gpu_unary<typename F::Out, T>(in, out, F(s));
  }
}

template <class T>
void unary_typed(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  switch (op) {
#define TT_UNARY_CASE(Name, name, cls) \
    case UnaryOp::Name: return unary_op<UnaryOp::Name, T>(in, out, s);
    TT_UNARY_OPS(TT_UNARY_CASE)
#undef TT_UNARY_CASE
  }
  throw std::runtime_error(str_cat(op_name(op), ": unknown op"));
}

void cuda_unary(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  if (in.dtype() == DType::Bool) {
    TT_CHECK_TYPE(is_predicate(op), op_name(op), ": not implemented for dtype bool");
    return unary_typed<uint8_t>(op, in, out, s);  // bool is stored as one byte 0/1
  }
  TT_DISPATCH_NUMERIC(in.dtype(), op_name(op), [&] { unary_typed<scalar_t>(op, in, out, s); });
}

template <class T>
struct WhereFn {
  __device__ __forceinline__ T operator()(bool c, T x, T y) const { return c ? x : y; }
};

// cond: bool, a, b: broadcastable to out -> out = cond ? a : b.
void cuda_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  TT_DISPATCH_ALL(out.dtype(), "where",
                  [&] { gpu_ternary<scalar_t, bool, scalar_t, scalar_t>(cond, a, b, out, WhereFn<scalar_t>{}); });
}

// x, lo, hi (either bound may be undefined): broadcastable to out -> out = clamp(x, lo, hi).
void cuda_clamp_tensor(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out) {
  TT_DISPATCH_NUMERIC(out.dtype(), "clamp", [&] {
    using T = scalar_t;
    if (lo.defined() && hi.defined()) gpu_ternary<T, T, T, T>(x, lo, hi, out, math::ClampFn<T, true, true>());
    else if (lo.defined()) gpu_binary<T, T, T>(x, lo, out, math::ClampFn<T, true, false>());
    else gpu_binary<T, T, T>(x, hi, out, math::ClampFn<T, false, true>());
  });
}

}  // namespace

TT_REGISTER_KERNEL(unary, CUDA, cuda_unary)
TT_REGISTER_KERNEL(where, CUDA, cuda_where)
TT_REGISTER_KERNEL(clamp_tensor, CUDA, cuda_clamp_tensor)

}  // namespace tt::cuda
