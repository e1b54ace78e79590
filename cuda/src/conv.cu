// CUDA im2col / col2im / channel_sum for the conv2d op layer (which does the GEMMs).
// col2im gathers (one thread per input element summing, in the CPU's (i, j) order, the col
// entries that read it) instead of scattering with atomics: deterministic and race-free.
#include <climits>
#include "nn_reduce.cuh"
#include "tinytorch/kernels/conv.h"

namespace tt::cuda {
namespace {

struct ConvDims {
  int64_t C, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
};

ConvDims dims_of(const Tensor& x, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  return {x.size(1), x.size(2), x.size(3), Ho, Wo, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw};
}

// x: (nb, C, H, W) -> col: (nb, C*kh*kw, Ho*Wo). One thread per col element: consecutive threads
// write consecutive output positions (coalesced) and read along a row of x.
template <class T>
__global__ void im2col_kernel(const T* __restrict__ x, T* __restrict__ col, int64_t total, ConvDims d) {
  const int64_t L = d.Ho * d.Wo, K = d.kh * d.kw;
  TT_GRID_STRIDE(idx, total) {
    int64_t l = idx % L, r = idx / L;
    int64_t k = r % K, bc = r / K;  // bc = b*C + c: col rows of item b start at b*C*K
    int64_t ow = l % d.Wo, oh = l / d.Wo, j = k % d.kw, i = k / d.kw;
    int64_t ih = oh * d.sh - d.ph + i * d.dh, iw = ow * d.sw - d.pw + j * d.dw;
    col[idx] = (ih >= 0 && ih < d.H && iw >= 0 && iw < d.W) ? x[(bc * d.H + ih) * d.W + iw] : T(0);
  }
}

// col: (nb, C*kh*kw, Ho*Wo) -> x: (nb, C, H, W). Thread per x element: for each kernel tap (i, j)
// at most one output position (oh, ow) read it, found by inverting ih = oh*sh - ph + i*dh.
template <class T>
__global__ void col2im_kernel(const T* __restrict__ col, T* __restrict__ x, int64_t total, ConvDims d) {
  using A = opmath_t<T>;
  const int64_t L = d.Ho * d.Wo, K = d.kh * d.kw;
  TT_GRID_STRIDE(idx, total) {
    int64_t w = idx % d.W, h = (idx / d.W) % d.H, bc = idx / (d.W * d.H);
    const T* cs = col + bc * K * L;
    A acc = 0;
    for (int64_t i = 0; i < d.kh; ++i) {
      int64_t th = h + d.ph - i * d.dh;
      if (th < 0 || th % d.sh) continue;
      int64_t oh = th / d.sh;
      if (oh >= d.Ho) continue;
      for (int64_t j = 0; j < d.kw; ++j) {
        int64_t tw = w + d.pw - j * d.dw;
        if (tw < 0 || tw % d.sw) continue;
        int64_t ow = tw / d.sw;
        if (ow >= d.Wo) continue;
        acc += static_cast<A>(cs[(i * d.kw + j) * L + oh * d.Wo + ow]);
      }
    }
    x[idx] = static_cast<T>(acc);
  }
}

// g: (B, C, L) -> part: (C, S) partial sums in double. Block (c, s) sums the flat range
// [s*chunk, (s+1)*chunk) of channel c's B*L elements; S depends only on the sizes.
template <class T>
__global__ void channel_sum_partial(const T* __restrict__ g, double* part, int64_t B, int64_t C, int64_t L,
                                    int64_t chunk, int S) {
  int64_t c = blockIdx.x, s = blockIdx.y;
  int64_t n = B * L, lo = s * chunk, hi = min(n, lo + chunk);
  double acc = 0;
  for (int64_t q = lo + threadIdx.x; q < hi; q += blockDim.x) {
    int64_t b = q / L, l = q - b * L;
    acc += static_cast<double>(static_cast<opmath_t<T>>(g[(b * C + c) * L + l]));
  }
  acc = nn::block_sum(acc);
  if (threadIdx.x == 0) part[c * S + s] = acc;
}

// part: (C, S) -> out: (C), out[c] (+)= sum_s part[c, s]; one warp per channel, fixed order.
template <class T>
__global__ void channel_sum_final(const double* part, T* out, int64_t C, int S, bool accumulate) {
  int64_t c = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (c >= C) return;
  double acc = 0;
  for (int s = lane; s < S; s += 32) acc += part[c * S + s];
  acc = nn::warp_sum(acc);
  if (lane == 0) {
    if (accumulate) acc += static_cast<double>(static_cast<opmath_t<T>>(out[c]));
    out[c] = static_cast<T>(static_cast<opmath_t<T>>(acc));
  }
}

void cuda_im2col(const Tensor& x, const Tensor& col, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  int64_t total = col.numel();
  if (total == 0) return;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_FLOATING(x.dtype(), "im2col", [&] {
    im2col_kernel<scalar_t><<<grid_for(total), kThreads, 0, stream>>>(x.data<scalar_t>(), col.data<scalar_t>(),
                                                                      total, dims_of(x, p, Ho, Wo));
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_col2im(const Tensor& col, const Tensor& x, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  int64_t total = x.numel();
  if (total == 0) return;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_FLOATING(x.dtype(), "col2im", [&] {
    col2im_kernel<scalar_t><<<grid_for(total), kThreads, 0, stream>>>(col.data<scalar_t>(), x.data<scalar_t>(),
                                                                      total, dims_of(x, p, Ho, Wo));
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_channel_sum(const Tensor& g, const Tensor& out, bool accumulate) {
  int64_t B = g.size(0), C = g.size(1), L = g.size(2);
  if (C == 0) return;
  DeviceGuard guard(g.device());
  cudaStream_t stream = current_stream(g.device().index);
  // ~16K elements per block, at most 64 blocks per channel (then the chunk grows).
  int64_t n = B * L;
  int S = static_cast<int>(std::min<int64_t>(64, std::max<int64_t>(1, (n + 16383) / 16384)));
  int64_t chunk = std::max<int64_t>(1, (n + S - 1) / S);
  TT_CHECK(C <= INT_MAX, "channel_sum: too many channels (", C, ")");
  Tensor part = Tensor::empty({C * S}, DType::Float64, g.device());
  TT_DISPATCH_FLOATING(g.dtype(), "channel_sum", [&] {
    using T = scalar_t;
    channel_sum_partial<T><<<dim3(static_cast<unsigned>(C), static_cast<unsigned>(S)), nn::kSumThreads, 0, stream>>>(
        g.data<T>(), part.data<double>(), B, C, L, chunk, S);
    TT_CUDA_KERNEL_CHECK();
    channel_sum_final<T><<<static_cast<unsigned>((C + 7) / 8), 256, 0, stream>>>(part.data<double>(), out.data<T>(),
                                                                                 C, S, accumulate);
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNEL(im2col, CUDA, cuda_im2col)
TT_REGISTER_KERNEL(col2im, CUDA, cuda_col2im)
TT_REGISTER_KERNEL(channel_sum, CUDA, cuda_channel_sum)

}  // namespace tt::cuda
