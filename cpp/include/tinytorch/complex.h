#pragma once
// complex64 / complex128 elements: a (real, imaginary) pair of floats or doubles, PyTorch's layout
// (view_as_real reads the same bytes as a trailing dimension of 2). Kernels only convert them
// (casts, copies, fills); arithmetic is composed over the real view in Python
// (tinytorch/_composites/complex.py), so autograd and CUDA come with the real ops.
#include <type_traits>
#include "tinytorch/macros.h"

namespace tt {

template <class T>
struct alignas(2 * sizeof(T)) Complex {
  T re, im;
  TT_INLINE constexpr Complex() : re(0), im(0) {}
  TT_INLINE constexpr Complex(T r, T i) : re(r), im(i) {}
  // from a real number: imaginary part 0
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  TT_INLINE constexpr explicit Complex(U v) : re(static_cast<T>(v)), im(0) {}
  template <class U>
  TT_INLINE constexpr explicit Complex(Complex<U> z) : re(static_cast<T>(z.re)), im(static_cast<T>(z.im)) {}
  // to a real number: the real part (PyTorch's cast discards the imaginary part)
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  TT_INLINE constexpr explicit operator U() const { return static_cast<U>(re); }
  TT_INLINE friend constexpr bool operator==(Complex a, Complex b) { return a.re == b.re && a.im == b.im; }
  TT_INLINE friend constexpr bool operator!=(Complex a, Complex b) { return !(a == b); }
};

using Complex64 = Complex<float>;
using Complex128 = Complex<double>;

}  // namespace tt
