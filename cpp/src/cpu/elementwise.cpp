// CPU elementwise kernels: unary, binary, where, clamp with tensor bounds, fill.
#include <cmath>
#include <type_traits>
#include "activation_simd.h"
#include "fast_gelu.h"
#include "fast_silu.h"
#include "loops.h"
#include "tinytorch/math.h"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/kernels/elementwise_dispatch.h"

namespace tt::cpu {
namespace {

// The loops under the shared unary/binary dispatch (kernels/elementwise_dispatch.h).
struct CpuLoop {
  // float GELU and SiLU forward/backward take the vectorizable formulas (fast_gelu.h,
  // fast_silu.h), not libm's erf/exp; contiguous runs go to the SIMD loops (activation_simd.h).
  template <class Out, class T, class F>
  static void unary(const Tensor& in, const Tensor& out, const F& f) {
    if constexpr (std::is_same_v<F, math::UnaryFn<UnaryOp::Gelu, float>> && std::is_same_v<Out, float> &&
                  std::is_same_v<T, float>)
      unary_loop_f32(in, out, gelu_f32, [](float x) { return gelu_fast(x); });
    else if constexpr (std::is_same_v<F, math::UnaryFn<UnaryOp::Silu, float>> && std::is_same_v<Out, float> &&
                       std::is_same_v<T, float>)
      unary_loop_f32(in, out, silu_f32, [](float x) { return silu_fast(x); });
    else
      unary_loop<Out, T>(in, out, f);
  }
  template <class Out, class T, class F>
  static void binary(const Tensor& a, const Tensor& b, const Tensor& out, const F& f) {
    if constexpr (std::is_same_v<F, math::BinaryFn<BinaryOp::GeluBackward, float>> &&  // (grad, input)
                  std::is_same_v<Out, float> && std::is_same_v<T, float>)
      binary_loop_f32(a, b, out, gelu_backward_f32, [](float g, float x) { return g * gelu_grad_fast(x); });
    else if constexpr (std::is_same_v<F, math::BinaryFn<BinaryOp::SiluBackward, float>> &&  // (grad, input)
                       std::is_same_v<Out, float> && std::is_same_v<T, float>)
      binary_loop_f32(a, b, out, silu_backward_f32, [](float g, float x) { return g * silu_grad_fast(x); });
    else
      binary_loop<Out, T>(a, b, out, f);
  }
};

void cpu_unary(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  elementwise_dispatch::unary<CpuLoop>(op, in, out, s);
}

void cpu_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  elementwise_dispatch::binary<CpuLoop>(op, a, b, out, s);
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
  TT_DISPATCH_STORAGE(out.dtype(), "fill", [&] {
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

TT_REGISTER_KERNELS(CPU, cpu, unary, binary, where, clamp_tensor, fill)

}  // namespace tt::cpu
