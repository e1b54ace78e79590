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
    for (int i = 0; i < V; ++i) v[k][i] = q < nvec ? M(t.v[i]) : M(0);
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
    if (!rms) {
      M s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < V; ++i) s += v[k][i];
      mu = Grp::allreduce(s, AddOp(), smem) / M(D);
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
        if (w) o *= M(wv.v[i]);
        if (b) o += M(bv.v[i]);
        out.v[i] = T(o);
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
        if (w) gh[k][i] *= M(wv.v[i]);
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
      for (int i = 0; i < V; ++i) out.v[i] = T(norm::norm_input_grad(gh[k][i], xh[k][i], rs, a, c));
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
    M s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (lane + k * G < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) s += std::exp(v[k][i] - m);
    s = Grp::allreduce(s, AddOp(), smem);
    const M ls = std::log(s), inv = M(1) / s;
    Vec<T, V>* yr = reinterpret_cast<Vec<T, V>*>(y + row * L);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int q = lane + k * G;
      if (q >= nvec) continue;
      Vec<T, V> out;
#pragma unroll
      for (int i = 0; i < V; ++i) out.v[i] = T(is_log ? (v[k][i] - m) - ls : std::exp(v[k][i] - m) * inv);
      yr[q] = out;
    }
  }
}

// Picks (G, K) for rows of D elements of T and calls launch(G, K, blocks) with G and K as
// integral constants; false (nothing launched) when the row-in-registers path doesn't apply.
template <class T, class Launch>
bool launch_reg_rows(int64_t N, int64_t D, bool aligned, const Launch& launch) {
  constexpr int V = kVec<T>;
  if constexpr (sizeof(T) > 4) {
    return false;
  } else {
    if (!aligned || N == 0 || D % V != 0) return false;
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
