// CPU softmax / log_softmax (+ backward) and layer_norm / rms_norm (+ backward).
// FP exceptions are never inspected, so let GCC if-convert float compares (vectorizes the
// max and exp loops).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <cmath>
#include <cstring>
#include <vector>
#include "tinytorch/kernels/norm.h"
#include "tinytorch/norm_math.h"
#include "tinytorch/parallel.h"
#include "fast_exp.h"
#include "reduce_simd.h"

namespace tt::cpu {
namespace {

constexpr int kLanes = 16;      // independent partial sums per row (vectorizable)
constexpr int64_t kCols = 256;  // columns per task in the (O, L, I>1) layout

inline float vexp(float x) { return fast_exp(x); }
inline double vexp(double x) { return std::exp(x); }
struct VExp {
  template <class M>
  M operator()(M x) const { return vexp(x); }
};

template <class M> inline M nan_max(M a, M x) {
  const M r = x > a ? x : a;
  return x != x ? x : r;
}

// float32 row helpers (TT_SIMD_CLONES: see reduce_simd.h).
TT_SIMD_CLONES float row_max_f32(const float* x, int64_t n) { return simd::extreme<true>(x, n); }
// y = exp(x - m) (y may be x); returns sum(y).
TT_SIMD_CLONES float exp_store_sum_f32(const float* x, float* y, int64_t n, float m) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += (y[i + k] = fast_exp(x[i + k] - m));
  for (; i < n; ++i) acc[0] += (y[i] = fast_exp(x[i] - m));
  for (int k = 1; k < kLanes; ++k) acc[0] += acc[k];
  return acc[0];
}
TT_SIMD_CLONES float exp_sum_f32(const float* x, int64_t n, float m) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += fast_exp(x[i + k] - m);
  for (; i < n; ++i) acc[0] += fast_exp(x[i] - m);
  for (int k = 1; k < kLanes; ++k) acc[0] += acc[k];
  return acc[0];
}
TT_SIMD_CLONES void scale_f32(float* y, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}
TT_SIMD_CLONES void shift_f32(const float* x, float* y, int64_t n, float m, float ls) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - ls;
}

// ---------------------------------------------------------------- softmax, rows
// x, y: (L) in the compute type M (y may alias x). Three passes: max, exp + sum, scale.
template <class M>
void softmax_row(const M* x, M* y, int64_t L, bool is_log);

template <>
void softmax_row<float>(const float* x, float* y, int64_t L, bool is_log) {
  const float m = row_max_f32(x, L);
  if (!std::isfinite(m)) {  // NaN, +inf or all -inf: let std::exp produce PyTorch's NaNs
    float s = 0;
    for (int64_t j = 0; j < L; ++j) s += std::exp(x[j] - m);
    for (int64_t j = 0; j < L; ++j) y[j] = is_log ? x[j] - m - std::log(s) : std::exp(x[j] - m) / s;
    return;
  }
  if (is_log) {  // (x - m) - log(s), not x - (m + log(s)): exact for large |x|
    shift_f32(x, y, L, m, std::log(exp_sum_f32(x, L, m)));
  } else {
    scale_f32(y, L, 1.0f / exp_store_sum_f32(x, y, L, m));
  }
}

template <class M>
void softmax_row(const M* x, M* y, int64_t L, bool is_log) {
  M mx[kLanes];
  for (int k = 0; k < kLanes; ++k) mx[k] = -INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= L; i += kLanes)
    for (int k = 0; k < kLanes; ++k) mx[k] = nan_max(mx[k], x[i + k]);
  for (; i < L; ++i) mx[0] = nan_max(mx[0], x[i]);
  M m = mx[0];
  for (int k = 1; k < kLanes; ++k) m = nan_max(m, mx[k]);
  if (!std::isfinite(m)) {  // NaN, +inf or all -inf: let std::exp produce PyTorch's NaNs
    M s = 0;
    for (int64_t j = 0; j < L; ++j) s += std::exp(x[j] - m);
    for (int64_t j = 0; j < L; ++j) y[j] = is_log ? x[j] - m - std::log(s) : std::exp(x[j] - m) / s;
    return;
  }
  M acc[kLanes] = {};
  if (is_log) {
    for (i = 0; i + kLanes <= L; i += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] += vexp(x[i + k] - m);
    for (; i < L; ++i) acc[0] += vexp(x[i] - m);
  } else {
    for (i = 0; i + kLanes <= L; i += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] += (y[i + k] = vexp(x[i + k] - m));
    for (; i < L; ++i) acc[0] += (y[i] = vexp(x[i] - m));
  }
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  if (is_log) {
    const M ls = std::log(acc[0]);
    for (int64_t j = 0; j < L; ++j) y[j] = (x[j] - m) - ls;
  } else {
    const M inv = M(1) / acc[0];
    for (int64_t j = 0; j < L; ++j) y[j] *= inv;
  }
}

// x, y: (O, L, I). For I == 1 rows go through softmax_row (16-bit types via a float buffer);
// for I > 1 each task keeps kCols running maxima/sums and recomputes exp on the write pass.
template <class T>
void softmax_typed(bool is_log, const Tensor& xt, const Tensor& yt) {
  using M = opmath_t<T>;
  const T* x = xt.data<T>();
  T* y = yt.data<T>();
  const int64_t O = xt.size(0), L = xt.size(1), I = xt.size(2);
  if (I == 1) {
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / L), [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, M>) {
        for (int64_t o = b; o < e; ++o) softmax_row<M>(x + o * L, y + o * L, L, is_log);
      } else {
        std::vector<M> buf(L);
        for (int64_t o = b; o < e; ++o) {
          for (int64_t j = 0; j < L; ++j) buf[j] = M(x[o * L + j]);
          softmax_row<M>(buf.data(), buf.data(), L, is_log);
          for (int64_t j = 0; j < L; ++j) y[o * L + j] = T(buf[j]);
        }
      }
    });
    return;
  }
  const int64_t nc = (I + kCols - 1) / kCols;
  parallel_for(0, O * nc, std::max<int64_t>(1, kGrainSize / (L * std::min(I, kCols))), [&](int64_t b, int64_t e) {
    M mx[kCols], sum[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nc, i0 = (t % nc) * kCols, w = std::min(kCols, I - i0);
      const T* xs = x + o * L * I + i0;
      T* ys = y + o * L * I + i0;
      for (int64_t j = 0; j < w; ++j) { mx[j] = -INFINITY; sum[j] = 0; }
      for (int64_t l = 0; l < L; ++l)
        for (int64_t j = 0; j < w; ++j) mx[j] = nan_max(mx[j], M(xs[l * I + j]));
      for (int64_t j = 0; j < w; ++j) if (std::isinf(mx[j])) mx[j] = mx[j] > 0 ? NAN : 0;  // as the row path
      for (int64_t l = 0; l < L; ++l)
        for (int64_t j = 0; j < w; ++j) sum[j] += vexp(M(xs[l * I + j]) - mx[j]);
      if (is_log) {
        for (int64_t j = 0; j < w; ++j) sum[j] = std::log(sum[j]);
        for (int64_t l = 0; l < L; ++l)
          for (int64_t j = 0; j < w; ++j) ys[l * I + j] = T((M(xs[l * I + j]) - mx[j]) - sum[j]);
      } else {
        for (int64_t j = 0; j < w; ++j) sum[j] = M(1) / sum[j];
        for (int64_t l = 0; l < L; ++l)
          for (int64_t j = 0; j < w; ++j) ys[l * I + j] = T(vexp(M(xs[l * I + j]) - mx[j]) * sum[j]);
      }
    }
  });
}

void cpu_softmax(bool is_log, const Tensor& x, const Tensor& y) {
  TT_DISPATCH_FLOATING(x.dtype(), is_log ? "log_softmax" : "softmax", [&] { softmax_typed<scalar_t>(is_log, x, y); });
}

// grad, out, gin: (O, L, I). softmax: gin = out * (g - sum_L(g * out));
// log_softmax: gin = g - exp(out) * sum_L(g).
template <class T>
void softmax_backward_typed(bool is_log, const Tensor& gt, const Tensor& ot, const Tensor& git) {
  using M = opmath_t<T>;
  const T* g = gt.data<T>();
  const T* out = ot.data<T>();
  T* gin = git.data<T>();
  const int64_t O = gt.size(0), L = gt.size(1), I = gt.size(2);
  const int64_t nc = (I + kCols - 1) / kCols;
  parallel_for(0, O * nc, std::max<int64_t>(1, kGrainSize / (L * std::min(I, kCols))), [&](int64_t b, int64_t e) {
    M sum[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nc, i0 = (t % nc) * kCols, w = std::min(kCols, I - i0);
      const int64_t base = o * L * I + i0;
      if (I == 1) {  // one row: lane-parallel partial sums
        M acc[kLanes] = {};
        int64_t l = 0;
        for (; l + kLanes <= L; l += kLanes)
          for (int k = 0; k < kLanes; ++k)
            acc[k] += is_log ? M(g[base + l + k]) : M(g[base + l + k]) * M(out[base + l + k]);
        for (; l < L; ++l) acc[0] += is_log ? M(g[base + l]) : M(g[base + l]) * M(out[base + l]);
        for (int k = 1; k < kLanes; ++k) acc[0] += acc[k];
        sum[0] = acc[0];
      } else {
        for (int64_t j = 0; j < w; ++j) sum[j] = 0;
        for (int64_t l = 0; l < L; ++l)
          for (int64_t j = 0; j < w; ++j)
            sum[j] += is_log ? M(g[base + l * I + j]) : M(g[base + l * I + j]) * M(out[base + l * I + j]);
      }
      for (int64_t l = 0; l < L; ++l)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t k = base + l * I + j;
          gin[k] = norm::softmax_grad<T>(is_log, M(g[k]), M(out[k]), sum[j], VExp());
        }
    }
  });
}

void cpu_softmax_backward(bool is_log, const Tensor& g, const Tensor& out, const Tensor& gin) {
  TT_DISPATCH_FLOATING(g.dtype(), "softmax_backward", [&] { softmax_backward_typed<scalar_t>(is_log, g, out, gin); });
}

// ---------------------------------------------------------------- layer_norm / rms_norm
// Sum of f(x[j]) over a row with lane-parallel partials, in M.
template <class M, class T, class F>
M row_sum(const T* x, int64_t D, const F& f) {
  M acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= D; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += f(M(x[j + k]));
  for (; j < D; ++j) acc[0] += f(M(x[j]));
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  return acc[0];
}

// x: (N, D), w/b: (D) or undefined -> y: (N, D), mean/rstd: (N) in M.
template <class T>
void layer_norm_typed(bool rms, const Tensor& xt, const Tensor& wt, const Tensor& bt, double eps, const Tensor& yt,
                      const Tensor& meant, const Tensor& rstdt) {
  using M = opmath_t<T>;
  const T* x = xt.data<T>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const T* bias = bt.defined() ? bt.data<T>() : nullptr;
  T* y = yt.data<T>();
  M* mean_out = meant.defined() ? meant.data<M>() : nullptr;
  M* rstd_out = rstdt.data<M>();
  const int64_t N = xt.size(0), D = xt.size(1);
  parallel_for(0, N, std::max<int64_t>(1, kGrainSize / D), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const T* xr = x + i * D;
      T* yr = y + i * D;
      M mu = 0, var;
      if (rms) {
        var = row_sum<M>(xr, D, [](M v) { return v * v; }) / M(D);
      } else {  // two-pass: mean, then squared deviations (no cancellation). The mean is taken
                // relative to the row's first element, so a constant row's is exact and its
                // variance 0, as PyTorch's Welford moments (eps = 0 then gives 0 * inf = NaN)
        const M k = M(xr[0]);
        mu = k + row_sum<M>(xr, D, [k](M v) { return v - k; }) / M(D);
        var = row_sum<M>(xr, D, [mu](M v) { return (v - mu) * (v - mu); }) / M(D);
      }
      const M rstd = norm::rstd(var, M(eps));
      if (mean_out) mean_out[i] = mu;
      rstd_out[i] = rstd;
      for (int64_t j = 0; j < D; ++j) {
        M v = (M(xr[j]) - mu) * rstd;
        if (w) v *= M(w[j]);
        if (bias) v += M(bias[j]);
        yr[j] = T(v);
      }
    }
  });
}

void cpu_layer_norm(bool rms, const Tensor& x, const Tensor& w, const Tensor& b, double eps, const Tensor& y,
                    const Tensor& mean, const Tensor& rstd) {
  TT_DISPATCH_FLOATING(x.dtype(), rms ? "rms_norm" : "layer_norm",
                       [&] { layer_norm_typed<scalar_t>(rms, x, w, b, eps, y, mean, rstd); });
}

// grad_y, x: (N, D), mean/rstd: (N), w: (D) or undefined -> gx: (N, D), gw/gb: (D) or undefined.
// With xhat = (x - mean) * rstd and gh = g * w:
//   layer_norm: gx = rstd * (gh - mean_D(gh) - xhat * mean_D(gh * xhat))
//   rms_norm:   gx = rstd * (gh - xhat * mean_D(gh * xhat))
// gw = sum_N(g * xhat), gb = sum_N(g): per-chunk partial sums (fixed chunking, deterministic),
// accumulated in double and added up in order.
template <class T>
void layer_norm_backward_typed(bool rms, const Tensor& gt, const Tensor& xt, const Tensor& meant, const Tensor& rstdt,
                               const Tensor& wt, const Tensor& gxt, const Tensor& gwt, const Tensor& gbt) {
  using M = opmath_t<T>;
  const T* g = gt.data<T>();
  const T* x = xt.data<T>();
  const M* mean = meant.defined() ? meant.data<M>() : nullptr;
  const M* rstd = rstdt.data<M>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  T* gx = gxt.data<T>();
  const int64_t N = xt.size(0), D = xt.size(1);
  const bool want_params = gwt.defined() || gbt.defined();
  const int64_t chunks = want_params ? std::min<int64_t>(N, 8) : 1;
  std::vector<double> pw(want_params ? chunks * D : 0, 0.0), pb(want_params ? chunks * D : 0, 0.0);
  // weight/bias gradients: each chunk sums kFlushRows rows in M (vectorizes; converting every
  // product to double did not), then adds that partial sum to its double accumulator
  constexpr int64_t kFlushRows = 32;
  auto rows = [&](int64_t b, int64_t e, double* accw, double* accb) {
    std::vector<M> gh(D), pw_rows(accw ? D : 0, M(0)), pb_rows(accb ? D : 0, M(0));
    auto flush = [&] {
      for (int64_t j = 0; accw && j < D; ++j) accw[j] += double(pw_rows[j]), pw_rows[j] = M(0);
      for (int64_t j = 0; accb && j < D; ++j) accb[j] += double(pb_rows[j]), pb_rows[j] = M(0);
    };
    for (int64_t i = b; i < e; ++i) {
      const T* gr = g + i * D;
      const T* xr = x + i * D;
      const M mu = mean ? mean[i] : M(0), rs = rstd[i];
      M s1[kLanes] = {}, s2[kLanes] = {};
      for (int64_t j = 0; j < D; ++j) gh[j] = w ? M(gr[j]) * M(w[j]) : M(gr[j]);
      for (int64_t j = 0; j < D; ++j) {
        s1[j % kLanes] += gh[j];
        s2[j % kLanes] += gh[j] * (M(xr[j]) - mu) * rs;
      }
      for (int k = 1; k < kLanes; ++k) { s1[0] += s1[k]; s2[0] += s2[k]; }
      const M a = rms ? M(0) : s1[0] / M(D), c = s2[0] / M(D);
      T* gxr = gx + i * D;
      for (int64_t j = 0; j < D; ++j) {
        const M xhat = (M(xr[j]) - mu) * rs;
        gxr[j] = T(norm::norm_input_grad(gh[j], xhat, rs, a, c));
      }
      if (accw)
        for (int64_t j = 0; j < D; ++j) pw_rows[j] += M(gr[j]) * ((M(xr[j]) - mu) * rs);
      if (accb)
        for (int64_t j = 0; j < D; ++j) pb_rows[j] += M(gr[j]);
      if ((i - b + 1) % kFlushRows == 0) flush();
    }
    flush();
  };
  if (!want_params) {
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / D), [&](int64_t b, int64_t e) { rows(b, e, nullptr, nullptr); });
    return;
  }
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      rows(c * N / chunks, (c + 1) * N / chunks, gwt.defined() ? &pw[c * D] : nullptr,
           gbt.defined() ? &pb[c * D] : nullptr);
  });
  for (int64_t j = 0; j < D; ++j) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) { sw += pw[c * D + j]; sb += pb[c * D + j]; }
    if (gwt.defined()) gwt.data<T>()[j] = T(M(sw));
    if (gbt.defined()) gbt.data<T>()[j] = T(M(sb));
  }
}

void cpu_layer_norm_backward(bool rms, const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                             const Tensor& w, const Tensor& gx, const Tensor& gw, const Tensor& gb) {
  TT_DISPATCH_FLOATING(x.dtype(), rms ? "rms_norm_backward" : "layer_norm_backward",
                       [&] { layer_norm_backward_typed<scalar_t>(rms, g, x, mean, rstd, w, gx, gw, gb); });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, softmax, softmax_backward, layer_norm, layer_norm_backward)

}  // namespace tt::cpu
