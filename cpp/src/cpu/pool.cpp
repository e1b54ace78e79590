// CPU 2-D pooling over planes (P = B*C): max (with argmax indices), average, adaptive average.
// One task per plane range; backward kernels own whole planes, so no atomics are needed.
#include <cmath>
#include <limits>
#include "tinytorch/kernels/pool.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

int64_t plane_grain(int64_t work_per_plane) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work_per_plane)); }

// x: (P, H, W) -> out, idx: (P, Ho, Wo). NaN wins, like PyTorch; ties keep the first position.
template <class T>
void max_pool_typed(const Tensor& x, const Tensor& out, const Tensor& idx, const Pool2dParams& p) {
  using A = opmath_t<T>;
  int64_t P = x.size(0), H = x.size(1), W = x.size(2), Ho = out.size(1), Wo = out.size(2);
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  int64_t* ip = idx.data<int64_t>();
  bool k2s2 = p.kh == 2 && p.kw == 2 && p.sh == 2 && p.sw == 2 && p.ph == 0 && p.pw == 0 && p.dh == 1 &&
              p.dw == 1 && 2 * Ho <= H && 2 * Wo <= W;  // every window inside: no bounds checks
  parallel_for(0, P, plane_grain(Ho * Wo * p.kh * p.kw), [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl) {
      const T* xs = xp + pl * H * W;
      if (k2s2) {
        for (int64_t oh = 0; oh < Ho; ++oh) {
          const T* r0 = xs + 2 * oh * W;
          T* o = op + (pl * Ho + oh) * Wo;
          int64_t* ix = ip + (pl * Ho + oh) * Wo;
          for (int64_t ow = 0; ow < Wo; ++ow) {
            // candidates in scan order; a later one wins if larger or NaN (NaN stops the scan)
            int64_t pos[4] = {2 * oh * W + 2 * ow, 2 * oh * W + 2 * ow + 1, (2 * oh + 1) * W + 2 * ow,
                              (2 * oh + 1) * W + 2 * ow + 1};
            A best = static_cast<A>(r0[2 * ow]);
            int64_t bi = pos[0];
            for (int q = 1; q < 4 && !std::isnan(best); ++q) {
              A v = static_cast<A>(xs[pos[q]]);
              if (v > best || std::isnan(v)) best = v, bi = pos[q];
            }
            o[ow] = static_cast<T>(best);
            ix[ow] = bi;
          }
        }
        continue;
      }
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          A best = -std::numeric_limits<A>::infinity();
          int64_t bi = -1;
          for (int64_t i = 0; i < p.kh; ++i) {
            int64_t ih = oh * p.sh - p.ph + i * p.dh;
            if (ih < 0 || ih >= H) continue;
            for (int64_t j = 0; j < p.kw; ++j) {
              int64_t iw = ow * p.sw - p.pw + j * p.dw;
              if (iw < 0 || iw >= W) continue;
              A v = static_cast<A>(xs[ih * W + iw]);
              if (bi < 0 || v > best || std::isnan(v)) {
                best = v, bi = ih * W + iw;
                if (std::isnan(v)) goto done;
              }
            }
          }
        done:
          op[(pl * Ho + oh) * Wo + ow] = static_cast<T>(best);
          ip[(pl * Ho + oh) * Wo + ow] = bi < 0 ? 0 : bi;
        }
    }
  });
}

// gout, idx: (P, Ho, Wo) -> gx: (P, H, W) with gx[idx] += gout.
template <class T>
void max_pool_backward_typed(const Tensor& gout, const Tensor& idx, const Tensor& gx) {
  using A = opmath_t<T>;
  int64_t P = gx.size(0), HW = gx.size(1) * gx.size(2), L = gout.size(1) * gout.size(2);
  const T* gp = gout.data<T>();
  const int64_t* ip = idx.data<int64_t>();
  T* xp = gx.data<T>();
  parallel_for(0, P, plane_grain(HW + L), [&](int64_t p0, int64_t p1) {
    std::vector<A> acc(static_cast<size_t>(HW));
    for (int64_t pl = p0; pl < p1; ++pl) {
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t l = 0; l < L; ++l) {
        int64_t k = ip[pl * L + l];
        TT_CHECK_INDEX(k >= 0 && k < HW, "max_pool2d_backward: index ", k, " out of range for a plane of ", HW,
                       " elements");
        acc[k] += static_cast<A>(gp[pl * L + l]);
      }
      for (int64_t k = 0; k < HW; ++k) xp[pl * HW + k] = static_cast<T>(acc[k]);
    }
  });
}

// One averaging window of the input plane: rows [h0, h1), columns [w0, w1), and the divisor.
struct Window { int64_t h0, h1, w0, w1; double div; };

// avg_pool2d's windows of an (H, W) plane: clamped bounds and the divisor PyTorch uses.
struct AvgWindows {
  const Pool2dParams& p;
  int64_t H, W;
  Window operator()(int64_t oh, int64_t ow) const {
    int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
    int64_t h1 = std::min(h0 + p.kh, H + p.ph), w1 = std::min(w0 + p.kw, W + p.pw);
    int64_t pool = (h1 - h0) * (w1 - w0);
    h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
    h1 = std::min(h1, H), w1 = std::min(w1, W);
    double div = p.divisor_override ? static_cast<double>(p.divisor_override)
                 : p.count_include_pad ? static_cast<double>(pool)
                                       : static_cast<double>((h1 - h0) * (w1 - w0));
    return {h0, h1, w0, w1, div};
  }
};

// adaptive_avg_pool2d's windows of an (H, W) plane pooled to (Ho, Wo): rows
// [floor(oh H / Ho), ceil((oh + 1) H / Ho)), columns likewise; the divisor is the window's size
// (exact in float, so dividing in double rounds as a float division would).
struct AdaptiveWindows {
  int64_t H, W, Ho, Wo;
  static int64_t start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
  static int64_t end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }
  Window operator()(int64_t oh, int64_t ow) const {
    int64_t h0 = start(oh, H, Ho), h1 = end(oh, H, Ho), w0 = start(ow, W, Wo), w1 = end(ow, W, Wo);
    return {h0, h1, w0, w1, static_cast<double>((h1 - h0) * (w1 - w0))};
  }
};

// x: (P, H, W) -> out: (P, Ho, Wo), each output its window's sum / divisor (0 for an empty window).
template <class T, class Windows>
void window_mean_typed(const Tensor& x, const Tensor& out, const Windows& window_of, int64_t plane_work) {
  using A = opmath_t<T>;
  int64_t P = x.size(0), H = x.size(1), W = x.size(2), Ho = out.size(1), Wo = out.size(2);
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  parallel_for(0, P, plane_grain(plane_work), [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          Window w = window_of(oh, ow);
          A s = 0;
          for (int64_t ih = w.h0; ih < w.h1; ++ih)
            for (int64_t iw = w.w0; iw < w.w1; ++iw) s += static_cast<A>(xp[(pl * H + ih) * W + iw]);
          bool empty = w.h0 >= w.h1 || w.w0 >= w.w1;
          op[(pl * Ho + oh) * Wo + ow] = static_cast<T>(empty ? A(0) : static_cast<A>(s / w.div));
        }
  });
}

// gout: (P, Ho, Wo) -> gx: (P, H, W), each output's gradient / divisor added over its window.
template <class T, class Windows>
void window_mean_backward_typed(const Tensor& gout, const Tensor& gx, const Windows& window_of, int64_t plane_work) {
  using A = opmath_t<T>;
  int64_t P = gx.size(0), H = gx.size(1), W = gx.size(2), Ho = gout.size(1), Wo = gout.size(2);
  const T* gp = gout.data<T>();
  T* xp = gx.data<T>();
  parallel_for(0, P, plane_grain(plane_work), [&](int64_t p0, int64_t p1) {
    std::vector<A> acc(static_cast<size_t>(H * W));
    for (int64_t pl = p0; pl < p1; ++pl) {
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          Window w = window_of(oh, ow);
          A g = static_cast<A>(static_cast<A>(gp[(pl * Ho + oh) * Wo + ow]) / w.div);
          for (int64_t ih = w.h0; ih < w.h1; ++ih)
            for (int64_t iw = w.w0; iw < w.w1; ++iw) acc[ih * W + iw] += g;
        }
      for (int64_t k = 0; k < H * W; ++k) xp[pl * H * W + k] = static_cast<T>(acc[k]);
    }
  });
}

void cpu_max_pool2d(const Tensor& x, const Tensor& out, const Tensor& idx, const Pool2dParams& p) {
  TT_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] { max_pool_typed<scalar_t>(x, out, idx, p); });
}
void cpu_max_pool2d_backward(const Tensor& gout, const Tensor& idx, const Tensor& gx) {
  TT_DISPATCH_FLOATING(gx.dtype(), "max_pool2d_backward", [&] { max_pool_backward_typed<scalar_t>(gout, idx, gx); });
}
void cpu_avg_pool2d(const Tensor& x, const Tensor& out, const Pool2dParams& p) {
  AvgWindows windows{p, x.size(1), x.size(2)};
  TT_DISPATCH_FLOATING(x.dtype(), "avg_pool2d", [&] {
    window_mean_typed<scalar_t>(x, out, windows, out.size(1) * out.size(2) * p.kh * p.kw);
  });
}
void cpu_avg_pool2d_backward(const Tensor& gout, const Tensor& gx, const Pool2dParams& p) {
  AvgWindows windows{p, gx.size(1), gx.size(2)};
  TT_DISPATCH_FLOATING(gx.dtype(), "avg_pool2d_backward", [&] {
    window_mean_backward_typed<scalar_t>(gout, gx, windows, gout.size(1) * gout.size(2) * p.kh * p.kw);
  });
}
void cpu_adaptive_avg_pool2d(const Tensor& x, const Tensor& out) {
  AdaptiveWindows windows{x.size(1), x.size(2), out.size(1), out.size(2)};
  TT_DISPATCH_FLOATING(x.dtype(), "adaptive_avg_pool2d",
                       [&] { window_mean_typed<scalar_t>(x, out, windows, x.size(1) * x.size(2)); });
}
void cpu_adaptive_avg_pool2d_backward(const Tensor& gout, const Tensor& gx) {
  AdaptiveWindows windows{gx.size(1), gx.size(2), gout.size(1), gout.size(2)};
  TT_DISPATCH_FLOATING(gx.dtype(), "adaptive_avg_pool2d_backward",
                       [&] { window_mean_backward_typed<scalar_t>(gout, gx, windows, gx.size(1) * gx.size(2)); });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, max_pool2d, max_pool2d_backward, avg_pool2d, avg_pool2d_backward, adaptive_avg_pool2d,
                    adaptive_avg_pool2d_backward)

}  // namespace tt::cpu
