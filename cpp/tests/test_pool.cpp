// Pooling kernels against double-precision loops, all float dtypes.
#include <limits>
#include "nn_test_util.h"
#include "tinytorch/ops/pool.h"

using namespace tt;
using namespace tt::testing;

namespace {

int64_t ref_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  double v = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t o = static_cast<int64_t>(ceil_mode ? std::ceil(v) : std::floor(v)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

struct PoolSpec { int64_t P, H, W, kh, kw, sh, sw, ph, pw, dh, dw; bool ceil; };

}  // namespace

TEST(Pool, MaxPool2dForwardBackward) {
  std::vector<PoolSpec> specs = {{6, 7, 6, 3, 2, 2, 1, 1, 1, 1, 2, true},
                                 {4, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1, false},
                                 {2, 9, 7, 3, 3, 2, 3, 1, 0, 2, 1, true}};
  for (DType d : kFloatTypes)
    for (const auto& s : specs) {
      Tensor x = rand_tensor({2, s.P / 2, s.W, s.H}, d, 21).transpose(2, 3);  // non-contiguous (2, P/2, H, W)
      auto [out, idx] = max_pool2d(x, {s.kh, s.kw}, Pair2{s.sh, s.sw}, {s.ph, s.pw}, {s.dh, s.dw}, s.ceil);
      int64_t Ho = ref_out(s.H, s.kh, s.ph, s.sh, s.dh, s.ceil), Wo = ref_out(s.W, s.kw, s.pw, s.sw, s.dw, s.ceil);
      ASSERT_EQ(out.shape(), (Shape{2, s.P / 2, Ho, Wo}));
      std::vector<double> xv = to_vec(x), want(static_cast<size_t>(s.P * Ho * Wo)), wi(want.size());
      for (int64_t p = 0; p < s.P; ++p)
        for (int64_t oh = 0; oh < Ho; ++oh)
          for (int64_t ow = 0; ow < Wo; ++ow) {
            double best = -std::numeric_limits<double>::infinity();
            int64_t bi = -1;
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                int64_t ih = oh * s.sh - s.ph + i * s.dh, iw = ow * s.sw - s.pw + j * s.dw;
                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
                double v = xv[(p * s.H + ih) * s.W + iw];
                if (bi < 0 || v > best) best = v, bi = ih * s.W + iw;
              }
            want[(p * Ho + oh) * Wo + ow] = best;
            wi[(p * Ho + oh) * Wo + ow] = static_cast<double>(bi);
          }
      expect_close(out, want, d, 0.0, "max_pool2d");  // exact: max selects an input value
      // bf16/f16 ties could pick another position: only require the value at the index to match.
      std::vector<double> iv = to_vec(idx);
      for (size_t k = 0; k < iv.size(); ++k)
        EXPECT_EQ(xv[(k / (Ho * Wo)) * s.H * s.W + static_cast<size_t>(iv[k])], want[k]);
      if (d == DType::Float64) EXPECT_EQ(iv, wi);
      Tensor g = rand_tensor(out.shape(), d, 22);
      Tensor gx = max_pool2d_backward(g, idx, x.shape());
      std::vector<double> gv = to_vec(g), gwant(xv.size(), 0.0);
      for (size_t k = 0; k < iv.size(); ++k) gwant[(k / (Ho * Wo)) * s.H * s.W + static_cast<size_t>(iv[k])] += gv[k];
      expect_close(gx, gwant, d, 2.0, "max_pool2d_backward");
    }
}

TEST(Pool, AvgPool2dForwardBackward) {
  struct S { int64_t kh, kw, sh, sw, ph, pw; bool ceil, cip; int64_t div; };
  std::vector<S> specs = {{3, 2, 2, 1, 1, 1, true, true, 0}, {3, 2, 2, 1, 1, 1, true, false, 0},
                          {2, 2, 2, 2, 0, 0, false, true, 0}, {3, 3, 2, 2, 1, 1, false, false, 5}};
  int64_t H = 7, W = 6, P = 4;
  for (DType d : kFloatTypes)
    for (const auto& s : specs) {
      Tensor x = rand_tensor({2, 2, H, W}, d, 31);
      std::optional<int64_t> div = s.div ? std::optional<int64_t>(s.div) : std::nullopt;
      Tensor out = avg_pool2d(x, {s.kh, s.kw}, Pair2{s.sh, s.sw}, {s.ph, s.pw}, s.ceil, s.cip, div);
      int64_t Ho = ref_out(H, s.kh, s.ph, s.sh, 1, s.ceil), Wo = ref_out(W, s.kw, s.pw, s.sw, 1, s.ceil);
      ASSERT_EQ(out.shape(), (Shape{2, 2, Ho, Wo}));
      Tensor g = rand_tensor(out.shape(), d, 32);
      std::vector<double> xv = to_vec(x), gv = to_vec(g), want(static_cast<size_t>(P * Ho * Wo)), gwant(xv.size(), 0.0);
      for (int64_t p = 0; p < P; ++p)
        for (int64_t oh = 0; oh < Ho; ++oh)
          for (int64_t ow = 0; ow < Wo; ++ow) {
            int64_t h0 = oh * s.sh - s.ph, w0 = ow * s.sw - s.pw;
            int64_t h1 = std::min(h0 + s.kh, H + s.ph), w1 = std::min(w0 + s.kw, W + s.pw);
            double pool = static_cast<double>((h1 - h0) * (w1 - w0));
            double sum = 0, cnt = 0;
            for (int64_t ih = std::max<int64_t>(h0, 0); ih < std::min(h1, H); ++ih)
              for (int64_t iw = std::max<int64_t>(w0, 0); iw < std::min(w1, W); ++iw) sum += xv[(p * H + ih) * W + iw], ++cnt;
            double div_ = s.div ? static_cast<double>(s.div) : (s.cip ? pool : cnt);
            int64_t oi = (p * Ho + oh) * Wo + ow;
            want[oi] = sum / div_;
            for (int64_t ih = std::max<int64_t>(h0, 0); ih < std::min(h1, H); ++ih)
              for (int64_t iw = std::max<int64_t>(w0, 0); iw < std::min(w1, W); ++iw)
                gwant[(p * H + ih) * W + iw] += gv[oi] / div_;
          }
      expect_close(out, want, d, 2.0, "avg_pool2d");
      Tensor gx = avg_pool2d_backward(g, x.shape(), {s.kh, s.kw}, Pair2{s.sh, s.sw}, {s.ph, s.pw}, s.ceil, s.cip, div);
      expect_close(gx, gwant, d, 2.0, "avg_pool2d_backward");
    }
}

TEST(Pool, AdaptiveAvgPool2d) {
  int64_t H = 7, W = 5, Ho = 3, Wo = 2;
  for (DType d : kFloatTypes) {
    Tensor x = rand_tensor({3, W, H}, d, 41).transpose(1, 2);  // unbatched, non-contiguous
    Tensor out = adaptive_avg_pool2d(x, {Ho, Wo});
    ASSERT_EQ(out.shape(), (Shape{3, Ho, Wo}));
    Tensor g = rand_tensor(out.shape(), d, 42);
    std::vector<double> xv = to_vec(x), gv = to_vec(g), want(static_cast<size_t>(3 * Ho * Wo)), gwant(xv.size(), 0.0);
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          int64_t h0 = oh * H / Ho, h1 = ((oh + 1) * H + Ho - 1) / Ho, w0 = ow * W / Wo, w1 = ((ow + 1) * W + Wo - 1) / Wo;
          double sum = 0, n = static_cast<double>((h1 - h0) * (w1 - w0));
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += xv[(p * H + ih) * W + iw];
          int64_t oi = (p * Ho + oh) * Wo + ow;
          want[oi] = sum / n;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) gwant[(p * H + ih) * W + iw] += gv[oi] / n;
        }
    expect_close(out, want, d, 2.0, "adaptive_avg_pool2d");
    expect_close(adaptive_avg_pool2d_backward(g, x.shape()), gwant, d, 2.0, "adaptive_avg_pool2d_backward");
  }
}

TEST(Pool, PoolErrors) {
  Tensor x = rand_tensor({1, 2, 4, 4}, DType::Float32, 1);
  EXPECT_THROW(max_pool2d(x, {2, 2}, std::nullopt, {2, 2}, {1, 1}, false), std::runtime_error);  // pad > k/2
  EXPECT_THROW(max_pool2d(x, {5, 5}, std::nullopt, {0, 0}, {1, 1}, false), std::runtime_error);  // output empty
  EXPECT_THROW(avg_pool2d(rand_tensor({4, 4}, DType::Float32, 1), {2, 2}, std::nullopt, {0, 0}, false, true,
                          std::nullopt),
               std::runtime_error);
  EXPECT_THROW(max_pool2d(x.to(DType::Int64), {2, 2}, std::nullopt, {0, 0}, {1, 1}, false), TypeError);
}
