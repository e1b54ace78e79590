// CUDA batch_norm forward and backward, fused (kernels/norm.h): one block per channel walks its
// N x L slab (the statistics in two reads: mean, then squared deviations, so no cancellation; the
// output in one more), as the CPU kernels do; the composite form took ~10 elementwise/reduce
// launches per call. Sums are block reductions in a fixed order (deterministic).
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/common.h"
#include "tinytorch/kernels/norm.h"

namespace tt::cuda {
namespace {

constexpr int kBnThreads = 256;

// Element i of channel c's slab in x: (N, C, L): n = i / L, j = i % L.
__device__ __forceinline__ int64_t slab_at(int64_t i, int64_t c, int64_t C, int64_t L) {
  const int64_t n = i / L;
  return (n * C + c) * L + (i - n * L);
}

// x: (N, C, L), w/b: (C) or null -> y: (N, C, L); mean/var/invstd: (C) in M (training writes the
// batch mean and biased var, eval reads them).
template <class T, class M>
__global__ void __launch_bounds__(kBnThreads)
    batch_norm_kernel(const T* x, const T* w, const T* b, double eps, bool training, T* y, M* mean, M* var,
                      M* invstd, int64_t N, int64_t C, int64_t L) {
  __shared__ M smem[32];
  const int64_t c = blockIdx.x, cnt = N * L;
  M mu, v;
  if (training) {
    M s = 0;
    for (int64_t i = threadIdx.x; i < cnt; i += blockDim.x) s += M(x[slab_at(i, c, C, L)]);
    mu = block_allreduce(s, AddOp(), smem) / M(cnt);
    M d2 = 0;
    for (int64_t i = threadIdx.x; i < cnt; i += blockDim.x) {
      const M d = M(x[slab_at(i, c, C, L)]) - mu;
      d2 += d * d;
    }
    v = block_allreduce(d2, AddOp(), smem) / M(cnt);
    if (threadIdx.x == 0) mean[c] = mu, var[c] = v;
  } else {
    mu = mean[c], v = var[c];
  }
  const M is = M(1) / sqrt(v + M(eps));
  if (threadIdx.x == 0) invstd[c] = is;
  // y = x * scale + shift, scale = invstd * w, shift = b - mean * scale
  const M scale = is * (w ? M(w[c]) : M(1)), shift = (b ? M(b[c]) : M(0)) - mu * scale;
  for (int64_t i = threadIdx.x; i < cnt; i += blockDim.x) {
    const int64_t at = slab_at(i, c, C, L);
    y[at] = T(M(x[at]) * scale + shift);
  }
}

// gy, x: (N, C, L), mean/invstd: (C) in M, w: (C) or null -> gx: (N, C, L) or null, gw/gb: (C) or
// null. s1 = sum(g), s2 = sum(g (x - mean)): gb = s1, gw = s2 invstd,
// gx = k g + d (x - mean) + e with k = w invstd, d = -k invstd^2 s2 / M, e = -k s1 / M (training; eval: k g).
template <class T, class M>
__global__ void __launch_bounds__(kBnThreads)
    batch_norm_backward_kernel(const T* g, const T* x, const M* mean, const M* invstd, const T* w, bool training,
                               T* gx, T* gw, T* gb, int64_t N, int64_t C, int64_t L) {
  __shared__ M smem[32];
  const int64_t c = blockIdx.x, cnt = N * L;
  const M mu = mean[c], is = invstd[c], k = (w ? M(w[c]) : M(1)) * is;
  M s1 = 0, s2 = 0;
  if (gw || gb || (gx && training)) {
    for (int64_t i = threadIdx.x; i < cnt; i += blockDim.x) {
      const int64_t at = slab_at(i, c, C, L);
      const M gv = M(g[at]);
      s1 += gv;
      s2 += gv * (M(x[at]) - mu);
    }
    s1 = block_allreduce(s1, AddOp(), smem);
    s2 = block_allreduce(s2, AddOp(), smem);
  }
  if (threadIdx.x == 0) {
    if (gb) gb[c] = T(s1);
    if (gw) gw[c] = T(s2 * is);
  }
  if (!gx) return;
  const M d = training ? -k * is * is * s2 / M(cnt) : M(0), e = training ? -k * s1 / M(cnt) : M(0);
  for (int64_t i = threadIdx.x; i < cnt; i += blockDim.x) {
    const int64_t at = slab_at(i, c, C, L);
    gx[at] = T(k * M(g[at]) + d * (M(x[at]) - mu) + e);
  }
}

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

void cuda_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, bool training, const Tensor& y,
                     const Tensor& mean, const Tensor& var, const Tensor& invstd) {
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_FLOATING(x.dtype(), "batch_norm", [&] {
    using M = opmath_t<scalar_t>;
    batch_norm_kernel<scalar_t, M><<<unsigned(x.size(1)), kBnThreads, 0, stream>>>(
        x.data<scalar_t>(), data_or_null<scalar_t>(w), data_or_null<scalar_t>(b), eps, training,
        y.data<scalar_t>(), mean.data<M>(), var.data<M>(), invstd.data<M>(), x.size(0), x.size(1), x.size(2));
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                              const Tensor& w, bool training, const Tensor& gx, const Tensor& gw, const Tensor& gb) {
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_FLOATING(x.dtype(), "batch_norm_backward", [&] {
    using M = opmath_t<scalar_t>;
    batch_norm_backward_kernel<scalar_t, M><<<unsigned(x.size(1)), kBnThreads, 0, stream>>>(
        g.data<scalar_t>(), x.data<scalar_t>(), mean.data<M>(), invstd.data<M>(), data_or_null<scalar_t>(w),
        training, gx.defined() ? gx.data<scalar_t>() : nullptr, gw.defined() ? gw.data<scalar_t>() : nullptr,
        gb.defined() ? gb.data<scalar_t>() : nullptr, x.size(0), x.size(1), x.size(2));
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNEL(batch_norm, CUDA, cuda_batch_norm)
TT_REGISTER_KERNEL(batch_norm_backward, CUDA, cuda_batch_norm_backward)

}  // namespace tt::cuda
