#pragma once
// Scalar formulas and one functor per elementwise op, shared by the CPU and CUDA kernels so
// every formula is written once. Everything is TT_HOST_DEVICE and calls std:: math, which nvcc
// maps to the device libm (float overloads stay float). Formulas run in the compute type M
// (float for float32/float16/bfloat16, double for float64, the type itself for integers).
//
// UnaryFn<op, T> / BinaryFn<op, T> take and return element types; kSupported says whether the
// CPU semantics define op for T (the backends raise TypeError otherwise). Bool tensors go through
// UnaryFn<op, uint8_t> (stored as one byte 0/1) and BinaryFn<op, bool>.
#include <cmath>
#include <type_traits>
#include "tinytorch/dtype.h"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/macros.h"

namespace tt::math {

template <class T> TT_INLINE T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T> TT_INLINE T softplus(T x, T beta, T threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}
constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
template <class T> TT_INLINE T gelu(T x) { return x * T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2))); }
template <class T> TT_INLINE T gelu_tanh(T x) {
  T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + std::tanh(inner));
}
template <class T> TT_INLINE T gelu_grad(T x) {
  T cdf = T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2)));
  T pdf = T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x);
  return cdf + x * pdf;
}
template <class T> TT_INLINE T gelu_tanh_grad(T x) {
  T x2 = x * x;
  T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x2 * x);
  T t = std::tanh(inner);
  T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * 0.044715) * x2);
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dinner;
}
// erfinv: Giles' approximation ("Approximating the erfinv function", 2010) as the start, then two
// Newton steps on erf(x) - y (each doubles the correct digits: float64 accuracy from ~1e-7).
// erfinv(+-1) = +-inf; |y| > 1 and NaN give NaN.
template <class T> TT_INLINE T erfinv(T y) {
  if (!(y > T(-1) && y < T(1))) return y == T(1) ? T(INFINITY) : (y == T(-1) ? T(-INFINITY) : T(NAN));
  T w = -std::log((T(1) - y) * (T(1) + y));
  T p;
  if (w < T(5)) {
    w = w - T(2.5);
    p = T(2.81022636e-08);
    p = T(3.43273939e-07) + p * w;  p = T(-3.5233877e-06) + p * w;  p = T(-4.39150654e-06) + p * w;
    p = T(0.00021858087) + p * w;   p = T(-0.00125372503) + p * w;  p = T(-0.00417768164) + p * w;
    p = T(0.246640727) + p * w;     p = T(1.50140941) + p * w;
  } else {
    w = std::sqrt(w) - T(3);
    p = T(-0.000200214257);
    p = T(0.000100950558) + p * w;  p = T(0.00134934322) + p * w;  p = T(-0.00367342844) + p * w;
    p = T(0.00573950773) + p * w;   p = T(-0.0076224613) + p * w;  p = T(0.00943887047) + p * w;
    p = T(1.00167406) + p * w;      p = T(2.83297682) + p * w;
  }
  T x = p * y;
  constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (T(kTwoOverSqrtPi) * std::exp(-x * x));
  return x;
}
template <class T> TT_INLINE T silu(T x) { return x * sigmoid(x); }
template <class T> TT_INLINE T silu_grad(T x) {
  T s = sigmoid(x);
  return s * (T(1) + x * (T(1) - s));
}
template <class T> TT_INLINE T mish(T x) { return x * std::tanh(softplus(x, T(1), T(20))); }
template <class T> TT_INLINE T mish_grad(T x) {
  T sp = softplus(x, T(1), T(20));
  T t = std::tanh(sp);
  return t + x * (T(1) - t * t) * sigmoid(x);
}
// PyTorch's formulas: x * clamp(x + 3, 0, 6) / 6 keeps NaN and gives NaN at -inf (-inf * 0).
template <class T> TT_INLINE T hardswish(T x) {
  T c = x + T(3);
  c = c < T(0) ? T(0) : c;  // NaN fails both tests and stays NaN
  c = c > T(6) ? T(6) : c;
  return x * c / T(6);
}
template <class T> TT_INLINE T hardswish_grad(T x) {  // 0 at -3 and 1 at 3, as PyTorch; NaN: 1
  return x <= T(-3) ? T(0) : (x < T(3) ? x / T(3) + T(0.5) : T(1));
}
template <class T> TT_INLINE T sign(T x) { return T((T(0) < x) - (x < T(0))); }
// std::max / std::min spelled out (same comparisons) so device code needs no <algorithm>.
template <class T> TT_INLINE T max_of(T a, T b) { return a < b ? b : a; }
template <class T> TT_INLINE T min_of(T a, T b) { return b < a ? b : a; }

// x < 0, without "pointless comparison" warnings for unsigned types.
template <class T> TT_INLINE bool is_negative(T x) {
  if constexpr (std::is_unsigned_v<T>) return false;
  else return x < T(0);
}

// Python's % and //: the result takes the sign of the divisor.
template <class T> TT_INLINE T remainder(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
  } else {
    if (b == 0) return 0;
    T r = a % b;
    return (r != 0 && (is_negative(r) != is_negative(b))) ? r + b : r;
  }
}
template <class T> TT_INLINE T floor_divide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // PyTorch's div_floor_floating_point: floor of the exact quotient, so inf // x and
    // x // inf follow fmod (NaN, 0), not floor(a / b) (inf).
    if (b == T(0)) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div == T(0)) return std::copysign(T(0), a / b);
    T floordiv = std::floor(div);
    return div - floordiv > T(0.5) ? floordiv + T(1) : floordiv;
  } else {
    if (b == 0) return 0;
    T q = a / b;
    return (a % b != 0 && (is_negative(a) != is_negative(b))) ? q - 1 : q;
  }
}
template <class T> TT_INLINE T ipow(T base, T exp) {  // integer power, exp >= 0
  if constexpr (!std::is_unsigned_v<T>)
    if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp % 2) ? -1 : 1) : 0);
  T r = 1;
  while (exp) {
    if (exp & 1) r *= base;
    base *= base;
    exp >>= 1;
  }
  return r;
}

// ---------------------------------------------------------------- unary functors

// Ops defined for integer inputs (everything is defined for floating ones).
constexpr bool unary_integral_ok(UnaryOp op) {
  return (op_class(op) != UnaryClass::Floating && op_class(op) != UnaryClass::FloatOnly) || op == UnaryOp::PowScalar;
}

template <UnaryOp op, class T>
struct UnaryFn {
  using M = opmath_t<T>;
  using Out = std::conditional_t<is_predicate(op), bool, T>;
  static constexpr bool kInt = std::is_integral_v<T>;
  static constexpr bool kSupported = !kInt || unary_integral_ok(op);
  M a, b;        // OpScalars in the compute type
  int pow_mode;  // pow_scalar: 2 -> x * x, 1 -> sqrt (exponents 2 and 0.5, decided in double)

  explicit UnaryFn(OpScalars s) : a(M(s.a)), b(M(s.b)), pow_mode(s.a == 2.0 ? 2 : (s.a == 0.5 ? 1 : 0)) {}
  TT_INLINE Out operator()(T v) const { return static_cast<Out>(eval(M(v))); }

  TT_INLINE auto eval(M x) const {
    using U = UnaryOp;
    if constexpr (kInt) {
      if constexpr (op == U::Neg) return T(-x);
      else if constexpr (op == U::Abs) return is_negative(x) ? T(-x) : x;
      else if constexpr (op == U::Sign) return T((T(0) < x) - is_negative(x));
      else if constexpr (op == U::Relu) return x > 0 ? x : T(0);
      else if constexpr (op == U::Square) return T(x * x);
      else if constexpr (op == U::Floor || op == U::Ceil || op == U::Round || op == U::Trunc) return x;
      else if constexpr (op == U::ClampMin) return x < a ? a : x;
      else if constexpr (op == U::ClampMax) return x > a ? a : x;
      else if constexpr (op == U::Clamp) return min_of(max_of(x, a), b);
      else if constexpr (op == U::PowScalar) return ipow<T>(x, a);
      else if constexpr (op == U::Isnan || op == U::Isinf) return false;
      else if constexpr (op == U::Isfinite) return true;
      else if constexpr (op == U::LogicalNot) return !x;
      else return x;  // unsupported: never launched (kSupported is false)
    } else {
      if constexpr (op == U::Neg) return -x;
      else if constexpr (op == U::Abs) return std::abs(x);
      else if constexpr (op == U::Sign) return sign(x);
      else if constexpr (op == U::Exp) return std::exp(x);
      else if constexpr (op == U::Log) return std::log(x);
      else if constexpr (op == U::Log1p) return std::log1p(x);
      else if constexpr (op == U::Expm1) return std::expm1(x);
      else if constexpr (op == U::Sqrt) return std::sqrt(x);
      else if constexpr (op == U::Rsqrt) return M(1) / std::sqrt(x);
      else if constexpr (op == U::Sin) return std::sin(x);
      else if constexpr (op == U::Cos) return std::cos(x);
      else if constexpr (op == U::Tan) return std::tan(x);
      else if constexpr (op == U::Asin) return std::asin(x);
      else if constexpr (op == U::Acos) return std::acos(x);
      else if constexpr (op == U::Atan) return std::atan(x);
      else if constexpr (op == U::Asinh) return std::asinh(x);
      else if constexpr (op == U::Acosh) return std::acosh(x);
      else if constexpr (op == U::Atanh) return std::atanh(x);
      else if constexpr (op == U::Sinh) return std::sinh(x);
      else if constexpr (op == U::Cosh) return std::cosh(x);
      else if constexpr (op == U::Tanh) return std::tanh(x);
      else if constexpr (op == U::Sigmoid) return sigmoid(x);
      else if constexpr (op == U::Relu) return x <= M(0) ? M(0) : x;  // NaN stays NaN
      else if constexpr (op == U::Gelu) return gelu(x);
      else if constexpr (op == U::GeluTanh) return gelu_tanh(x);
      else if constexpr (op == U::Silu) return silu(x);
      else if constexpr (op == U::Softplus) return softplus(x, a, b);
      else if constexpr (op == U::LeakyRelu) return x > M(0) ? x : x * a;
      else if constexpr (op == U::Elu) return x > M(0) ? x : a * std::expm1(x);
      else if constexpr (op == U::Mish) return mish(x);
      else if constexpr (op == U::Hardswish) return hardswish(x);
      else if constexpr (op == U::Erf) return std::erf(x);
      else if constexpr (op == U::Erfinv) return erfinv(x);
      else if constexpr (op == U::Reciprocal) return M(1) / x;
      else if constexpr (op == U::Square) return x * x;
      else if constexpr (op == U::Floor) return std::floor(x);
      else if constexpr (op == U::Ceil) return std::ceil(x);
      else if constexpr (op == U::Round) return std::nearbyint(x);
      else if constexpr (op == U::Trunc) return std::trunc(x);
      else if constexpr (op == U::Log2) return std::log2(x);
      else if constexpr (op == U::Log10) return std::log10(x);
      else if constexpr (op == U::Exp2) return std::exp2(x);
      else if constexpr (op == U::ClampMin) return std::isnan(x) ? x : (x < a ? a : x);
      else if constexpr (op == U::ClampMax) return std::isnan(x) ? x : (x > a ? a : x);
      else if constexpr (op == U::Clamp) return std::isnan(x) ? x : min_of(max_of(x, a), b);
      else if constexpr (op == U::PowScalar) return pow_mode == 2 ? x * x : (pow_mode == 1 ? std::sqrt(x) : std::pow(x, a));
      else if constexpr (op == U::RpowScalar) return std::pow(a, x);
      else if constexpr (op == U::Isnan) return bool(std::isnan(x));
      else if constexpr (op == U::Isinf) return bool(std::isinf(x));
      else if constexpr (op == U::Isfinite) return bool(std::isfinite(x));
      else if constexpr (op == U::LogicalNot) return !bool(x);
      else return x;
    }
  }
};

// ---------------------------------------------------------------- binary functors

constexpr bool is_float_only(BinaryOp op) { return op_class(op) == BinaryClass::Floating; }
constexpr bool is_bitwise(BinaryOp op) { return op_class(op) == BinaryClass::Bitwise; }
// The ops bool tensors support (math on the 0/1 bytes, see BinaryFn::eval).
constexpr bool binary_bool_ok(BinaryOp op) {
  const BinaryClass c = op_class(op);
  return c == BinaryClass::ArithBool || c == BinaryClass::Compare || c == BinaryClass::Logical ||
         c == BinaryClass::Bitwise;
}

template <BinaryOp op, class T>
struct BinaryFn {
  using M = opmath_t<T>;
  static constexpr bool kBool = std::is_same_v<T, bool>;
  static constexpr bool kInt = std::is_integral_v<T> && !kBool;
  static constexpr bool kFloat = !std::is_integral_v<T>;
  using Out = std::conditional_t<is_comparison(op) || kBool, bool, T>;
  static constexpr bool kSupported =
      kBool ? binary_bool_ok(op) : (kFloat ? !is_bitwise(op) : !is_float_only(op));
  M p, q;          // OpScalars: alpha for add/sub, beta/threshold or slope/alpha for the backwards
  bool unit_alpha;  // add/sub with alpha == 1: plain x + y (a loop-invariant branch the CPU unswitches)

  explicit BinaryFn(OpScalars s) : p(M(s.a)), q(M(s.b)), unit_alpha(s.a == 1.0) {}
  TT_INLINE Out operator()(T x, T y) const { return static_cast<Out>(eval(M(x), M(y))); }

  TT_INLINE auto eval(M x, M y) const {
    using B = BinaryOp;
    if constexpr (kBool) {
      if constexpr (op == B::Add || op == B::LogicalOr || op == B::BitwiseOr || op == B::Maximum) return x || y;
      else if constexpr (op == B::Mul || op == B::LogicalAnd || op == B::BitwiseAnd || op == B::Minimum) return x && y;
      else if constexpr (op == B::Ne || op == B::LogicalXor || op == B::BitwiseXor) return x != y;
      else if constexpr (op == B::Eq) return x == y;
      else if constexpr (op == B::Lt) return x < y;
      else if constexpr (op == B::Le) return x <= y;
      else if constexpr (op == B::Gt) return x > y;
      else if constexpr (op == B::Ge) return x >= y;
      else return x;
    } else if constexpr (op == B::Add) return unit_alpha ? x + y : x + p * y;
    else if constexpr (op == B::Sub) return unit_alpha ? x - y : x - p * y;
    else if constexpr (op == B::Mul) return x * y;
    else if constexpr (op == B::Div) return x / y;
    else if constexpr (op == B::Remainder) return remainder(x, y);
    else if constexpr (op == B::FloorDivide) return floor_divide(x, y);
    else if constexpr (op == B::Maximum) {
      if constexpr (kFloat) return (std::isnan(x) || x > y) ? x : y;
      else return x > y ? x : y;
    } else if constexpr (op == B::Minimum) {
      if constexpr (kFloat) return (std::isnan(x) || x < y) ? x : y;
      else return x < y ? x : y;
    } else if constexpr (op == B::Pow) {
      if constexpr (kFloat) return std::pow(x, y);
      else return ipow<M>(x, y);
    }
    else if constexpr (op == B::Eq) return x == y;
    else if constexpr (op == B::Ne) return x != y;
    else if constexpr (op == B::Lt) return x < y;
    else if constexpr (op == B::Le) return x <= y;
    else if constexpr (op == B::Gt) return x > y;
    else if constexpr (op == B::Ge) return x >= y;
    else if constexpr (op == B::LogicalAnd) return bool(x) && bool(y);
    else if constexpr (op == B::LogicalOr) return bool(x) || bool(y);
    else if constexpr (op == B::LogicalXor) return bool(x) != bool(y);
    else if constexpr (kInt) {
      if constexpr (op == B::BitwiseAnd) return x & y;
      else if constexpr (op == B::BitwiseOr) return x | y;
      else if constexpr (op == B::BitwiseXor) return x ^ y;
      else return x;  // unsupported: never launched
    } else {
      // (g, saved) -> grad_in
      if constexpr (op == B::Atan2) return std::atan2(x, y);
      else if constexpr (op == B::ReluBackward) return y <= M(0) ? M(0) : x;  // threshold_backward: NaN passes
      else if constexpr (op == B::SigmoidBackward) return x * y * (M(1) - y);
      else if constexpr (op == B::TanhBackward) return x * (M(1) - y * y);
      else if constexpr (op == B::GeluBackward) return x * gelu_grad(y);
      else if constexpr (op == B::GeluTanhBackward) return x * gelu_tanh_grad(y);
      else if constexpr (op == B::SiluBackward) return x * silu_grad(y);
      else if constexpr (op == B::SoftplusBackward) return y * p > q ? x : x * sigmoid(y * p);
      else if constexpr (op == B::LeakyReluBackward) return y > M(0) ? x : x * p;
      else if constexpr (op == B::EluBackward) return y > M(0) ? x : x * p * std::exp(y);
      else if constexpr (op == B::MishBackward) return x * mish_grad(y);
      else if constexpr (op == B::HardswishBackward) return x * hardswish_grad(y);
      else return x;  // bitwise on floats: never launched
    }
  }
};

// clamp with tensor bounds: a NaN in x or in a bound gives NaN (floats), as PyTorch; either
// bound may be absent.
template <class T, bool kLo, bool kHi>
struct ClampFn {
  using M = opmath_t<T>;
  TT_INLINE M eval(T v, T l, T h) const {
    M m = M(v);
    if constexpr (!std::is_integral_v<T>) {
      if (std::isnan(m)) return m;
      if constexpr (kLo) if (std::isnan(M(l))) return M(l);
      if constexpr (kHi) if (std::isnan(M(h))) return M(h);
    }
    if constexpr (kLo) m = max_of(m, M(l));
    if constexpr (kHi) m = min_of(m, M(h));
    return m;
  }
  TT_INLINE T operator()(T v, T l, T h) const { return static_cast<T>(eval(v, l, h)); }
  TT_INLINE T operator()(T v, T bound) const { return static_cast<T>(eval(v, bound, bound)); }
};

}  // namespace tt::math
