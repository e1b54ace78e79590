// CUDA unary ops, where, and clamp with tensor bounds. The formulas are the CPU's: one
// functor per op from tinytorch/math.h, run by the strided/vectorized loops of loops.cuh.
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/kernels/elementwise_dispatch.h"
#include "tinytorch/math.h"

namespace tt::cuda {
namespace {

// The loop under the shared unary dispatch (kernels/elementwise_dispatch.h): in: any layout,
// out: in's shape -> out = f(in), one kernel per (op, dtype).
struct GpuUnaryLoop {
  template <class Out, class T, class F>
  static void unary(const Tensor& in, const Tensor& out, const F& f) {
    gpu_unary<Out, T>(in, out, f);
  }
};

void cuda_unary(UnaryOp op, const Tensor& in, const Tensor& out, OpScalars s) {
  elementwise_dispatch::unary<GpuUnaryLoop>(op, in, out, s);
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

TT_REGISTER_KERNELS(CUDA, cuda, unary, where, clamp_tensor)

}  // namespace tt::cuda
