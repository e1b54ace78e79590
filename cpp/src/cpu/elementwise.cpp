// CPU elementwise kernels: unary, binary, where, clamp with tensor bounds, fill.
#include <cmath>
#include "loops.h"
#include "tinytorch/math.h"
#include "tinytorch/kernels/elementwise.h"

namespace tt::cpu {
namespace {

// One instantiation per (op, dtype): the functor from tinytorch/math.h over the strided loop.
template <UnaryOp op, class T>
void unary_op(const Tensor& in, const Tensor& out, OpScalars s) {
  using F = math::UnaryFn<op, T>;
  if constexpr (!F::kSupported) {
    throw TypeError(str_cat(op_name(op), ": not implemented for integer dtype ", dtype_name(in.dtype()),
                            " (convert to a floating dtype first)"));
  } else {
    unary_loop<typename F::Out, T>(in, out, F(s));
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

void cpu_unary(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  if (in.dtype() == DType::Bool) {
    TT_CHECK_TYPE(is_predicate(op), op_name(op), ": not implemented for dtype bool");
    return unary_typed<uint8_t>(op, in, out, s);  // bool is stored as one byte 0/1
  }
  TT_DISPATCH_NUMERIC(in.dtype(), op_name(op), [&] { unary_typed<scalar_t>(op, in, out, s); });
}

template <BinaryOp op, class T>
void binary_op(const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  using F = math::BinaryFn<op, T>;
  if constexpr (!F::kSupported) {
    throw TypeError(str_cat(op_name(op), ": not implemented for dtype ", dtype_name(a.dtype())));
  } else {
    binary_loop<typename F::Out, T>(a, b, out, F(s));
  }
}

template <class T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  switch (op) {
#define TT_BINARY_CASE(Name, name, cls) \
    case BinaryOp::Name: return binary_op<BinaryOp::Name, T>(a, b, out, s);
    TT_BINARY_OPS(TT_BINARY_CASE)
#undef TT_BINARY_CASE
  }
  throw std::runtime_error(str_cat(op_name(op), ": unknown op"));
}

void cpu_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  TT_DISPATCH_ALL(a.dtype(), op_name(op), [&] { binary_typed<scalar_t>(op, a, b, out, s); });
}

void cpu_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  TT_DISPATCH_ALL(out.dtype(), "where", [&] {
    ternary_loop<scalar_t, bool, scalar_t, scalar_t>(cond, a, b, out,
                                                     [](bool c, scalar_t x, scalar_t y) { return c ? x : y; });
  });
}

void cpu_clamp_tensor(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out) {
  TT_DISPATCH_NUMERIC(out.dtype(), "clamp", [&] {
    using T = scalar_t;
    if (lo.defined() && hi.defined()) ternary_loop<T, T, T, T>(x, lo, hi, out, math::ClampFn<T, true, true>());
    else if (lo.defined()) binary_loop<T, T>(x, lo, out, math::ClampFn<T, true, false>());
    else binary_loop<T, T>(x, hi, out, math::ClampFn<T, false, true>());
  });
}

void cpu_fill(const Tensor& out, double value) {
  TT_DISPATCH_ALL(out.dtype(), "fill", [&] {
    const scalar_t v = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(value));
    StridedIter<1> it({&out});
    it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        scalar_t* o = reinterpret_cast<scalar_t*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(unary, CPU, cpu_unary)
TT_REGISTER_KERNEL(binary, CPU, cpu_binary)
TT_REGISTER_KERNEL(where, CPU, cpu_where)
TT_REGISTER_KERNEL(clamp_tensor, CPU, cpu_clamp_tensor)
TT_REGISTER_KERNEL(fill, CPU, cpu_fill)

}  // namespace tt::cpu
