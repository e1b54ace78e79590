// CPU elementwise kernels: unary, binary, where, clamp with tensor bounds, fill.
#include <cmath>
#include "loops.h"
#include "math.h"
#include "tinytorch/kernels/elementwise.h"

namespace tt::cpu {
namespace {

template <class T>
void unary_float(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  using M = opmath_t<T>;
  const M a = M(s.a), b = M(s.b);
  auto run = [&](auto f) { unary_loop<T, T>(in, out, [f](T x) { return f(M(x)); }); };
  switch (op) {
    case UnaryOp::Neg: return run([](M x) { return -x; });
    case UnaryOp::Abs: return run([](M x) { return std::abs(x); });
    case UnaryOp::Sign: return run([](M x) { return math::sign(x); });
    case UnaryOp::Exp: return run([](M x) { return std::exp(x); });
    case UnaryOp::Log: return run([](M x) { return std::log(x); });
    case UnaryOp::Log1p: return run([](M x) { return std::log1p(x); });
    case UnaryOp::Expm1: return run([](M x) { return std::expm1(x); });
    case UnaryOp::Sqrt: return run([](M x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt: return run([](M x) { return M(1) / std::sqrt(x); });
    case UnaryOp::Sin: return run([](M x) { return std::sin(x); });
    case UnaryOp::Cos: return run([](M x) { return std::cos(x); });
    case UnaryOp::Tan: return run([](M x) { return std::tan(x); });
    case UnaryOp::Asin: return run([](M x) { return std::asin(x); });
    case UnaryOp::Acos: return run([](M x) { return std::acos(x); });
    case UnaryOp::Atan: return run([](M x) { return std::atan(x); });
    case UnaryOp::Sinh: return run([](M x) { return std::sinh(x); });
    case UnaryOp::Cosh: return run([](M x) { return std::cosh(x); });
    case UnaryOp::Tanh: return run([](M x) { return std::tanh(x); });
    case UnaryOp::Sigmoid: return run([](M x) { return math::sigmoid(x); });
    case UnaryOp::Relu: return run([](M x) { return x > M(0) ? x : M(0); });
    case UnaryOp::Gelu: return run([](M x) { return math::gelu(x); });
    case UnaryOp::GeluTanh: return run([](M x) { return math::gelu_tanh(x); });
    case UnaryOp::Silu: return run([](M x) { return math::silu(x); });
    case UnaryOp::Softplus: return run([a, b](M x) { return math::softplus(x, a, b); });
    case UnaryOp::LeakyRelu: return run([a](M x) { return x > M(0) ? x : x * a; });
    case UnaryOp::Elu: return run([a](M x) { return x > M(0) ? x : a * std::expm1(x); });
    case UnaryOp::Mish: return run([](M x) { return math::mish(x); });
    case UnaryOp::Hardswish: return run([](M x) { return math::hardswish(x); });
    case UnaryOp::Erf: return run([](M x) { return std::erf(x); });
    case UnaryOp::Reciprocal: return run([](M x) { return M(1) / x; });
    case UnaryOp::Square: return run([](M x) { return x * x; });
    case UnaryOp::Floor: return run([](M x) { return std::floor(x); });
    case UnaryOp::Ceil: return run([](M x) { return std::ceil(x); });
    case UnaryOp::Round: return run([](M x) { return std::nearbyint(x); });
    case UnaryOp::Trunc: return run([](M x) { return std::trunc(x); });
    case UnaryOp::Log2: return run([](M x) { return std::log2(x); });
    case UnaryOp::Log10: return run([](M x) { return std::log10(x); });
    case UnaryOp::Exp2: return run([](M x) { return std::exp2(x); });
    case UnaryOp::ClampMin: return run([a](M x) { return std::isnan(x) ? x : (x < a ? a : x); });
    case UnaryOp::ClampMax: return run([a](M x) { return std::isnan(x) ? x : (x > a ? a : x); });
    case UnaryOp::Clamp: return run([a, b](M x) { return std::isnan(x) ? x : std::min(std::max(x, a), b); });
    case UnaryOp::PowScalar:
      if (s.a == 2.0) return run([](M x) { return x * x; });
      if (s.a == 0.5) return run([](M x) { return std::sqrt(x); });
      return run([a](M x) { return std::pow(x, a); });
    case UnaryOp::RPowScalar: return run([a](M x) { return std::pow(a, x); });
    case UnaryOp::IsNan: return unary_loop<bool, T>(in, out, [](T x) { return std::isnan(M(x)); });
    case UnaryOp::IsInf: return unary_loop<bool, T>(in, out, [](T x) { return std::isinf(M(x)); });
    case UnaryOp::IsFinite: return unary_loop<bool, T>(in, out, [](T x) { return std::isfinite(M(x)); });
    case UnaryOp::LogicalNot: return unary_loop<bool, T>(in, out, [](T x) { return !bool(M(x)); });
    default: throw std::runtime_error(str_cat(op_name(op), ": not defined for floating dtype ", dtype_name(in.dtype())));
  }
}

template <class T>
void unary_integral(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  auto run = [&](auto f) { unary_loop<T, T>(in, out, f); };
  const T a = T(s.a), b = T(s.b);
  switch (op) {
    case UnaryOp::Neg: return run([](T x) { return T(-x); });
    case UnaryOp::Abs: return run([](T x) { return x < 0 ? T(-x) : x; });
    case UnaryOp::Sign: return run([](T x) { return T((T(0) < x) - (x < T(0))); });
    case UnaryOp::Relu: return run([](T x) { return x > 0 ? x : T(0); });
    case UnaryOp::Square: return run([](T x) { return T(x * x); });
    case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round: case UnaryOp::Trunc: return run([](T x) { return x; });
    case UnaryOp::ClampMin: return run([a](T x) { return x < a ? a : x; });
    case UnaryOp::ClampMax: return run([a](T x) { return x > a ? a : x; });
    case UnaryOp::Clamp: return run([a, b](T x) { return std::min(std::max(x, a), b); });
    case UnaryOp::PowScalar: return run([a](T x) { return math::ipow<T>(x, a); });
    case UnaryOp::IsNan: case UnaryOp::IsInf: return unary_loop<bool, T>(in, out, [](T) { return false; });
    case UnaryOp::IsFinite: return unary_loop<bool, T>(in, out, [](T) { return true; });
    case UnaryOp::LogicalNot: return unary_loop<bool, T>(in, out, [](T x) { return !x; });
    default:
      throw TypeError(str_cat(op_name(op), ": not implemented for integer dtype ", dtype_name(in.dtype()),
                              " (convert to a floating dtype first)"));
  }
}

void cpu_unary(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  if (in.dtype() == DType::Bool) {
    TT_CHECK_TYPE(op == UnaryOp::LogicalNot || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite,
                  op_name(op), ": not implemented for dtype bool");
    return unary_integral<uint8_t>(op, in, out, s);  // bool is stored as one byte 0/1
  }
  TT_DISPATCH_NUMERIC(in.dtype(), op_name(op), [&] {
    if constexpr (std::is_integral_v<scalar_t>) unary_integral<scalar_t>(op, in, out, s);
    else unary_float<scalar_t>(op, in, out, s);
  });
}

template <class T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  using M = opmath_t<T>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  auto run = [&](auto f) { binary_loop<T, T>(a, b, out, [f](T x, T y) { return f(M(x), M(y)); }); };
  auto cmp = [&](auto f) { binary_loop<bool, T>(a, b, out, [f](T x, T y) { return f(M(x), M(y)); }); };
  const M alpha = M(s.a), p = M(s.a), q = M(s.b);
  switch (op) {
    case BinaryOp::Add:
      if (s.a == 1.0) return run([](M x, M y) { return x + y; });
      return run([alpha](M x, M y) { return x + alpha * y; });
    case BinaryOp::Sub:
      if (s.a == 1.0) return run([](M x, M y) { return x - y; });
      return run([alpha](M x, M y) { return x - alpha * y; });
    case BinaryOp::Mul: return run([](M x, M y) { return x * y; });
    case BinaryOp::Div: return run([](M x, M y) { return x / y; });
    case BinaryOp::Remainder: return run([](M x, M y) { return math::remainder(x, y); });
    case BinaryOp::FloorDivide: return run([](M x, M y) { return math::floor_divide(x, y); });
    case BinaryOp::Maximum:
      if constexpr (kFloat) return run([](M x, M y) { return (std::isnan(x) || x > y) ? x : y; });
      else return run([](M x, M y) { return x > y ? x : y; });
    case BinaryOp::Minimum:
      if constexpr (kFloat) return run([](M x, M y) { return (std::isnan(x) || x < y) ? x : y; });
      else return run([](M x, M y) { return x < y ? x : y; });
    case BinaryOp::Pow:
      if constexpr (kFloat) return run([](M x, M y) { return std::pow(x, y); });
      else return run([](M x, M y) { return math::ipow<M>(x, y); });
    case BinaryOp::Eq: return cmp([](M x, M y) { return x == y; });
    case BinaryOp::Ne: return cmp([](M x, M y) { return x != y; });
    case BinaryOp::Lt: return cmp([](M x, M y) { return x < y; });
    case BinaryOp::Le: return cmp([](M x, M y) { return x <= y; });
    case BinaryOp::Gt: return cmp([](M x, M y) { return x > y; });
    case BinaryOp::Ge: return cmp([](M x, M y) { return x >= y; });
    case BinaryOp::LogicalAnd: return cmp([](M x, M y) { return bool(x) && bool(y); });
    case BinaryOp::LogicalOr: return cmp([](M x, M y) { return bool(x) || bool(y); });
    case BinaryOp::LogicalXor: return cmp([](M x, M y) { return bool(x) != bool(y); });
    default: break;
  }
  if constexpr (kFloat) {
    switch (op) {
      case BinaryOp::Atan2: return run([](M x, M y) { return std::atan2(x, y); });
      case BinaryOp::ReluBackward: return run([](M g, M o) { return o > M(0) ? g : M(0); });
      case BinaryOp::SigmoidBackward: return run([](M g, M o) { return g * o * (M(1) - o); });
      case BinaryOp::TanhBackward: return run([](M g, M o) { return g * (M(1) - o * o); });
      case BinaryOp::GeluBackward: return run([](M g, M x) { return g * math::gelu_grad(x); });
      case BinaryOp::GeluTanhBackward: return run([](M g, M x) { return g * math::gelu_tanh_grad(x); });
      case BinaryOp::SiluBackward: return run([](M g, M x) { return g * math::silu_grad(x); });
      case BinaryOp::SoftplusBackward:
        return run([p, q](M g, M x) { return x * p > q ? g : g * math::sigmoid(x * p); });
      case BinaryOp::LeakyReluBackward: return run([p](M g, M x) { return x > M(0) ? g : g * p; });
      case BinaryOp::EluBackward: return run([p](M g, M x) { return x > M(0) ? g : g * p * std::exp(x); });
      case BinaryOp::MishBackward: return run([](M g, M x) { return g * math::mish_grad(x); });
      case BinaryOp::HardswishBackward: return run([](M g, M x) { return g * math::hardswish_grad(x); });
      default: break;
    }
  } else {
    switch (op) {
      case BinaryOp::BitwiseAnd: return run([](M x, M y) { return x & y; });
      case BinaryOp::BitwiseOr: return run([](M x, M y) { return x | y; });
      case BinaryOp::BitwiseXor: return run([](M x, M y) { return x ^ y; });
      default: break;
    }
  }
  throw TypeError(str_cat(op_name(op), ": not implemented for dtype ", dtype_name(a.dtype())));
}

void cpu_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  if (a.dtype() == DType::Bool) {  // bool math happens on the 0/1 bytes
    switch (op) {
      case BinaryOp::Add: case BinaryOp::LogicalOr: case BinaryOp::BitwiseOr: case BinaryOp::Maximum:
        return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x || y; });
      case BinaryOp::Mul: case BinaryOp::LogicalAnd: case BinaryOp::BitwiseAnd: case BinaryOp::Minimum:
        return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x && y; });
      case BinaryOp::Ne: case BinaryOp::LogicalXor: case BinaryOp::BitwiseXor:
        return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x != y; });
      case BinaryOp::Eq: return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x == y; });
      case BinaryOp::Lt: return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x < y; });
      case BinaryOp::Le: return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x <= y; });
      case BinaryOp::Gt: return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x > y; });
      case BinaryOp::Ge: return binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x >= y; });
      default: throw TypeError(str_cat(op_name(op), ": not implemented for dtype bool"));
    }
  }
  TT_DISPATCH_NUMERIC(a.dtype(), op_name(op), [&] { binary_typed<scalar_t>(op, a, b, out, s); });
}

void cpu_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  TT_DISPATCH_ALL(out.dtype(), "where", [&] {
    ternary_loop<scalar_t, bool, scalar_t, scalar_t>(cond, a, b, out,
                                                     [](bool c, scalar_t x, scalar_t y) { return c ? x : y; });
  });
}

void cpu_clamp_tensor(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out) {
  TT_DISPATCH_NUMERIC(out.dtype(), "clamp", [&] {
    using M = opmath_t<scalar_t>;
    auto clamp3 = [](scalar_t v, scalar_t l, scalar_t h) {
      M m = M(v);
      if constexpr (!std::is_integral_v<scalar_t>) if (std::isnan(m)) return m;
      return std::min(std::max(m, M(l)), M(h));
    };
    if (lo.defined() && hi.defined()) {
      ternary_loop<scalar_t, scalar_t, scalar_t, scalar_t>(x, lo, hi, out, clamp3);
    } else if (lo.defined()) {
      binary_loop<scalar_t, scalar_t>(x, lo, out, [](scalar_t v, scalar_t l) {
        M m = M(v);
        if constexpr (!std::is_integral_v<scalar_t>) if (std::isnan(m)) return m;
        return std::max(m, M(l));
      });
    } else {
      binary_loop<scalar_t, scalar_t>(x, hi, out, [](scalar_t v, scalar_t h) {
        M m = M(v);
        if constexpr (!std::is_integral_v<scalar_t>) if (std::isnan(m)) return m;
        return std::min(m, M(h));
      });
    }
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
