#pragma once
// The unary/binary kernel glue shared by the CPU (cpu/elementwise.cpp) and CUDA
// (cuda/src/elementwise.cu, elementwise_binary.cu) backends: the dtype switch, the switch over
// the schema's ops (TT_UNARY_OPS / TT_BINARY_OPS), one functor per (op, dtype) from
// tinytorch/math.h, and the TypeError for a dtype an op does not take. A backend supplies only
// its loops, as a class Loop with
//   template <class Out, class T, class F>
//   static void unary(const Tensor& in, const Tensor& out, const F& f);
//   template <class Out, class T, class F>
//   static void binary(const Tensor& a, const Tensor& b, const Tensor& out, const F& f);
// and registers elementwise_dispatch::unary<Loop> / binary<Loop> (through a plain function).
#include <stdexcept>
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/math.h"

namespace tt::elementwise_dispatch {

// in: any layout, out: in's shape -> out = op(in). One instantiation per (op, dtype).
template <class Loop, UnaryOp op, class T>
void unary_op(const Tensor& in, const Tensor& out, OpScalars s) {
  using F = math::UnaryFn<op, T>;
  if constexpr (!F::kSupported) {
    throw TypeError(str_cat(op_name(op), ": not implemented for integer dtype ", dtype_name(in.dtype()),
                            " (convert to a floating dtype first)"));
  } else {
    Loop::template unary<typename F::Out, T>(in, out, F(s));
  }
}

template <class Loop, class T>
void unary_typed(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  switch (op) {
#define TT_UNARY_CASE(Name, name, cls) \
    case UnaryOp::Name: return unary_op<Loop, UnaryOp::Name, T>(in, out, s);
    TT_UNARY_OPS(TT_UNARY_CASE)
#undef TT_UNARY_CASE
  }
  throw std::runtime_error(str_cat(op_name(op), ": unknown op"));
}

template <class Loop>
void unary(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  if (in.dtype() == DType::Bool) {
    TT_CHECK_TYPE(is_predicate(op), op_name(op), ": not implemented for dtype bool");
    return unary_typed<Loop, uint8_t>(op, in, out, s);  // bool is stored as one byte 0/1
  }
  TT_DISPATCH_NUMERIC(in.dtype(), op_name(op), [&] { unary_typed<Loop, scalar_t>(op, in, out, s); });
}

// a, b: broadcastable to out -> out = op(a, b).
template <class Loop, BinaryOp op, class T>
void binary_op(const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  using F = math::BinaryFn<op, T>;
  if constexpr (!F::kSupported) {
    throw TypeError(str_cat(op_name(op), ": not implemented for dtype ", dtype_name(a.dtype())));
  } else {
    Loop::template binary<typename F::Out, T>(a, b, out, F(s));
  }
}

template <class Loop, class T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  switch (op) {
#define TT_BINARY_CASE(Name, name, cls) \
    case BinaryOp::Name: return binary_op<Loop, BinaryOp::Name, T>(a, b, out, s);
    TT_BINARY_OPS(TT_BINARY_CASE)
#undef TT_BINARY_CASE
  }
  throw std::runtime_error(str_cat(op_name(op), ": unknown op"));
}

template <class Loop>
void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  TT_DISPATCH_ALL(a.dtype(), op_name(op), [&] { binary_typed<Loop, scalar_t>(op, a, b, out, s); });
}

}  // namespace tt::elementwise_dispatch
