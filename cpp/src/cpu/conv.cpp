// CPU im2col / col2im / channel_sum for the conv2d op layer (which does the GEMMs).
#include <immintrin.h>
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>
#include "tinytorch/kernels/conv.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// Row copy dst[0:n] = src[0:n] in 16-float AVX-512 pieces (im2col's rows are ~Wo floats long).
__attribute__((target("avx512f"))) void copy_row_avx512(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_loadu_ps(src + i));
  if (i < n) {
    __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_loadu_ps(m, src + i));
  }
}

// The layout im2col and col2im share: x (nb, C, H, W) and col (nb, C*kh*kw, L = Ho*Wo) with any
// item and row strides (L is dense); column row (c*kh + i)*kw + j of item b reads x[b, c] at
// kernel offset (i, j). Tasks are (b, c) planes.
struct ColLayout {
  int64_t nb, C, H, W, K, L, sb, sr;
  ColLayout(const Tensor& x, const Tensor& col, const Conv2dParams& p, int64_t Ho, int64_t Wo)
      : nb(x.size(0)), C(x.size(1)), H(x.size(2)), W(x.size(3)), K(p.kh * p.kw), L(Ho * Wo), sb(col.stride(0)),
        sr(col.stride(1)) {}
  int64_t plane_grain() const { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, K * L)); }
  // Offset in col of plane bc = b * C + c's first row.
  int64_t col_plane(int64_t bc) const { return (bc / C) * sb + (bc % C) * K * sr; }
};

// Unit column stride: output column ow reads input column ow + off, inside the row for ow in [lo, hi).
struct UnitStrideSpan {
  int64_t off, lo, hi;
  UnitStrideSpan(const Conv2dParams& p, int64_t j, int64_t W, int64_t Wo)
      : off(j * p.dw - p.pw), lo(std::clamp<int64_t>(-off, 0, Wo)), hi(std::clamp<int64_t>(W - off, lo, Wo)) {}
};

// x: (nb, C, H, W) -> col: (nb, C*kh*kw, Ho*Wo); one task per (b, c) plane.
template <class T>
void im2col_typed(const Tensor& x, const Tensor& col, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  const ColLayout g(x, col, p, Ho, Wo);
  const int64_t H = g.H, W = g.W;
  const T* xp = x.data<T>();
  T* cp = col.data<T>();
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  parallel_for(0, g.nb * g.C, g.plane_grain(), [&](int64_t b0, int64_t b1) {
    for (int64_t bc = b0; bc < b1; ++bc) {
      const T* xs = xp + bc * H * W;
      T* cs = cp + g.col_plane(bc);
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j) {
          T* row = cs + (i * p.kw + j) * g.sr;
          for (int64_t oh = 0; oh < Ho; ++oh) {
            T* dst = row + oh * Wo;
            int64_t ih = oh * p.sh - p.ph + i * p.dh;
            if (ih < 0 || ih >= H) {
              std::fill(dst, dst + Wo, T(0));
              continue;
            }
            const T* src = xs + ih * W;
            if (p.sw == 1) {  // dst[ow] = src[ow + off] for ow in [lo, hi), zero elsewhere
              const auto [off, lo, hi] = UnitStrideSpan(p, j, W, Wo);
              if constexpr (std::is_same_v<T, float>) {
                if (avx512 && lo == 0 && hi == Wo) {
                  copy_row_avx512(src + off, dst, Wo);
                  continue;
                }
              }
              for (int64_t ow = 0; ow < lo; ++ow) dst[ow] = T(0);
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow + off];  // short rows: no memmove call
              for (int64_t ow = hi; ow < Wo; ++ow) dst[ow] = T(0);
              continue;
            }
            for (int64_t ow = 0; ow < Wo; ++ow) {
              int64_t iw = ow * p.sw - p.pw + j * p.dw;
              dst[ow] = (iw >= 0 && iw < W) ? src[iw] : T(0);
            }
          }
        }
    }
  });
}

// col: (nb, C*kh*kw, Ho*Wo) -> x: (nb, C, H, W) = sum of the entries read from each position.
// Each task owns whole (b, c) planes of x, so the sums are race-free and in a fixed order.
template <class T>
void col2im_typed(const Tensor& col, const Tensor& x, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  const ColLayout g(x, col, p, Ho, Wo);
  const int64_t H = g.H, W = g.W;
  const T* cp = col.data<T>();
  T* xp = x.data<T>();
  using A = opmath_t<T>;
  parallel_for(0, g.nb * g.C, g.plane_grain(), [&](int64_t b0, int64_t b1) {
    std::vector<A> acc(static_cast<size_t>(H * W));
    for (int64_t bc = b0; bc < b1; ++bc) {
      std::fill(acc.begin(), acc.end(), A(0));
      const T* cs = cp + g.col_plane(bc);
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j) {
          const T* row = cs + (i * p.kw + j) * g.sr;
          for (int64_t oh = 0; oh < Ho; ++oh) {
            int64_t ih = oh * p.sh - p.ph + i * p.dh;
            if (ih < 0 || ih >= H) continue;
            A* dst = acc.data() + ih * W;
            const T* src = row + oh * Wo;
            if (p.sw == 1) {  // dst[ow + off] += src[ow] for ow in [lo, hi)
              const auto [off, lo, hi] = UnitStrideSpan(p, j, W, Wo);
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow + off] += static_cast<A>(src[ow]);
              continue;
            }
            for (int64_t ow = 0; ow < Wo; ++ow) {
              int64_t iw = ow * p.sw - p.pw + j * p.dw;
              if (iw >= 0 && iw < W) dst[iw] += static_cast<A>(src[ow]);
            }
          }
        }
      T* xs = xp + bc * H * W;
      for (int64_t k = 0; k < H * W; ++k) xs[k] = static_cast<T>(acc[k]);
    }
  });
}

// g: (B, C, L) -> out: (C); sums in double for a result independent of thread count.
template <class T>
void channel_sum_typed(const Tensor& g, const Tensor& out, bool accumulate) {
  int64_t B = g.size(0), C = g.size(1), L = g.size(2);
  const T* gp = g.data<T>();
  T* op = out.data<T>();
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, B * L));
  parallel_for(0, C, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      // 8 running sums (entry l goes to sum l % 8): independent adds that vectorize
      double s8[8] = {};
      for (int64_t b = 0; b < B; ++b) {
        const T* row = gp + (b * C + c) * L;
        int64_t l = 0;
        for (; l + 8 <= L; l += 8)
          for (int k = 0; k < 8; ++k) s8[k] += static_cast<double>(static_cast<opmath_t<T>>(row[l + k]));
        for (; l < L; ++l) s8[l % 8] += static_cast<double>(static_cast<opmath_t<T>>(row[l]));
      }
      double s = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
      if (accumulate) s += static_cast<double>(static_cast<opmath_t<T>>(op[c]));
      op[c] = static_cast<T>(static_cast<opmath_t<T>>(s));
    }
  });
}

void cpu_im2col(const Tensor& x, const Tensor& col, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  TT_DISPATCH_FLOATING(x.dtype(), "im2col", [&] { im2col_typed<scalar_t>(x, col, p, Ho, Wo); });
}
void cpu_col2im(const Tensor& col, const Tensor& x, const Conv2dParams& p, int64_t Ho, int64_t Wo) {
  TT_DISPATCH_FLOATING(x.dtype(), "col2im", [&] { col2im_typed<scalar_t>(col, x, p, Ho, Wo); });
}
void cpu_channel_sum(const Tensor& g, const Tensor& out, bool accumulate) {
  TT_DISPATCH_FLOATING(g.dtype(), "channel_sum", [&] { channel_sum_typed<scalar_t>(g, out, accumulate); });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, im2col, col2im, channel_sum)

}  // namespace tt::cpu
