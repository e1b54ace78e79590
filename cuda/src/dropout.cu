// CUDA dropout kernels. The mask draws the random kernels' Philox stream four elements per block
// (kernels/dropout.h: element i takes word i % 4 of philox(seed, offset + i / 4)), bit-equal to the
// CPU's (cpp/src/cpu/dropout.cpp) for the same generator state. Each thread owns E consecutive
// elements (16 bytes of x for 16- and 32-bit types): E / 4 Philox calls, vector loads and stores
// of x, y and the mask.
#include <cstdint>
#include "random_philox.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/dropout.h"

namespace tt::cuda {
namespace {

template <class T>
struct DropoutArgs {
  const T* x;
  T* y;
  bool* mask;
  float p;
  opmath_t<T> scale;
};

// x, y, mask: contiguous (n,); element i of x -> y[i], mask[i]
template <class T>
__device__ __forceinline__ void dropout_one(const DropoutArgs<T>& a, uint64_t seed, uint64_t offset, int64_t i) {
  using M = opmath_t<T>;
  const bool keep = dropout_keep_word(philox4x32(seed, offset + uint64_t(i >> 2))[i & 3], a.p);
  a.mask[i] = keep;
  a.y[i] = T(M(a.x[i]) * (keep ? a.scale : M(0)));  // a product: NaN/inf x dropped gives NaN, as PyTorch
}

// Elements per thread: 16 bytes of x, at least one whole Philox block.
template <class T>
constexpr int dropout_width() {
  return sizeof(T) >= 4 ? 4 : 16 / int(sizeof(T));
}

// x, y, mask: contiguous (n,), x and y aligned to E elements, mask to E bytes. Thread g owns
// elements [g*E, g*E + E); the last, partial group goes element by element.
template <class T, int E>
__global__ void dropout_vec_kernel(int64_t n, PhiloxArgs pa, DropoutArgs<T> a) {
  using M = opmath_t<T>;
  uint64_t seed, offset;
  pa.get(seed, offset);
  const int64_t groups = (n + E - 1) / E;
  TT_GRID_STRIDE(g, groups) {
    const int64_t i0 = g * E;
    if (i0 + E > n) {
      for (int64_t i = i0; i < n; ++i) dropout_one(a, seed, offset, i);
      continue;
    }
    const Vec<T, E> xv = *reinterpret_cast<const Vec<T, E>*>(a.x + i0);
    Vec<T, E> yv;
    Vec<bool, E> mv;
#pragma unroll
    for (int q = 0; q < E / 4; ++q) {
      const auto r = philox4x32(seed, offset + uint64_t(i0 / 4 + q));
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        const bool keep = dropout_keep_word(r[w], a.p);
        mv.v[4 * q + w] = keep;
        yv.v[4 * q + w] = T(M(xv.v[4 * q + w]) * (keep ? a.scale : M(0)));
      }
    }
    *reinterpret_cast<Vec<T, E>*>(a.y + i0) = yv;
    *reinterpret_cast<Vec<bool, E>*>(a.mask + i0) = mv;
  }
}

// The same stream one element per thread, for operands the vector kernel cannot align.
template <class T>
__global__ void dropout_scalar_kernel(int64_t n, PhiloxArgs pa, DropoutArgs<T> a) {
  uint64_t seed, offset;
  pa.get(seed, offset);
  TT_GRID_STRIDE(i, n) dropout_one(a, seed, offset, i);
}

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

void cuda_dropout(const Tensor& x, double p, const Tensor& y, const Tensor& mask, PhiloxState st) {
  const int64_t n = x.numel();
  if (n == 0) return;
  DeviceGuard guard(x.device());
  const int dev = x.device().index;
  cudaStream_t stream = current_stream(dev);
  const PhiloxArgs pa = philox_args(dev, st, uint64_t(n), "dropout");
  TT_DISPATCH_FLOATING(x.dtype(), "dropout", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    constexpr int E = dropout_width<T>();
    const DropoutArgs<T> a{x.data<T>(), y.data<T>(), mask.data<bool>(), float(p),
                           p >= 1 ? M(0) : M(1.0 / (1.0 - p))};
    if (aligned(a.x, sizeof(Vec<T, E>)) && aligned(a.y, sizeof(Vec<T, E>)) && aligned(a.mask, E))
      dropout_vec_kernel<T, E><<<grid_for((n + E - 1) / E), kThreads, 0, stream>>>(n, pa, a);
    else
      dropout_scalar_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(n, pa, a);
    TT_CUDA_KERNEL_CHECK();
  });
}

// grad: (...), mask: bool broadcast to grad -> out = grad * (mask ? scale : 0)
template <class T>
struct MaskedScaleOp {
  opmath_t<T> s;
  __device__ __forceinline__ T operator()(T g, bool k) const {
    using M = opmath_t<T>;
    return T(M(g) * (k ? s : M(0)));
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
