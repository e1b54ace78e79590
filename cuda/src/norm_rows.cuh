#pragma once
// Row-in-registers kernels for softmax / log_softmax, layer_norm / rms_norm and the norms'
// input gradient: each row is read from memory once with 16-byte loads, kept in registers
// (K vectors of V elements per thread) while the row statistics are all-reduced, and written
// once. G threads own a row: a warp (8 rows per 256-thread block) for rows of at most 1024
// elements, else a block of 128-512 threads. Statistics in opmath (float for 16-bit types),
// two-pass (mean, then squared deviations from the registers), fixed reduction order.
// Included by norm.cu after RowGroup; rows that don't fit (unaligned, width not a multiple of
// V, longer than 4096 vectors, double) return false and take norm.cu's general kernels.
#include <type_traits>

namespace tt::cuda::norm_rows {

template <class T>
constexpr int kVec = 16 / int(sizeof(T));

// T <-> opmath conversions; float16 takes the hardware cvt (Half's portable bit-twiddling
// conversion made the float16 kernels compute-bound: 0.43-0.77x torch on H200). Both round to
// nearest even, as Half's own conversion.
template <class T>
__device__ __forceinline__ opmath_t<T> to_m(T t) {
  if constexpr (std::is_same_v<T, Half>) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(t.bits));
    return f;
  } else {
    return opmath_t<T>(t);
  }
}
template <class T>
__device__ __forceinline__ T from_m(opmath_t<T> v) {
  if constexpr (std::is_same_v<T, Half>) {
    uint16_t b;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(v));
    return Half::from_bits(b);
  } else {
    return T(v);
  }
}

// Loads this lane's K vectors of row r (nvec vectors) into v as M; missing ones are zeros.
template <int G, int K, int V, class T, class M>
__device__ __forceinline__ void load_row(const T* __restrict__ r, int nvec, int lane, M (&v)[K][V]) {
  const Vec<T, V>* rv = reinterpret_cast<const Vec<T, V>*>(r);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int q = lane + k * G;
    Vec<T, V> t;
    if (q < nvec) t = rv[q];
#pragma unroll
    for (int i = 0; i < V; ++i) v[k][i] = q < nvec ? to_m(t.v[i]) : M(0);
  }
}

// x, y: (N, D) with D = nvec * V; w/b: (D) or null; mean (null for rms) / rstd: (N) in M.
template <class T, int G, int K>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) layer_norm_reg_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
    opmath_t<T>* __restrict__ mean_out, opmath_t<T>* __restrict__ rstd_out, int64_t N, int nvec,
    opmath_t<T> eps, bool rms) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  constexpr int V = kVec<T>;
  __shared__ M smem[Grp::kThreads / 32];
  const int lane = Grp::lane();
  const int64_t D = int64_t(nvec) * V;
  for (int64_t row = Grp::first_row(); row < N; row += Grp::row_stride()) {
    M v[K][V];
    load_row<G, K, V>(x + row * D, nvec, lane, v);
    M mu = 0;
    if (!rms) {  // the mean relative to the row's first element: a constant row's is exact, its variance 0
      const M x0 = to_m(x[row * D]);
      M s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (lane + k * G < nvec) {
#pragma unroll
          for (int i = 0; i < V; ++i) s += v[k][i] - x0;
        }
      mu = x0 + Grp::allreduce(s, AddOp(), smem) / M(D);
    }
    M ss = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (lane + k * G < nvec) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const M d = v[k][i] - mu;
          ss += d * d;
        }
      }
    }
    const M rstd = norm::rstd(Grp::allreduce(ss, AddOp(), smem) / M(D), eps);
    if (lane == 0) {
      if (mean_out) mean_out[row] = mu;
      rstd_out[row] = rstd;
    }
    Vec<T, V>* yr = reinterpret_cast<Vec<T, V>*>(y + row * D);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int q = lane + k * G;
      if (q >= nvec) continue;
      Vec<T, V> wv, bv, out;
      if (w) wv = reinterpret_cast<const Vec<T, V>*>(w)[q];
      if (b) bv = reinterpret_cast<const Vec<T, V>*>(b)[q];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        M o = (v[k][i] - mu) * rstd;
        if (w) o *= to_m(wv.v[i]);
        if (b) o += to_m(bv.v[i]);
        out.v[i] = from_m<T>(o);
      }
      yr[q] = out;
    }
  }
}

// g, x, gx: (N, D); gx = rstd * (gh - mean_D(gh) - xhat * mean_D(gh * xhat)) with gh = g * w
// (no mean_D(gh) term for rms_norm).
template <class T, int G, int K>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) layer_norm_bwd_x_reg_kernel(
    const T* __restrict__ g, const T* __restrict__ x, const opmath_t<T>* __restrict__ mean,
    const opmath_t<T>* __restrict__ rstd, const T* __restrict__ w, T* __restrict__ gx, int64_t N, int nvec,
    bool rms) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  constexpr int V = kVec<T>;
  __shared__ M smem[Grp::kThreads / 32];
  const int lane = Grp::lane();
  const int64_t D = int64_t(nvec) * V;
  for (int64_t row = Grp::first_row(); row < N; row += Grp::row_stride()) {
    M gh[K][V], xh[K][V];
    load_row<G, K, V>(g + row * D, nvec, lane, gh);
    load_row<G, K, V>(x + row * D, nvec, lane, xh);
    const M mu = mean ? mean[row] : M(0), rs = rstd[row];
    M s1 = 0, s2 = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int q = lane + k * G;
      if (q >= nvec) continue;
      Vec<T, V> wv;
      if (w) wv = reinterpret_cast<const Vec<T, V>*>(w)[q];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        if (w) gh[k][i] *= to_m(wv.v[i]);
        xh[k][i] = (xh[k][i] - mu) * rs;
        s1 += gh[k][i];
        s2 += gh[k][i] * xh[k][i];
      }
    }
    s1 = Grp::allreduce(s1, AddOp(), smem);
    s2 = Grp::allreduce(s2, AddOp(), smem);
    const M a = rms ? M(0) : s1 / M(D), c = s2 / M(D);
    Vec<T, V>* gr = reinterpret_cast<Vec<T, V>*>(gx + row * D);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int q = lane + k * G;
      if (q >= nvec) continue;
      Vec<T, V> out;
#pragma unroll
      for (int i = 0; i < V; ++i) out.v[i] = from_m<T>(norm::norm_input_grad(gh[k][i], xh[k][i], rs, a, c));
      gr[q] = out;
    }
  }
}

// x, y: (N, L) with L = nvec * V: one read and one write per element.
template <class T, int G, int K>
__global__ void __launch_bounds__(RowGroup<G>::kThreads) softmax_reg_kernel(const T* __restrict__ x,
                                                                            T* __restrict__ y, int64_t N, int nvec,
                                                                            bool is_log) {
  using M = opmath_t<T>;
  using Grp = RowGroup<G>;
  constexpr int V = kVec<T>;
  __shared__ M smem[Grp::kThreads / 32];
  const int lane = Grp::lane();
  const int64_t L = int64_t(nvec) * V;
  for (int64_t row = Grp::first_row(); row < N; row += Grp::row_stride()) {
    M v[K][V];
    load_row<G, K, V>(x + row * L, nvec, lane, v);
    M m = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * G < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) m = NanMaxOp()(m, v[k][i]);
    m = Grp::allreduce(m, NanMaxOp(), smem);
    if (!std::isfinite(m)) m = NAN;  // as the general kernel and the CPU
    // With one vector per lane, softmax keeps exp(x - m) in the registers for the output pass
    // (one exp per element; same register count). With more, keeping them costs registers
    // (bf16 K = 4: 64 -> 83, one 512-thread block per SM instead of two: 0.82x torch at width
    // 16384 on H100), so the output pass recomputes the exp.
    constexpr bool keep_exp = K == 1;
    M s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * G < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const M e = std::exp(v[k][i] - m);
          s += e;
          if (keep_exp && !is_log) v[k][i] = e;
        }
    s = Grp::allreduce(s, AddOp(), smem);
    const M ls = std::log(s), inv = M(1) / s;
    Vec<T, V>* yr = reinterpret_cast<Vec<T, V>*>(y + row * L);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int q = lane + k * G;
      if (q >= nvec) continue;
      Vec<T, V> out;
#pragma unroll
      for (int i = 0; i < V; ++i)
        out.v[i] = from_m<T>(is_log ? (v[k][i] - m) - ls : (keep_exp ? v[k][i] : std::exp(v[k][i] - m)) * inv);
      yr[q] = out;
    }
  }
}

// gw[j] = sum_i g[i, j] * xhat[i, j], gb[j] = sum_i g[i, j] with 16-byte loads: a block holds
// kParamLanes column lanes of V columns x kParamRows row lanes; gridDim.y splits the rows into
// chunks. Unsplit, the block writes gw/gb; split, it writes its partial sums to ws (splits, 2, D)
// and layer_norm_params_finish_kernel adds them in split order (deterministic).
constexpr int kParamLanes = 32, kParamRows = 16;

template <class T>
__global__ void __launch_bounds__(kParamLanes* kParamRows) layer_norm_params_vec_kernel(
    const T* __restrict__ g, const T* __restrict__ x, const opmath_t<T>* __restrict__ mean,
    const opmath_t<T>* __restrict__ rstd, T* __restrict__ gw, T* __restrict__ gb, opmath_t<T>* __restrict__ ws,
    int64_t N, int nvec, int64_t chunk) {
  using M = opmath_t<T>;
  constexpr int V = kVec<T>;
  __shared__ M sw[kParamRows][kParamLanes * V], sb[kParamRows][kParamLanes * V];
  const int cl = threadIdx.x % kParamLanes, rl = threadIdx.x / kParamLanes;
  const int q = blockIdx.x * kParamLanes + cl;  // this lane's vector of columns
  const int64_t D = int64_t(nvec) * V;
  const int64_t r0 = int64_t(blockIdx.y) * chunk, r1 = r0 + chunk < N ? r0 + chunk : N;
  M aw[V], ab[V];
#pragma unroll
  for (int i = 0; i < V; ++i) aw[i] = ab[i] = M(0);
  if (q < nvec) {
#pragma unroll 2
    for (int64_t r = r0 + rl; r < r1; r += kParamRows) {
      const Vec<T, V> gv = reinterpret_cast<const Vec<T, V>*>(g + r * D)[q];
      const Vec<T, V> xv = reinterpret_cast<const Vec<T, V>*>(x + r * D)[q];
      const M mu = mean ? mean[r] : M(0), rs = rstd[r];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const M gm = to_m(gv.v[i]);
        aw[i] += gm * ((to_m(xv.v[i]) - mu) * rs);
        ab[i] += gm;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < V; ++i) {
    sw[rl][cl * V + i] = aw[i];
    sb[rl][cl * V + i] = ab[i];
  }
  __syncthreads();
  // rows of the tile in a fixed order; thread t finishes column t of the tile's kParamLanes * V
  for (int c = threadIdx.x; c < kParamLanes * V; c += blockDim.x) {
    const int64_t j = int64_t(blockIdx.x) * kParamLanes * V + c;
    if (j >= D) continue;
    M w = 0, b = 0;
    for (int k = 0; k < kParamRows; ++k) {
      w += sw[k][c];
      b += sb[k][c];
    }
    if (gridDim.y == 1) {
      if (gw) gw[j] = from_m<T>(w);
      if (gb) gb[j] = from_m<T>(b);
    } else {
      ws[(int64_t(blockIdx.y) * 2) * D + j] = w;
      ws[(int64_t(blockIdx.y) * 2 + 1) * D + j] = b;
    }
  }
}

// ws: (splits, 2, D) -> gw, gb: (D). A block holds 32 columns x 8 split lanes; split lane s adds
// splits s, s + 8, ...; the 8 lane sums are then added in lane order (deterministic).
template <class T>
__global__ void __launch_bounds__(256) layer_norm_params_finish_kernel(const opmath_t<T>* __restrict__ ws,
                                                                        T* __restrict__ gw, T* __restrict__ gb,
                                                                        int64_t D, int splits) {
  using M = opmath_t<T>;
  __shared__ M sw[8][32], sb[8][32];
  const int cl = threadIdx.x % 32, sl = threadIdx.x / 32;
  const int64_t j = int64_t(blockIdx.x) * 32 + cl;
  M w = 0, b = 0;
  if (j < D) {
    for (int s = sl; s < splits; s += 8) {
      w += ws[(int64_t(s) * 2) * D + j];
      b += ws[(int64_t(s) * 2 + 1) * D + j];
    }
  }
  sw[sl][cl] = w;
  sb[sl][cl] = b;
  __syncthreads();
  if (sl == 0 && j < D) {
    for (int k = 1; k < 8; ++k) {
      w += sw[k][cl];
      b += sb[k][cl];
    }
    if (gw) gw[j] = from_m<T>(w);
    if (gb) gb[j] = from_m<T>(b);
  }
}

// Picks (G, K) for rows of D elements of T and calls launch(G, K, blocks) with G and K as
// integral constants; false (nothing launched) when the row-in-registers path doesn't apply or
// the row has more than max_nvec vectors (the backward's two rows spill past 2048 vectors).
template <class T, class Launch>
bool launch_reg_rows(int64_t N, int64_t D, bool aligned, const Launch& launch, int64_t max_nvec = 4096) {
  constexpr int V = kVec<T>;
  if constexpr (sizeof(T) > 4) {
    return false;
  } else {
    if (!aligned || N == 0 || D % V != 0 || D / V > max_nvec) return false;
    const int64_t nvec = D / V;
    using std::integral_constant;
    const auto warp = [&](auto k) {
      launch(integral_constant<int, 32>(), k, unsigned(std::min<int64_t>((N + 7) / 8, 65535LL * 8)));
    };
    const auto block = [&](auto grp, auto k) { launch(grp, k, unsigned(std::min<int64_t>(N, 65535LL * 8))); };
    if (D <= 1024) {
      if (nvec <= 32) warp(integral_constant<int, 1>());
      else if (nvec <= 64) warp(integral_constant<int, 2>());
      else if (nvec <= 128) warp(integral_constant<int, 4>());
      else warp(integral_constant<int, 8>());
    } else if (nvec <= 512) {
      block(integral_constant<int, 128>(), integral_constant<int, 4>());
    } else if (nvec <= 1024) {
      block(integral_constant<int, 256>(), integral_constant<int, 4>());
    } else if (nvec <= 2048) {
      block(integral_constant<int, 512>(), integral_constant<int, 4>());
    } else if (nvec <= 4096) {
      block(integral_constant<int, 512>(), integral_constant<int, 8>());
    } else {
      return false;
    }
    TT_CUDA_KERNEL_CHECK();
    return true;
  }
}

}  // namespace tt::cuda::norm_rows
