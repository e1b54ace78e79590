// CUDA 2-D pooling over planes (P = B*C): max (with argmax indices), average, adaptive average,
// and their backwards. Every backward is deterministic and sums in the CPU kernel's order:
// avg/adaptive gather (one thread per input element walks the windows that cover it, in
// output order); max scatters by index with one warp per plane, lanes that hit the same input
// grouped with __match_any_sync and summed in output order by the group's first lane.
#include <cmath>
#include <type_traits>
#include "tinytorch/cuda/device_assert.cuh"
#include "tinytorch/cuda/int_divider.h"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/pool.h"

namespace tt::cuda {
namespace {

struct PlaneDims {
  int64_t P, H, W, Ho, Wo;
};

// Below 2^31 elements per tensor the max-pool kernels index in 32 bits (unsigned, with
// multiply-high division by Wo and Ho); larger tensors take the 64-bit instantiation.
template <class I>
struct OutSplit;
template <>
struct OutSplit<uint32_t> {
  IntDivider wo, ho;
  OutSplit(const PlaneDims& d) : wo(uint32_t(d.Wo)), ho(uint32_t(d.Ho)) {}
  // o -> (plane, oh, ow) of (P, Ho, Wo)
  __device__ __forceinline__ void split(uint32_t o, uint32_t& pl, uint32_t& oh, uint32_t& ow) const {
    const uint32_t q = wo.div(o);
    ow = o - q * wo.divisor;
    pl = ho.div(q);
    oh = q - pl * ho.divisor;
  }
};
template <>
struct OutSplit<int64_t> {
  int64_t Wo, Ho;
  OutSplit(const PlaneDims& d) : Wo(d.Wo), Ho(d.Ho) {}
  __device__ __forceinline__ void split(int64_t o, int64_t& pl, int64_t& oh, int64_t& ow) const {
    ow = o % Wo, oh = (o / Wo) % Ho, pl = o / (Wo * Ho);
  }
};

bool fits_32bit(int64_t n) { return n < (int64_t(1) << 31); }

// x: (P, H, W) -> out, idx: (P, Ho, Wo). NaN wins, like PyTorch; ties keep the first position.
// I: the index type (uint32_t or int64_t); window offsets are signed ints (kernel, stride,
// padding and dilation are small), positions within a plane are int64 only in the 64-bit case.
template <class T, class I>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ out, int64_t* __restrict__ idx,
                                PlaneDims d, Pool2dParams p, OutSplit<I> os) {
  using A = opmath_t<T>;
  using S = std::conditional_t<std::is_same_v<I, uint32_t>, int32_t, int64_t>;  // signed positions
  const I total = I(d.P * d.Ho * d.Wo);
  const S H = S(d.H), W = S(d.W), kh = S(p.kh), kw = S(p.kw), sh = S(p.sh), sw = S(p.sw);
  const S ph = S(p.ph), pw = S(p.pw), dh = S(p.dh), dw = S(p.dw);
  for (I o = I(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += I(gridDim.x) * blockDim.x) {
    I pl, oh, ow;
    os.split(o, pl, oh, ow);
    const T* xs = x + pl * I(H) * I(W);
    A best = -INFINITY;
    S bi = -1;
    bool found_nan = false;
    for (S i = 0; i < kh && !found_nan; ++i) {
      const S ih = S(oh) * sh - ph + i * dh;
      if (ih < 0 || ih >= H) continue;
      for (S j = 0; j < kw; ++j) {
        const S iw = S(ow) * sw - pw + j * dw;
        if (iw < 0 || iw >= W) continue;
        A v = static_cast<A>(xs[ih * W + iw]);
        if (bi < 0 || v > best || isnan(v)) {
          best = v, bi = ih * W + iw;
          if (isnan(v)) { found_nan = true; break; }
        }
      }
    }
    out[o] = static_cast<T>(best);
    idx[o] = bi < 0 ? 0 : int64_t(bi);
  }
}

constexpr int kWarpsPerBlock = kThreads / 32;

// gout, idx: (P, Ho, Wo) -> acc: (P, H, W) (zeroed; opmath type) with acc[idx] += gout, one warp
// per plane, 32 outputs at a time in order. Lanes with equal idx form a group; its lowest lane
// adds the group's values in lane order, so every sum runs in output order, like the CPU loop.
// I: the index type (uint32_t when P * HW and P * L fit in 31 bits; int64_t else).
template <class T, class A, class I>
__global__ void max_pool_backward_kernel(const T* __restrict__ gout, const int64_t* __restrict__ idx, A* acc,
                                         I P, I HW, I L) {
  __shared__ A vals[kWarpsPerBlock][32];
  int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  I warp = I(blockIdx.x) * kWarpsPerBlock + wib, nwarps = I(gridDim.x) * kWarpsPerBlock;
  for (I pl = warp; pl < P; pl += nwarps) {
    const T* gp = gout + pl * L;
    const int64_t* ip = idx + pl * L;
    A* ap = acc + pl * HW;
    for (I base = 0; base < L; base += 32) {
      I l = base + lane;
      bool active = l < L;
      int64_t k = active ? ip[l] : -1;
      if (active) TT_CUDA_KERNEL_ASSERT(k >= 0 && k < int64_t(HW));
      vals[wib][lane] = active ? static_cast<A>(gp[l]) : A(0);
      // peers: lanes with the same target (a 32-bit match where positions fit, -1 = inactive)
      unsigned peers = std::is_same_v<I, uint32_t> ? __match_any_sync(0xffffffffu, static_cast<unsigned>(k))
                                                   : __match_any_sync(0xffffffffu, static_cast<unsigned long long>(k));
      __syncwarp();
      if (active && (__ffs(peers) - 1) == lane) {
        A s = ap[k];
        for (unsigned m = peers; m; m &= m - 1) s += vals[wib][__ffs(m) - 1];
        ap[k] = s;
      }
      __syncwarp();  // acc writes visible, vals free for the next 32 outputs
    }
  }
}

// acc (float) -> gx (16-bit), elementwise.
template <class T>
__global__ void round_store_kernel(const float* __restrict__ acc, T* __restrict__ out, int64_t n) {
  TT_GRID_STRIDE(i, n) { out[i] = static_cast<T>(acc[i]); }
}
template <class T>
void round_store(const float* acc, T* out, int64_t n, cudaStream_t stream) {
  round_store_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(acc, out, n);
  TT_CUDA_KERNEL_CHECK();
}
// float32/float64 accumulate in gx itself: nothing to do.
void round_store(const float*, float*, int64_t, cudaStream_t) {}
void round_store(const double*, double*, int64_t, cudaStream_t) {}

// One average-pool window: clamped bounds and the divisor PyTorch uses (as the CPU kernel).
struct Window { int64_t h0, h1, w0, w1; double div; };
__device__ __forceinline__ Window avg_window(const Pool2dParams& p, int64_t H, int64_t W, int64_t oh, int64_t ow) {
  int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
  int64_t h1 = min(h0 + p.kh, H + p.ph), w1 = min(w0 + p.kw, W + p.pw);
  int64_t pool = (h1 - h0) * (w1 - w0);
  h0 = max(h0, int64_t(0)), w0 = max(w0, int64_t(0));
  h1 = min(h1, H), w1 = min(w1, W);
  double div = p.divisor_override ? static_cast<double>(p.divisor_override)
               : p.count_include_pad ? static_cast<double>(pool)
                                     : static_cast<double>((h1 - h0) * (w1 - w0));
  return {h0, h1, w0, w1, div};
}

// x: (P, H, W) -> out: (P, Ho, Wo)
template <class T>
__global__ void avg_pool_kernel(const T* __restrict__ x, T* __restrict__ out, PlaneDims d, Pool2dParams p) {
  using A = opmath_t<T>;
  int64_t total = d.P * d.Ho * d.Wo;
  TT_GRID_STRIDE(o, total) {
    int64_t ow = o % d.Wo, oh = (o / d.Wo) % d.Ho, pl = o / (d.Wo * d.Ho);
    Window w = avg_window(p, d.H, d.W, oh, ow);
    const T* xs = x + pl * d.H * d.W;
    A s = 0;
    for (int64_t ih = w.h0; ih < w.h1; ++ih)
      for (int64_t iw = w.w0; iw < w.w1; ++iw) s += static_cast<A>(xs[ih * d.W + iw]);
    bool empty = w.h0 >= w.h1 || w.w0 >= w.w1;
    out[o] = static_cast<T>(empty ? A(0) : static_cast<A>(s / w.div));
  }
}

// Outputs o along one axis whose window [o*s - pad, o*s - pad + k) holds input position h.
__device__ __forceinline__ void covering(int64_t h, int64_t k, int64_t s, int64_t pad, int64_t n_out, int64_t& lo,
                                         int64_t& hi) {
  int64_t t = h + pad;  // >= 0
  lo = t < k ? 0 : (t - k) / s + 1;
  hi = min(n_out - 1, t / s);
}

// gout: (P, Ho, Wo) -> gx: (P, H, W); thread per input element, windows in (oh, ow) order.
template <class T>
__global__ void avg_pool_backward_kernel(const T* __restrict__ gout, T* __restrict__ gx, PlaneDims d,
                                         Pool2dParams p) {
  using A = opmath_t<T>;
  int64_t total = d.P * d.H * d.W;
  TT_GRID_STRIDE(e, total) {
    int64_t w = e % d.W, h = (e / d.W) % d.H, pl = e / (d.W * d.H);
    int64_t oh0, oh1, ow0, ow1;
    covering(h, p.kh, p.sh, p.ph, d.Ho, oh0, oh1);
    covering(w, p.kw, p.sw, p.pw, d.Wo, ow0, ow1);
    const T* gp = gout + pl * d.Ho * d.Wo;
    A acc = 0;
    for (int64_t oh = oh0; oh <= oh1; ++oh)
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        Window win = avg_window(p, d.H, d.W, oh, ow);
        if (h < win.h0 || h >= win.h1 || w < win.w0 || w >= win.w1) continue;
        acc += static_cast<A>(static_cast<A>(gp[oh * d.Wo + ow]) / win.div);
      }
    gx[e] = static_cast<T>(acc);
  }
}

__device__ __forceinline__ int64_t ad_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
__device__ __forceinline__ int64_t ad_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// x: (P, H, W) -> out: (P, Ho, Wo); window [floor(o*H/Ho), ceil((o+1)*H/Ho)).
template <class T>
__global__ void adaptive_avg_kernel(const T* __restrict__ x, T* __restrict__ out, PlaneDims d) {
  using A = opmath_t<T>;
  int64_t total = d.P * d.Ho * d.Wo;
  TT_GRID_STRIDE(o, total) {
    int64_t ow = o % d.Wo, oh = (o / d.Wo) % d.Ho, pl = o / (d.Wo * d.Ho);
    int64_t h0 = ad_start(oh, d.H, d.Ho), h1 = ad_end(oh, d.H, d.Ho);
    int64_t w0 = ad_start(ow, d.W, d.Wo), w1 = ad_end(ow, d.W, d.Wo);
    const T* xs = x + pl * d.H * d.W;
    A s = 0;
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw) s += static_cast<A>(xs[ih * d.W + iw]);
    out[o] = static_cast<T>(s / static_cast<A>((h1 - h0) * (w1 - w0)));
  }
}

// gout: (P, Ho, Wo) -> gx: (P, H, W). Input h lies in the windows of outputs
// [floor(h*Ho/H), ceil((h+1)*Ho/H) - 1]; each is checked explicitly, visited in (oh, ow) order.
template <class T>
__global__ void adaptive_avg_backward_kernel(const T* __restrict__ gout, T* __restrict__ gx, PlaneDims d) {
  using A = opmath_t<T>;
  int64_t total = d.P * d.H * d.W;
  TT_GRID_STRIDE(e, total) {
    int64_t w = e % d.W, h = (e / d.W) % d.H, pl = e / (d.W * d.H);
    int64_t oh0 = (h * d.Ho) / d.H, oh1 = min(d.Ho - 1, ((h + 1) * d.Ho + d.H - 1) / d.H - 1);
    int64_t ow0 = (w * d.Wo) / d.W, ow1 = min(d.Wo - 1, ((w + 1) * d.Wo + d.W - 1) / d.W - 1);
    const T* gp = gout + pl * d.Ho * d.Wo;
    A acc = 0;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      int64_t h0 = ad_start(oh, d.H, d.Ho), h1 = ad_end(oh, d.H, d.Ho);
      if (h < h0 || h >= h1) continue;
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        int64_t w0 = ad_start(ow, d.W, d.Wo), w1 = ad_end(ow, d.W, d.Wo);
        if (w < w0 || w >= w1) continue;
        acc += static_cast<A>(gp[oh * d.Wo + ow]) / static_cast<A>((h1 - h0) * (w1 - w0));
      }
    }
    gx[e] = static_cast<T>(acc);
  }
}

PlaneDims dims(const Tensor& in, const Tensor& out) {
  return {in.size(0), in.size(1), in.size(2), out.size(1), out.size(2)};
}

// Device guard and current stream of the tensor a kernel entry launches for.
struct Launch {
  DeviceGuard guard;
  cudaStream_t stream;
  explicit Launch(const Tensor& t) : guard(t.device()), stream(current_stream(t.device().index)) {}
};

void cuda_max_pool2d(const Tensor& x, const Tensor& out, const Tensor& idx, const Pool2dParams& p) {
  if (out.numel() == 0) return;
  Launch l(x);
  const PlaneDims d = dims(x, out);
  TT_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] {
    using T = scalar_t;
    if (fits_32bit(x.numel()) && fits_32bit(out.numel()))
      max_pool_kernel<T, uint32_t><<<grid_for(out.numel()), kThreads, 0, l.stream>>>(
          x.data<T>(), out.data<T>(), idx.data<int64_t>(), d, p, OutSplit<uint32_t>(d));
    else
      max_pool_kernel<T, int64_t><<<grid_for(out.numel()), kThreads, 0, l.stream>>>(
          x.data<T>(), out.data<T>(), idx.data<int64_t>(), d, p, OutSplit<int64_t>(d));
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_max_pool2d_backward(const Tensor& gout, const Tensor& idx, const Tensor& gx) {
  int64_t P = gx.size(0), HW = gx.size(1) * gx.size(2), L = gout.size(1) * gout.size(2), n = gx.numel();
  if (n == 0) return;
  Launch l(gx);
  TT_DISPATCH_FLOATING(gx.dtype(), "max_pool2d_backward", [&] {
    using T = scalar_t;
    using A = opmath_t<T>;
    // Accumulate in place when T is its own opmath type, else in a float buffer rounded after.
    Tensor buf = std::is_same_v<T, A> ? gx : Tensor::empty({n}, DType::Float32, gx.device());
    A* acc = static_cast<A*>(buf.data_ptr());
    TT_CUDA_CHECK(cudaMemsetAsync(acc, 0, static_cast<size_t>(n) * sizeof(A), l.stream));
    if (L > 0) {
      unsigned blocks = static_cast<unsigned>(std::min<int64_t>((P + kWarpsPerBlock - 1) / kWarpsPerBlock, 65535LL * 8));
      if (fits_32bit(n) && fits_32bit(gout.numel()))
        max_pool_backward_kernel<T, A, uint32_t><<<blocks, kThreads, 0, l.stream>>>(
            gout.data<T>(), idx.data<int64_t>(), acc, uint32_t(P), uint32_t(HW), uint32_t(L));
      else
        max_pool_backward_kernel<T, A, int64_t><<<blocks, kThreads, 0, l.stream>>>(
            gout.data<T>(), idx.data<int64_t>(), acc, P, HW, L);
      TT_CUDA_KERNEL_CHECK();
    }
    round_store(acc, gx.data<T>(), n, l.stream);
  });
}

void cuda_avg_pool2d(const Tensor& x, const Tensor& out, const Pool2dParams& p) {
  if (out.numel() == 0) return;
  Launch l(x);
  TT_DISPATCH_FLOATING(x.dtype(), "avg_pool2d", [&] {
    avg_pool_kernel<scalar_t><<<grid_for(out.numel()), kThreads, 0, l.stream>>>(x.data<scalar_t>(),
                                                                                 out.data<scalar_t>(), dims(x, out), p);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_avg_pool2d_backward(const Tensor& gout, const Tensor& gx, const Pool2dParams& p) {
  if (gx.numel() == 0) return;
  Launch l(gx);
  TT_DISPATCH_FLOATING(gx.dtype(), "avg_pool2d_backward", [&] {
    avg_pool_backward_kernel<scalar_t><<<grid_for(gx.numel()), kThreads, 0, l.stream>>>(
        gout.data<scalar_t>(), gx.data<scalar_t>(), dims(gx, gout), p);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_adaptive_avg_pool2d(const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  Launch l(x);
  TT_DISPATCH_FLOATING(x.dtype(), "adaptive_avg_pool2d", [&] {
    adaptive_avg_kernel<scalar_t><<<grid_for(out.numel()), kThreads, 0, l.stream>>>(
        x.data<scalar_t>(), out.data<scalar_t>(), dims(x, out));
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_adaptive_avg_pool2d_backward(const Tensor& gout, const Tensor& gx) {
  if (gx.numel() == 0) return;
  Launch l(gx);
  TT_DISPATCH_FLOATING(gx.dtype(), "adaptive_avg_pool2d_backward", [&] {
    adaptive_avg_backward_kernel<scalar_t><<<grid_for(gx.numel()), kThreads, 0, l.stream>>>(
        gout.data<scalar_t>(), gx.data<scalar_t>(), dims(gx, gout));
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, max_pool2d, max_pool2d_backward, avg_pool2d, avg_pool2d_backward, adaptive_avg_pool2d,
                    adaptive_avg_pool2d_backward)

}  // namespace tt::cuda
