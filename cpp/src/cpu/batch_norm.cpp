// CPU batch_norm forward and backward, fused: per channel, the statistics in two reads of its
// (N, L) slab (mean, then squared deviations: no cancellation), the output in one more; the
// backward in one read of (grad_y, x) for sum(g) and sum(g * (x - mean)), one more for grad_x.
// A channel's slab is small (ResNet: <= 50 K floats), so the later passes hit L2.
#include <algorithm>
#include <cmath>
#include "tinytorch/kernels/norm.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

constexpr int kLanes = 16;  // independent partial sums (vectorizable)

// Sum over the N rows (L long, rows `rs` apart) of f(x[i]) (or f(x[i], y[i])), in M, with
// lane-parallel partials; the order depends only on the shape (thread-count independent).
template <class M, class T, class F>
M slab_sum(const T* x, int64_t N, int64_t L, int64_t rs, const F& f) {
  M acc[kLanes] = {};
  for (int64_t n = 0; n < N; ++n) {
    const T* r = x + n * rs;
    int64_t j = 0;
    for (; j + kLanes <= L; j += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] += f(M(r[j + k]));
    for (; j < L; ++j) acc[j % kLanes] += f(M(r[j]));
  }
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  return acc[0];
}

int64_t channel_grain(int64_t N, int64_t L) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, N * L)); }

// x: (N, C, L), w/b: (C) or undefined -> y: (N, C, L); mean/var/invstd: (C) in M.
template <class T>
void batch_norm_typed(const Tensor& xt, const Tensor& wt, const Tensor& bt, double eps, bool training,
                      const Tensor& yt, const Tensor& meant, const Tensor& vart, const Tensor& invt) {
  using M = opmath_t<T>;
  const T* x = xt.data<T>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const T* b = bt.defined() ? bt.data<T>() : nullptr;
  T* y = yt.data<T>();
  M *mean = meant.data<M>(), *var = vart.data<M>(), *inv = invt.data<M>();
  const int64_t N = xt.size(0), C = xt.size(1), L = xt.size(2), cnt = N * L;
  parallel_for(0, C, channel_grain(N, L), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T* xs = x + c * L;
      if (training) {
        const M mu = slab_sum<M>(xs, N, L, C * L, [](M v) { return v; }) / M(cnt);
        mean[c] = mu;
        var[c] = slab_sum<M>(xs, N, L, C * L, [mu](M v) { return (v - mu) * (v - mu); }) / M(cnt);
      }
      inv[c] = M(1) / std::sqrt(var[c] + M(eps));
      // y = x * scale + shift, scale = invstd * w, shift = b - mean * scale
      const M scale = inv[c] * (w ? M(w[c]) : M(1)), shift = (b ? M(b[c]) : M(0)) - mean[c] * scale;
      for (int64_t n = 0; n < N; ++n) {
        const T* xr = xs + n * C * L;
        T* yr = y + (n * C + c) * L;
        for (int64_t j = 0; j < L; ++j) yr[j] = T(M(xr[j]) * scale + shift);
      }
    }
  });
}

// gy, x: (N, C, L), mean/invstd: (C) in M, w: (C) or undefined -> gx: (N, C, L), gw/gb: (C).
// With s1 = sum(g), s2 = sum(g * (x - mean)) over a channel's M = N*L elements:
//   gb = s1, gw = s2 * invstd,
//   gx = w * invstd * (g - s1/M - (x - mean) * invstd^2 * s2/M)   (training; eval: w * invstd * g).
template <class T>
void batch_norm_backward_typed(const Tensor& gt, const Tensor& xt, const Tensor& meant, const Tensor& invt,
                               const Tensor& wt, bool training, const Tensor& gxt, const Tensor& gwt,
                               const Tensor& gbt) {
  using M = opmath_t<T>;
  const T* g = gt.data<T>();
  const T* x = xt.data<T>();
  const M* mean = meant.data<M>();
  const M* inv = invt.data<M>();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  T* gx = gxt.defined() ? gxt.data<T>() : nullptr;
  T* gw = gwt.defined() ? gwt.data<T>() : nullptr;
  T* gb = gbt.defined() ? gbt.data<T>() : nullptr;
  const int64_t N = xt.size(0), C = xt.size(1), L = xt.size(2), cnt = N * L;
  const bool sums = gw || gb || (gx && training);
  parallel_for(0, C, channel_grain(N, L), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const M mu = mean[c], is = inv[c], wc = w ? M(w[c]) : M(1);
      M s1 = 0, s2 = 0;
      if (sums) {
        M a1[kLanes] = {}, a2[kLanes] = {};
        for (int64_t n = 0; n < N; ++n) {
          const T* gr = g + (n * C + c) * L;
          const T* xr = x + (n * C + c) * L;
          int64_t j = 0;
          for (; j + kLanes <= L; j += kLanes)
            for (int k = 0; k < kLanes; ++k) {
              a1[k] += M(gr[j + k]);
              a2[k] += M(gr[j + k]) * (M(xr[j + k]) - mu);
            }
          for (; j < L; ++j) {
            a1[j % kLanes] += M(gr[j]);
            a2[j % kLanes] += M(gr[j]) * (M(xr[j]) - mu);
          }
        }
        for (int wd = kLanes / 2; wd > 0; wd /= 2)
          for (int k = 0; k < wd; ++k) { a1[k] += a1[k + wd]; a2[k] += a2[k + wd]; }
        s1 = a1[0], s2 = a2[0];
      }
      if (gb) gb[c] = T(s1);
      if (gw) gw[c] = T(s2 * is);
      if (!gx) continue;
      // gx = k * g - k * s1/M - (x - mean) * k * invstd^2 * s2/M = k * g + d * (x - mean) + e
      const M k = wc * is;
      const M d = training ? -k * is * is * s2 / M(cnt) : M(0), e = training ? -k * s1 / M(cnt) : M(0);
      for (int64_t n = 0; n < N; ++n) {
        const T* gr = g + (n * C + c) * L;
        const T* xr = x + (n * C + c) * L;
        T* o = gx + (n * C + c) * L;
        for (int64_t j = 0; j < L; ++j) o[j] = T(k * M(gr[j]) + d * (M(xr[j]) - mu) + e);
      }
    }
  });
}

void cpu_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, bool training, const Tensor& y,
                    const Tensor& mean, const Tensor& var, const Tensor& invstd) {
  TT_DISPATCH_FLOATING(x.dtype(), "batch_norm",
                       [&] { batch_norm_typed<scalar_t>(x, w, b, eps, training, y, mean, var, invstd); });
}
void cpu_batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                             const Tensor& w, bool training, const Tensor& gx, const Tensor& gw, const Tensor& gb) {
  TT_DISPATCH_FLOATING(x.dtype(), "batch_norm_backward",
                       [&] { batch_norm_backward_typed<scalar_t>(g, x, mean, invstd, w, training, gx, gw, gb); });
}

}  // namespace

TT_REGISTER_KERNEL(batch_norm, CPU, cpu_batch_norm)
TT_REGISTER_KERNEL(batch_norm_backward, CPU, cpu_batch_norm_backward)

}  // namespace tt::cpu
