#pragma once
// Scalar formulas shared by the CPU kernels, written over the compute type T
// (float for float32/float16/bfloat16, double for float64).
#include <cmath>
#include <type_traits>

namespace tt::cpu::math {

template <class T> inline T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T> inline T softplus(T x, T beta, T threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}
constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
template <class T> inline T gelu(T x) { return x * T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2))); }
template <class T> inline T gelu_tanh(T x) {
  T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + std::tanh(inner));
}
template <class T> inline T gelu_grad(T x) {
  T cdf = T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2)));
  T pdf = T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x);
  return cdf + x * pdf;
}
template <class T> inline T gelu_tanh_grad(T x) {
  T x2 = x * x;
  T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x2 * x);
  T t = std::tanh(inner);
  T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * 0.044715) * x2);
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dinner;
}
template <class T> inline T silu(T x) { return x * sigmoid(x); }
template <class T> inline T silu_grad(T x) {
  T s = sigmoid(x);
  return s * (T(1) + x * (T(1) - s));
}
template <class T> inline T mish(T x) { return x * std::tanh(softplus(x, T(1), T(20))); }
template <class T> inline T mish_grad(T x) {
  T sp = softplus(x, T(1), T(20));
  T t = std::tanh(sp);
  return t + x * (T(1) - t * t) * sigmoid(x);
}
template <class T> inline T hardswish(T x) {
  return x <= T(-3) ? T(0) : (x >= T(3) ? x : x * (x + T(3)) / T(6));
}
template <class T> inline T hardswish_grad(T x) {
  return x < T(-3) ? T(0) : (x > T(3) ? T(1) : (T(2) * x + T(3)) / T(6));
}
template <class T> inline T sign(T x) { return T((T(0) < x) - (x < T(0))); }

// Python's % and //: the result takes the sign of the divisor.
template <class T> inline T remainder(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
  } else {
    if (b == 0) return 0;
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
}
template <class T> inline T floor_divide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(a / b);
  } else {
    if (b == 0) return 0;
    T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
}
template <class T> inline T ipow(T base, T exp) {  // integer power, exp >= 0
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp % 2) ? -1 : 1) : 0);
  T r = 1;
  while (exp) {
    if (exp & 1) r *= base;
    base *= base;
    exp >>= 1;
  }
  return r;
}

}  // namespace tt::cpu::math
