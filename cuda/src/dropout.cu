// CUDA dropout kernels. The mask draws the random kernels' Philox stream (random_philox.cuh),
// bit-equal to the CPU's (cpp/src/cpu/dropout.cpp) for the same generator state.
#include "random_philox.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/dropout.h"

namespace tt::cuda {
namespace {

// x: contiguous (n) -> mask[i] = U >= p, y[i] = mask ? x * 1/(1-p) : 0
template <class T>
struct DropoutOp {
  const T* x;
  T* y;
  bool* mask;
  double p;
  opmath_t<T> scale;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t, uint32_t) const {
    using M = opmath_t<T>;
    const bool keep = uniform_double(a, b) >= p;
    mask[i] = keep;
    y[i] = keep ? T(M(x[i]) * scale) : T(M(0));
  }
};

void cuda_dropout(const Tensor& x, double p, const Tensor& y, const Tensor& mask, PhiloxState st) {
  TT_DISPATCH_FLOATING(x.dtype(), "dropout", [&] {
    using M = opmath_t<scalar_t>;
    const M scale = p >= 1 ? M(0) : M(1.0 / (1.0 - p));
    launch_philox(x, x.numel(), st,
                  DropoutOp<scalar_t>{x.data<scalar_t>(), y.data<scalar_t>(), mask.data<bool>(), p, scale});
  });
}

// grad: (...), mask: bool broadcast to grad -> out = mask ? grad * scale : 0
template <class T>
struct MaskedScaleOp {
  opmath_t<T> s;
  __device__ __forceinline__ T operator()(T g, bool k) const {
    using M = opmath_t<T>;
    return k ? T(M(g) * s) : T(M(0));
  }
};

void cuda_masked_scale(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  TT_DISPATCH_FLOATING(grad.dtype(), "dropout_backward", [&] {
    using M = opmath_t<scalar_t>;
    gpu_binary<scalar_t, scalar_t, bool>(grad, mask, out, MaskedScaleOp<scalar_t>{M(scale)});
  });
}

}  // namespace

TT_REGISTER_KERNEL(dropout, CUDA, cuda_dropout)
TT_REGISTER_KERNEL(masked_scale, CUDA, cuda_masked_scale)

}  // namespace tt::cuda
