// CUDA im2col / col2im / channel_sum for the conv2d op layer (which does the GEMMs).
// col2im gathers (one thread per input element summing, in the CPU's (i, j) order, the col
// entries that read it) instead of scattering with atomics: deterministic and race-free.
#include <algorithm>
#include <climits>
#include <type_traits>
#include "nn_reduce.cuh"
#include "tinytorch/kernels/conv.h"

namespace tt::cuda {
namespace {

// Spatial sizes and the conv parameters fit int32: index math inside the kernels is 32-bit
// (64-bit division is many times slower on the GPU); only memory offsets are 64-bit.
struct ConvDims {
  int C, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t nb, item_stride, row_stride;  // col's strides of its item and (c, i, j) row dims; L's is 1
};

ConvDims dims_of(const Tensor& x, const Tensor& col, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  TT_CHECK(col.stride(2) == 1 || col.size(2) <= 1, "im2col/col2im: col's last dim must be dense");
  for (int64_t v : {x.size(1), x.size(2) * x.size(3), Ho * Wo, col.size(1), p.kh * p.kw, p.ph + p.dh * p.kh,
                    p.pw + p.dw * p.kw, p.sh * Ho, p.sw * Wo})
    TT_CHECK(v < INT_MAX, "conv2d (CUDA): a size or parameter exceeds the 32-bit range");
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  return {i32(x.size(1)), i32(x.size(2)), i32(x.size(3)), i32(Ho), i32(Wo), i32(p.kh), i32(p.kw), i32(p.sh),
          i32(p.sw), i32(p.ph), i32(p.pw), i32(p.dh), i32(p.dw), x.size(0), col.stride(0), col.stride(1)};
}

// Items per grid z: each thread loops over nb / kItemSlices items, so the per-position index math
// is done once and several independent loads are in flight (one element per thread left the
// kernel latency-bound: ~440k tiny blocks for MNIST's conv2 at batch 512).
constexpr int64_t kItemSlices = 16;

dim3 conv_grid(int64_t inner, int64_t rows, int64_t items) {
  auto cap = [](int64_t v, int64_t hi) { return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(v, 1), hi)); };
  return dim3(cap((inner + kThreads - 1) / kThreads, 1 << 16), cap(rows, 65535), cap(items, kItemSlices));
}

// x: (nb, C, H, W) -> col: (nb, C*kh*kw, Ho*Wo), any item/row strides (the op layer lays it out
// batch-inner). Grid: x over output positions l, y over col rows (c, i, j), z over slices of the
// items; consecutive threads write consecutive positions (coalesced) and read along a row of x.
template <class T>
__global__ void im2col_kernel(const T* __restrict__ x, T* __restrict__ col, ConvDims d) {
  constexpr int U = 4;  // items in flight per thread
  const int K = d.kh * d.kw, CK = d.C * K, L = d.Ho * d.Wo;
  const int64_t HW = int64_t(d.H) * d.W, xitem = d.C * HW, gz = gridDim.z;
  for (int row = blockIdx.y; row < CK; row += gridDim.y) {
    const int c = row / K, k = row - c * K, i = k / d.kw, j = k - i * d.kw;
    for (int l = blockIdx.x * blockDim.x + threadIdx.x; l < L; l += gridDim.x * blockDim.x) {
      const int oh = l / d.Wo, ow = l - oh * d.Wo;
      const int ih = oh * d.sh - d.ph + i * d.dh, iw = ow * d.sw - d.pw + j * d.dw;
      const bool inside = ih >= 0 && ih < d.H && iw >= 0 && iw < d.W;
      const T* src = x + c * HW + (inside ? ih * d.W + iw : 0);
      T* dst = col + row * d.row_stride + l;
      int64_t b = blockIdx.z;
      for (; b + (U - 1) * gz < d.nb; b += U * gz) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = inside ? src[(b + u * gz) * xitem] : T(0);
#pragma unroll
        for (int u = 0; u < U; ++u) dst[(b + u * gz) * d.item_stride] = v[u];
      }
      for (; b < d.nb; b += gz) dst[b * d.item_stride] = inside ? src[b * xitem] : T(0);
    }
  }
}

// col: (nb, C*kh*kw, Ho*Wo) -> x: (nb, C, H, W). Thread per x element (grid: x over positions, y
// over channels, z over items): for each kernel tap (i, j) at most one output position (oh, ow)
// read it, found by inverting ih = oh*sh - ph + i*dh.
template <class T>
__global__ void col2im_kernel(const T* __restrict__ col, T* __restrict__ x, ConvDims d) {
  using A = opmath_t<T>;
  const int K = d.kh * d.kw, HW = d.H * d.W;
  for (int64_t b = blockIdx.z; b < d.nb; b += gridDim.z)
    for (int c = blockIdx.y; c < d.C; c += gridDim.y) {
      const T* cs = col + b * d.item_stride + int64_t(c) * K * d.row_stride;
      T* xs = x + (b * d.C + c) * int64_t(HW);
      for (int hw = blockIdx.x * blockDim.x + threadIdx.x; hw < HW; hw += gridDim.x * blockDim.x) {
        const int h = hw / d.W, w = hw - h * d.W;
        A acc = 0;
        for (int i = 0; i < d.kh; ++i) {
          const int th = h + d.ph - i * d.dh;
          if (th < 0 || th % d.sh) continue;
          const int oh = th / d.sh;
          if (oh >= d.Ho) continue;
          for (int j = 0; j < d.kw; ++j) {
            const int tw = w + d.pw - j * d.dw;
            if (tw < 0 || tw % d.sw) continue;
            const int ow = tw / d.sw;
            if (ow >= d.Wo) continue;
            acc += static_cast<A>(cs[(i * d.kw + j) * d.row_stride + oh * d.Wo + ow]);
          }
        }
        xs[hw] = static_cast<T>(acc);
      }
    }
}

// g: (B, C, L) -> part: (C, S) partial sums in double. Block (c, s) sums the flat range
// [s*chunk, (s+1)*chunk) of channel c's B*L elements, in units of kVec consecutive elements
// (float32 with L % 4 == 0 and 16-byte alignment: one float4 load each; else kVec = 1); S
// depends only on the sizes.
template <class T, int kVec>
__global__ void channel_sum_partial(const T* __restrict__ g, double* part, int64_t B, int64_t C, int64_t L,
                                    int64_t chunk, int S) {
  const int64_t c = blockIdx.x, s = blockIdx.y, Lv = L / kVec;
  const int64_t n = B * Lv, lo = s * chunk, hi = min(n, lo + chunk);
  double acc = 0;
  // walk (b, l) incrementally: no division per element
  int64_t b = (lo + threadIdx.x) / Lv, l = (lo + threadIdx.x) - b * Lv;
  const int64_t db = blockDim.x / Lv, dl = blockDim.x - db * Lv;
  for (int64_t q = lo + threadIdx.x; q < hi; q += blockDim.x) {
    if constexpr (kVec == 4) {
      const float4 v = reinterpret_cast<const float4*>(g)[(b * C + c) * Lv + l];
      acc += double((v.x + v.y) + (v.z + v.w));
    } else {
      acc += static_cast<double>(static_cast<opmath_t<T>>(g[(b * C + c) * L + l]));
    }
    b += db, l += dl;
    if (l >= Lv) l -= Lv, ++b;
  }
  acc = nn::block_sum(acc);
  if (threadIdx.x == 0) part[c * S + s] = acc;
}

// The partial sums by float4 where vec4 (float32 only: the other dtypes never instantiate it).
template <class T>
void launch_channel_sum_partial(dim3 grid, cudaStream_t stream, bool vec4, const T* g, double* part, int64_t B,
                                int64_t C, int64_t L, int64_t chunk, int S) {
  if constexpr (std::is_same_v<T, float>) {
    if (vec4) {
      channel_sum_partial<T, 4><<<grid, nn::kSumThreads, 0, stream>>>(g, part, B, C, L, chunk, S);
      return;
    }
  }
  channel_sum_partial<T, 1><<<grid, nn::kSumThreads, 0, stream>>>(g, part, B, C, L, chunk, S);
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
  ConvDims d = dims_of(x, col, p, Ho, Wo);
  TT_DISPATCH_FLOATING(x.dtype(), "im2col", [&] {
    im2col_kernel<scalar_t><<<conv_grid(Ho * Wo, col.size(1), d.nb), kThreads, 0, stream>>>(
        x.data<scalar_t>(), col.data<scalar_t>(), d);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_col2im(const Tensor& col, const Tensor& x, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  int64_t total = x.numel();
  if (total == 0) return;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  ConvDims d = dims_of(x, col, p, Ho, Wo);
  TT_DISPATCH_FLOATING(x.dtype(), "col2im", [&] {
    col2im_kernel<scalar_t><<<conv_grid(x.size(2) * x.size(3), d.C, d.nb), kThreads, 0, stream>>>(
        col.data<scalar_t>(), x.data<scalar_t>(), d);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_channel_sum(const Tensor& g, const Tensor& out, bool accumulate) {
  int64_t B = g.size(0), C = g.size(1), L = g.size(2);
  if (C == 0) return;
  DeviceGuard guard(g.device());
  cudaStream_t stream = current_stream(g.device().index);
  // ~16K elements per block, at most 64 blocks per channel (then the chunk grows).
  const bool vec4 = g.dtype() == DType::Float32 && L % 4 == 0 && reinterpret_cast<uintptr_t>(g.data_ptr()) % 16 == 0;
  const int64_t n = B * (vec4 ? L / 4 : L), per_block = vec4 ? 4096 : 16384;
  int S = static_cast<int>(std::min<int64_t>(64, std::max<int64_t>(1, (n + per_block - 1) / per_block)));
  int64_t chunk = std::max<int64_t>(1, (n + S - 1) / S);
  TT_CHECK(C <= INT_MAX, "channel_sum: too many channels (", C, ")");
  Tensor part = Tensor::empty({C * S}, DType::Float64, g.device());
  TT_DISPATCH_FLOATING(g.dtype(), "channel_sum", [&] {
    using T = scalar_t;
    launch_channel_sum_partial<T>(dim3(static_cast<unsigned>(C), static_cast<unsigned>(S)), stream, vec4,
                                  g.data<T>(), part.data<double>(), B, C, L, chunk, S);
    TT_CUDA_KERNEL_CHECK();
    channel_sum_final<T><<<static_cast<unsigned>((C + 7) / 8), 256, 0, stream>>>(part.data<double>(), out.data<T>(),
                                                                                 C, S, accumulate);
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, im2col, col2im, channel_sum)

}  // namespace tt::cuda
