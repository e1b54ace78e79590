// CUDA softmax / log_softmax (+ backward) and layer_norm / rms_norm (+ backward).
// Rows (the reduced dim innermost) go to one warp each when short and one block each when long;
// the (O, L, I > 1) layouts use one thread per column, coalesced along I. Statistics are
// computed in opmath (float for 16-bit types) with fixed reduction orders (deterministic).
#include <algorithm>
#include <cmath>
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/norm.h"
#include "tinytorch/norm_math.h"

namespace tt::cuda {
namespace {

// A group of G threads owns one row: G == 32 -> a warp (8 rows per 256-thread block),
// otherwise the whole block of G threads.
template <int G>
struct RowGroup {
  static constexpr int kThreads = G == 32 ? 256 : G;
  static constexpr int kRowsPerBlock = kThreads / G;
  __device__ static int lane() { return G == 32 ? threadIdx.x % 32 : threadIdx.x; }
  __device__ static int64_t first_row() { return int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / G; }
  __device__ static int64_t row_stride() { return int64_t(gridDim.x) * kRowsPerBlock; }
  // All-reduce over the group; smem: kThreads / 32 elements.
  template <class T, class Op>
  __device__ static T allreduce(T v, Op op, T* smem) {
    if constexpr (G == 32) return warp_allreduce(v, op);
    else return block_allreduce(v, op, smem);
  }
};

constexpr int kLongRowThreads = 512;

}  // namespace
}  // namespace tt::cuda
#include "norm_rows.cuh"
namespace tt::cuda {
namespace {

// Launches kernel<G> with G = 32 for rows of at most warp_max elements, else 512-thread blocks.
template <class Launch>
void launch_rows(int64_t rows, int64_t len, cudaStream_t stream, const Launch& launch, int64_t warp_max = 1024) {
  if (len <= warp_max) {
    const int64_t blocks = std::min<int64_t>((rows + 7) / 8, 65535LL * 8);
    launch(std::integral_constant<int, 32>(), unsigned(blocks), stream);
  } else {
    const int64_t blocks = std::min<int64_t>(rows, 65535LL * 8);
    launch(std::integral_constant<int, kLongRowThreads>(), unsigned(blocks), stream);
  }
  TT_CUDA_KERNEL_CHECK();
}

// ---------------------------------------------------------------- softmax forward

// x, y: (rows, L). Three passes over the row (max, sum of exp, write); the re-reads hit cache.
template <class T, int G>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) softmax_rows_kernel(const T* __restrict__ x,
                                                                             T* __restrict__ y, int64_t rows,
                                                                             int64_t L, bool is_log) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  __shared__ M smem[Grp::kThreads / 32];
  for (int64_t row = Grp::first_row(); row < rows; row += Grp::row_stride()) {
    const T* xr = x + row * L;
    T* yr = y + row * L;
    M m = -INFINITY;
    for (int64_t j = Grp::lane(); j < L; j += G) m = NanMaxOp()(m, M(xr[j]));
    m = Grp::allreduce(m, NanMaxOp(), smem);
    // NaN, +inf or all -inf: every output is NaN, as the CPU's std::exp path gives.
    if (!std::isfinite(m)) m = NAN;
    M s = 0;
    for (int64_t j = Grp::lane(); j < L; j += G) s += std::exp(M(xr[j]) - m);
    s = Grp::allreduce(s, AddOp(), smem);
    if (is_log) {  // (x - m) - log(s), not x - (m + log(s)): exact for large |x|
      const M ls = std::log(s);
      for (int64_t j = Grp::lane(); j < L; j += G) yr[j] = T((M(xr[j]) - m) - ls);
    } else {
      const M inv = M(1) / s;
      for (int64_t j = Grp::lane(); j < L; j += G) yr[j] = T(std::exp(M(xr[j]) - m) * inv);
    }
  }
}

// x, y: (O, L, I), I > 1; one thread per (o, i) column.
template <class T>
__global__ void softmax_cols_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t O, int64_t L, int64_t I,
                                    bool is_log) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(c, O * I) {
    const int64_t base = (c / I) * L * I + c % I;
    M m = -INFINITY;
    for (int64_t l = 0; l < L; ++l) m = NanMaxOp()(m, M(x[base + l * I]));
    if (!std::isfinite(m)) m = NAN;
    M s = 0;
    for (int64_t l = 0; l < L; ++l) s += std::exp(M(x[base + l * I]) - m);
    if (is_log) {
      const M ls = std::log(s);
      for (int64_t l = 0; l < L; ++l) y[base + l * I] = T((M(x[base + l * I]) - m) - ls);
    } else {
      const M inv = M(1) / s;
      for (int64_t l = 0; l < L; ++l) y[base + l * I] = T(std::exp(M(x[base + l * I]) - m) * inv);
    }
  }
}

void cuda_softmax(bool is_log, const Tensor& x, const Tensor& y) {
  const int64_t O = x.size(0), L = x.size(1), I = x.size(2);
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_FLOATING(x.dtype(), is_log ? "log_softmax" : "softmax", [&] {
    using T = scalar_t;
    const bool aligned = aligned16(x.data<T>()) && aligned16(y.data<T>());
    if (I == 1 && norm_rows::launch_reg_rows<T>(O, L, aligned, [&](auto grp, auto k, unsigned blocks) {
          constexpr int G = decltype(grp)::value, K = decltype(k)::value;
          norm_rows::softmax_reg_kernel<T, G, K><<<blocks, RowGroup<G>::kThreads, 0, stream>>>(
              x.data<T>(), y.data<T>(), O, int(L / norm_rows::kVec<T>), is_log);
        })) {
      return;
    }
    if (I == 1) {
      launch_rows(O, L, stream, [&](auto g, unsigned blocks, cudaStream_t s) {
        constexpr int G = decltype(g)::value;
        softmax_rows_kernel<T, G><<<blocks, RowGroup<G>::kThreads, 0, s>>>(x.data<T>(), y.data<T>(), O, L, is_log);
      });
    } else {
      softmax_cols_kernel<T><<<grid_for(O * I), kThreads, 0, stream>>>(x.data<T>(), y.data<T>(), O, L, I, is_log);
      TT_CUDA_KERNEL_CHECK();
    }
  });
}

// ---------------------------------------------------------------- softmax backward
// softmax: gin = out * (g - sum_L(g * out)); log_softmax: gin = g - exp(out) * sum_L(g).

template <class T, int G>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) softmax_bwd_rows_kernel(
    const T* __restrict__ g, const T* __restrict__ out, T* __restrict__ gin, int64_t rows, int64_t L, bool is_log) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  __shared__ M smem[Grp::kThreads / 32];
  for (int64_t row = Grp::first_row(); row < rows; row += Grp::row_stride()) {
    const int64_t b = row * L;
    M s = 0;
    for (int64_t j = Grp::lane(); j < L; j += G) s += is_log ? M(g[b + j]) : M(g[b + j]) * M(out[b + j]);
    s = Grp::allreduce(s, AddOp(), smem);
    for (int64_t j = Grp::lane(); j < L; j += G) {
      const M gv = M(g[b + j]), ov = M(out[b + j]);
      gin[b + j] = norm::softmax_grad<T>(is_log, gv, ov, s, norm::StdExp());
    }
  }
}

template <class T>
__global__ void softmax_bwd_cols_kernel(const T* __restrict__ g, const T* __restrict__ out, T* __restrict__ gin,
                                        int64_t O, int64_t L, int64_t I, bool is_log) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(c, O * I) {
    const int64_t base = (c / I) * L * I + c % I;
    M s = 0;
    for (int64_t l = 0; l < L; ++l) {
      const int64_t k = base + l * I;
      s += is_log ? M(g[k]) : M(g[k]) * M(out[k]);
    }
    for (int64_t l = 0; l < L; ++l) {
      const int64_t k = base + l * I;
      gin[k] = norm::softmax_grad<T>(is_log, M(g[k]), M(out[k]), s, norm::StdExp());
    }
  }
}

void cuda_softmax_backward(bool is_log, const Tensor& g, const Tensor& out, const Tensor& gin) {
  const int64_t O = g.size(0), L = g.size(1), I = g.size(2);
  DeviceGuard guard(g.device());
  cudaStream_t stream = current_stream(g.device().index);
  TT_DISPATCH_FLOATING(g.dtype(), "softmax_backward", [&] {
    using T = scalar_t;
    if (I == 1) {
      launch_rows(O, L, stream, [&](auto grp, unsigned blocks, cudaStream_t s) {
        constexpr int G = decltype(grp)::value;
        softmax_bwd_rows_kernel<T, G><<<blocks, RowGroup<G>::kThreads, 0, s>>>(g.data<T>(), out.data<T>(),
                                                                              gin.data<T>(), O, L, is_log);
      });
    } else {
      softmax_bwd_cols_kernel<T><<<grid_for(O * I), kThreads, 0, stream>>>(g.data<T>(), out.data<T>(), gin.data<T>(),
                                                                           O, L, I, is_log);
      TT_CUDA_KERNEL_CHECK();
    }
  });
}

// ---------------------------------------------------------------- layer_norm / rms_norm

// Calls f(v) on this lane's elements of a row, V at a time (one 16-byte load when V > 1).
template <int G, int V, class T, class F>
__device__ __forceinline__ void row_each(const T* __restrict__ r, int64_t D, F f) {
  if constexpr (V == 1) {
    for (int64_t j = RowGroup<G>::lane(); j < D; j += G) f(r[j]);
  } else {
    const Vec<T, V>* rv = reinterpret_cast<const Vec<T, V>*>(r);
    for (int64_t q = RowGroup<G>::lane(); q < D / V; q += G) {
      const Vec<T, V> v = rv[q];
#pragma unroll
      for (int k = 0; k < V; ++k) f(v.v[k]);
    }
  }
}

// x: (N, D), w/b: (D) or null -> y: (N, D), mean (null for rms) / rstd: (N) in M.
// Two passes as the CPU: the mean, then squared deviations (no cancellation); then the write.
// V = 8 for 16-bit types on 16-byte aligned rows (one 16-byte load per lane).
template <class T, int G, int V>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) layer_norm_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
    opmath_t<T>* __restrict__ mean_out, opmath_t<T>* __restrict__ rstd_out, int64_t N, int64_t D, opmath_t<T> eps,
    bool rms) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  __shared__ M smem[Grp::kThreads / 32];
  for (int64_t row = Grp::first_row(); row < N; row += Grp::row_stride()) {
    const T* xr = x + row * D;
    M mu = 0, var = 0;
    if (rms) {
      row_each<G, V>(xr, D, [&](T t) { const M v = M(t); var += v * v; });
      var = Grp::allreduce(var, AddOp(), smem) / M(D);
    } else {
      const M x0 = M(xr[0]);  // the mean relative to the first element, as the CPU's
      row_each<G, V>(xr, D, [&](T t) { mu += M(t) - x0; });
      mu = x0 + Grp::allreduce(mu, AddOp(), smem) / M(D);
      row_each<G, V>(xr, D, [&](T t) { const M d = M(t) - mu; var += d * d; });
      var = Grp::allreduce(var, AddOp(), smem) / M(D);
    }
    const M rstd = norm::rstd(var, eps);
    if (Grp::lane() == 0) {
      if (mean_out) mean_out[row] = mu;
      rstd_out[row] = rstd;
    }
    T* yr = y + row * D;
    for (int64_t q = Grp::lane(); q < D / V; q += G) {
      Vec<T, V> xv = reinterpret_cast<const Vec<T, V>*>(xr)[q], wv, bv, out;
      if (w) wv = reinterpret_cast<const Vec<T, V>*>(w)[q];
      if (b) bv = reinterpret_cast<const Vec<T, V>*>(b)[q];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        M v = (M(xv.v[k]) - mu) * rstd;
        if (w) v *= M(wv.v[k]);
        if (b) v += M(bv.v[k]);
        out.v[k] = T(v);
      }
      reinterpret_cast<Vec<T, V>*>(yr)[q] = out;
    }
  }
}

// Rows of up to 8 KiB get a warp each (shuffle all-reduces, 8 rows per block) when they take
// 16-byte loads: with one 512-thread block per 4096-element bf16 row the two block all-reduces
// per row, not the memory, set the pace (H200: 0.54x torch -> 0.96x). Longer rows and scalar
// loads above 1024 elements keep 512-thread blocks (float32 at 4096 with a warp: 0.59x).
constexpr int64_t kNormWarpMaxBytes = 8192;

void cuda_layer_norm(bool rms, const Tensor& x, const Tensor& w, const Tensor& b, double eps, const Tensor& y,
                     const Tensor& mean, const Tensor& rstd) {
  const int64_t N = x.size(0), D = x.size(1);
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_FLOATING(x.dtype(), rms ? "rms_norm" : "layer_norm", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    // 16-bit types take 16-byte loads (2-byte ones can't keep up with the memory). float32 keeps
    // scalar loads: on H200 its (16384, 4096) forward runs at 0.93x torch that way, 0.67-0.69x
    // with float4.
    constexpr int V = sizeof(T) == 2 ? 8 : 1;
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const T* bp = b.defined() ? b.data<T>() : nullptr;
    M* mp = mean.defined() ? mean.data<M>() : nullptr;
    const bool aligned = aligned16(x.data<T>()) && aligned16(y.data<T>()) && (!wp || aligned16(wp)) &&
                         (!bp || aligned16(bp));
    const bool vec = V > 1 && D % V == 0 && aligned;
    if (norm_rows::launch_reg_rows<T>(N, D, aligned, [&](auto grp, auto k, unsigned blocks) {
          constexpr int G = decltype(grp)::value, K = decltype(k)::value;
          norm_rows::layer_norm_reg_kernel<T, G, K><<<blocks, RowGroup<G>::kThreads, 0, stream>>>(
              x.data<T>(), wp, bp, y.data<T>(), mp, rstd.data<M>(), N, int(D / norm_rows::kVec<T>), M(eps), rms);
        })) {
      return;
    }
    launch_rows(N, D, stream, [&](auto grp, unsigned blocks, cudaStream_t s) {
      constexpr int G = decltype(grp)::value;
      if (vec)
        layer_norm_kernel<T, G, V><<<blocks, RowGroup<G>::kThreads, 0, s>>>(x.data<T>(), wp, bp, y.data<T>(), mp,
                                                                           rstd.data<M>(), N, D, M(eps), rms);
      else
        layer_norm_kernel<T, G, 1><<<blocks, RowGroup<G>::kThreads, 0, s>>>(x.data<T>(), wp, bp, y.data<T>(), mp,
                                                                           rstd.data<M>(), N, D, M(eps), rms);
    }, vec ? kNormWarpMaxBytes / int64_t(sizeof(T)) : 1024);
  });
}

// ---------------------------------------------------------------- layer_norm backward
// With xhat = (x - mean) * rstd and gh = g * w:
//   layer_norm: gx = rstd * (gh - mean_D(gh) - xhat * mean_D(gh * xhat))
//   rms_norm:   gx = rstd * (gh - xhat * mean_D(gh * xhat))

template <class T, int G>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) layer_norm_bwd_x_kernel(
    const T* __restrict__ g, const T* __restrict__ x, const opmath_t<T>* __restrict__ mean,
    const opmath_t<T>* __restrict__ rstd, const T* __restrict__ w, T* __restrict__ gx, int64_t N, int64_t D, bool rms) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  __shared__ M smem[Grp::kThreads / 32];
  for (int64_t row = Grp::first_row(); row < N; row += Grp::row_stride()) {
    const int64_t base = row * D;
    const M mu = mean ? mean[row] : M(0), rs = rstd[row];
    M s1 = 0, s2 = 0;
    for (int64_t j = Grp::lane(); j < D; j += G) {
      const M gh = w ? M(g[base + j]) * M(w[j]) : M(g[base + j]);
      s1 += gh;
      s2 += gh * (M(x[base + j]) - mu) * rs;
    }
    s1 = Grp::allreduce(s1, AddOp(), smem);
    s2 = Grp::allreduce(s2, AddOp(), smem);
    const M a = rms ? M(0) : s1 / M(D), c = s2 / M(D);
    for (int64_t j = Grp::lane(); j < D; j += G) {
      const M gh = w ? M(g[base + j]) * M(w[j]) : M(g[base + j]);
      const M xhat = (M(x[base + j]) - mu) * rs;
      gx[base + j] = T(norm::norm_input_grad(gh, xhat, rs, a, c));
    }
  }
}

// gw[j] = sum_i g[i, j] * xhat[i, j], gb[j] = sum_i g[i, j]: a block holds 32 columns x 8 row
// lanes; gridDim.y splits the rows. Partials go to ws (splits, 2, D) when split, and a second
// kernel adds them in split order (deterministic).
constexpr int kColTile = 32, kRowLanes = 8;

template <class T>
__global__ void __launch_bounds__(kColTile* kRowLanes) layer_norm_bwd_params_kernel(
    const T* __restrict__ g, const T* __restrict__ x, const opmath_t<T>* __restrict__ mean,
    const opmath_t<T>* __restrict__ rstd, T* __restrict__ gw, T* __restrict__ gb, opmath_t<T>* __restrict__ ws,
    int64_t N, int64_t D, int64_t chunk) {
  using M = opmath_t<T>;
  __shared__ M sw[kRowLanes][kColTile], sb[kRowLanes][kColTile];
  const int cl = threadIdx.x % kColTile, rl = threadIdx.x / kColTile;
  const int64_t j = int64_t(blockIdx.x) * kColTile + cl;
  const int64_t r0 = int64_t(blockIdx.y) * chunk, r1 = r0 + chunk < N ? r0 + chunk : N;
  M aw = 0, ab = 0;
  if (j < D) {
    for (int64_t i = r0 + rl; i < r1; i += kRowLanes) {
      const M gv = M(g[i * D + j]);
      const M mu = mean ? mean[i] : M(0);
      aw += gv * (M(x[i * D + j]) - mu) * rstd[i];
      ab += gv;
    }
  }
  sw[rl][cl] = aw;
  sb[rl][cl] = ab;
  __syncthreads();
  for (int s = kRowLanes / 2; s > 0; s >>= 1) {
    if (rl < s) {
      sw[rl][cl] += sw[rl + s][cl];
      sb[rl][cl] += sb[rl + s][cl];
    }
    __syncthreads();
  }
  if (rl == 0 && j < D) {
    if (gridDim.y == 1) {
      if (gw) gw[j] = T(sw[0][cl]);
      if (gb) gb[j] = T(sb[0][cl]);
    } else {
      ws[(int64_t(blockIdx.y) * 2) * D + j] = sw[0][cl];
      ws[(int64_t(blockIdx.y) * 2 + 1) * D + j] = sb[0][cl];
    }
  }
}

template <class T>
__global__ void layer_norm_bwd_params_finish_kernel(const opmath_t<T>* __restrict__ ws, T* __restrict__ gw,
                                                    T* __restrict__ gb, int64_t D, int splits) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(j, D) {
    M aw = 0, ab = 0;
    for (int s = 0; s < splits; ++s) {
      aw += ws[(int64_t(s) * 2) * D + j];
      ab += ws[(int64_t(s) * 2 + 1) * D + j];
    }
    if (gw) gw[j] = T(aw);
    if (gb) gb[j] = T(ab);
  }
}

void cuda_layer_norm_backward(bool rms, const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                              const Tensor& w, const Tensor& gx, const Tensor& gw, const Tensor& gb) {
  const int64_t N = x.size(0), D = x.size(1);
  const int dev = x.device().index;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(dev);
  TT_DISPATCH_FLOATING(x.dtype(), rms ? "rms_norm_backward" : "layer_norm_backward", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    const M* mp = mean.defined() ? mean.data<M>() : nullptr;
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const bool aligned = aligned16(g.data<T>()) && aligned16(x.data<T>()) && aligned16(gx.data<T>()) &&
                         (!wp || aligned16(wp));
    const bool reg = norm_rows::launch_reg_rows<T>(N, D, aligned, [&](auto grp, auto k, unsigned blocks) {
      constexpr int G = decltype(grp)::value, K = decltype(k)::value;
      norm_rows::layer_norm_bwd_x_reg_kernel<T, G, K><<<blocks, RowGroup<G>::kThreads, 0, stream>>>(
          g.data<T>(), x.data<T>(), mp, rstd.data<M>(), wp, gx.data<T>(), N, int(D / norm_rows::kVec<T>), rms);
    }, 2048);
    if (!reg) launch_rows(N, D, stream, [&](auto grp, unsigned blocks, cudaStream_t s) {
      constexpr int G = decltype(grp)::value;
      layer_norm_bwd_x_kernel<T, G><<<blocks, RowGroup<G>::kThreads, 0, s>>>(g.data<T>(), x.data<T>(), mp,
                                                                            rstd.data<M>(), wp, gx.data<T>(), N, D, rms);
    });
    if (!gw.defined() && !gb.defined()) return;
    T* gwp = gw.defined() ? gw.data<T>() : nullptr;
    T* gbp = gb.defined() ? gb.data<T>() : nullptr;
    // 16-byte loads when the rows take them (16-bit and float32): norm_rows.cuh.
    constexpr int V = norm_rows::kVec<T>;
    if (sizeof(T) <= 4 && aligned && D % V == 0 && N > 0) {
      const int nvec = int(D / V);
      const int64_t col_blocks = (nvec + norm_rows::kParamLanes - 1) / norm_rows::kParamLanes;
      const int64_t target = 2 * int64_t(sm_count(dev));
      int64_t splits = 1;
      if (col_blocks < target)
        splits = std::max<int64_t>(1, std::min<int64_t>({(target + col_blocks - 1) / col_blocks,
                                                         (N + norm_rows::kParamRows * 8 - 1) /
                                                             (norm_rows::kParamRows * 8), 65535}));
      const int64_t chunk = (N + splits - 1) / splits;
      splits = (N + chunk - 1) / chunk;
      Tensor ws;
      M* wsp = nullptr;
      if (splits > 1) {
        ws = Tensor::empty({splits * 2 * D}, dtype_of<M>::value, x.device());
        wsp = ws.data<M>();
      }
      norm_rows::layer_norm_params_vec_kernel<T>
          <<<dim3(unsigned(col_blocks), unsigned(splits)), norm_rows::kParamLanes * norm_rows::kParamRows, 0,
             stream>>>(g.data<T>(), x.data<T>(), mp, rstd.data<M>(), gwp, gbp, wsp, N, nvec, chunk);
      TT_CUDA_KERNEL_CHECK();
      if (splits > 1) {
        norm_rows::layer_norm_params_finish_kernel<T>
            <<<unsigned((D + 31) / 32), 256, 0, stream>>>(wsp, gwp, gbp, D, int(splits));
        TT_CUDA_KERNEL_CHECK();
      }
      return;
    }
    // Split the rows when the column tiles alone leave the GPU mostly idle.
    const int64_t col_blocks = (D + kColTile - 1) / kColTile;
    const int64_t target = 4 * int64_t(sm_count(dev));
    int64_t splits = 1;
    if (col_blocks < target)
      splits = std::max<int64_t>(1, std::min<int64_t>({(target + col_blocks - 1) / col_blocks,
                                                       (N + kRowLanes * 16 - 1) / (kRowLanes * 16), 65535}));
    const int64_t chunk = (N + splits - 1) / splits;
    splits = (N + chunk - 1) / chunk;
    Tensor ws;
    M* wsp = nullptr;
    if (splits > 1) {
      ws = Tensor::empty({splits * 2 * D}, dtype_of<M>::value, x.device());
      wsp = ws.data<M>();
    }
    layer_norm_bwd_params_kernel<T><<<dim3(unsigned(col_blocks), unsigned(splits)), kColTile * kRowLanes, 0,
                                      stream>>>(g.data<T>(), x.data<T>(), mp, rstd.data<M>(), gwp, gbp, wsp, N, D,
                                                chunk);
    TT_CUDA_KERNEL_CHECK();
    if (splits > 1) {
      layer_norm_bwd_params_finish_kernel<T><<<grid_for(D), kThreads, 0, stream>>>(wsp, gwp, gbp, D, int(splits));
      TT_CUDA_KERNEL_CHECK();
    }
  });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, softmax, softmax_backward, layer_norm, layer_norm_backward)

}  // namespace tt::cuda
