// Pooling, embedding and loss kernels against double-precision loops, all float dtypes.
#include <limits>
#include "nn_test_util.h"
#include "tinytorch/ops/nn.h"

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

TEST(NN, MaxPool2dForwardBackward) {
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

TEST(NN, AvgPool2dForwardBackward) {
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

TEST(NN, AdaptiveAvgPool2d) {
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

TEST(NN, PoolErrors) {
  Tensor x = rand_tensor({1, 2, 4, 4}, DType::Float32, 1);
  EXPECT_THROW(max_pool2d(x, {2, 2}, std::nullopt, {2, 2}, {1, 1}, false), std::runtime_error);  // pad > k/2
  EXPECT_THROW(max_pool2d(x, {5, 5}, std::nullopt, {0, 0}, {1, 1}, false), std::runtime_error);  // output empty
  EXPECT_THROW(avg_pool2d(rand_tensor({4, 4}, DType::Float32, 1), {2, 2}, std::nullopt, {0, 0}, false, true,
                          std::nullopt),
               std::runtime_error);
  EXPECT_THROW(max_pool2d(x.to(DType::Int64), {2, 2}, std::nullopt, {0, 0}, {1, 1}, false), TypeError);
}

TEST(NN, Embedding) {
  for (DType d : kFloatTypes)
    for (DType id : {DType::Int64, DType::Int32}) {
      Tensor w = rand_tensor({5, 3}, d, 51);
      Tensor idx = int_tensor({2, 3}, {4, 0, 4, 1, 2, 4}, id);
      Tensor out = embedding(w, idx);
      ASSERT_EQ(out.shape(), (Shape{2, 3, 3}));
      std::vector<double> wv = to_vec(w), iv = to_vec(idx), want;
      for (double i : iv) want.insert(want.end(), wv.begin() + static_cast<int64_t>(i) * 3, wv.begin() + static_cast<int64_t>(i) * 3 + 3);
      expect_close(out, want, d, 0.0, "embedding");
      Tensor g = rand_tensor({2, 3, 3}, d, 52);
      std::vector<double> gv = to_vec(g);
      for (int pad : {-1, 4}) {
        std::vector<double> gwant(15, 0.0);
        for (size_t n = 0; n < iv.size(); ++n)
          if (static_cast<int>(iv[n]) != pad)
            for (int k = 0; k < 3; ++k) gwant[static_cast<size_t>(iv[n]) * 3 + k] += gv[n * 3 + k];
        Tensor gw = embedding_backward(g, idx, 5, pad < 0 ? std::nullopt : std::optional<int64_t>(pad));
        expect_close(gw, gwant, d, 2.0, "embedding_backward");
      }
    }
  EXPECT_THROW(embedding(rand_tensor({5, 3}, DType::Float32, 1), int_tensor({2}, {1, 5})), std::out_of_range);
  EXPECT_THROW(embedding(rand_tensor({5, 3}, DType::Float32, 1), int_tensor({2}, {-1, 2})), std::out_of_range);
  EXPECT_THROW(embedding(rand_tensor({5, 3}, DType::Float32, 1), rand_tensor({2}, DType::Float32, 1)),
               std::runtime_error);
}

namespace {
// Cross-entropy / nll reference over (N, C, S) in double; returns (per-sample loss, total weight).
void ce_ref(const std::vector<double>& x, const std::vector<int64_t>& t, const std::vector<double>& w, int64_t N,
            int64_t C, int64_t S, int64_t ignore, double eps, bool log_softmax, std::vector<double>& loss,
            std::vector<double>& grad_unit, double& tw) {
  loss.assign(static_cast<size_t>(N * S), 0.0);
  grad_unit.assign(x.size(), 0.0);  // d loss[n,s] / d x, before the reduction scale
  tw = 0;
  auto W = [&](int64_t c) { return w.empty() ? 1.0 : w[c]; };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t s = 0; s < S; ++s) {
      int64_t tt_ = t[n * S + s];
      if (tt_ == ignore) continue;
      tw += W(tt_);
      std::vector<double> lp(C), p(C);
      double mx = -1e300, se = 0;
      for (int64_t c = 0; c < C; ++c) mx = std::max(mx, x[(n * C + c) * S + s]);
      for (int64_t c = 0; c < C; ++c) se += std::exp(x[(n * C + c) * S + s] - mx);
      for (int64_t c = 0; c < C; ++c) {
        double v = x[(n * C + c) * S + s];
        lp[c] = log_softmax ? v - mx - std::log(se) : v;
        p[c] = std::exp(lp[c]);
      }
      double smooth = 0, wsum = 0;
      for (int64_t c = 0; c < C; ++c) smooth -= W(c) * lp[c], wsum += W(c);
      loss[n * S + s] = (1 - eps) * (-W(tt_) * lp[tt_]) + eps / C * smooth;
      for (int64_t c = 0; c < C; ++c) {
        double gval = log_softmax ? (1 - eps) * W(tt_) * (p[c] - (c == tt_)) + eps / C * (wsum * p[c] - W(c))
                                  : (c == tt_ ? -W(tt_) : 0.0);
        grad_unit[(n * C + c) * S + s] = gval;
      }
    }
}
}  // namespace

TEST(NN, NllAndCrossEntropy) {
  int64_t N = 3, C = 4, S = 2;  // input (N, C, 2) -> target (N, 2)
  std::vector<int64_t> t = {0, 3, -100, 1, 2, 2};
  for (DType d : kFloatTypes)
    for (bool ce : {false, true})
      for (bool weighted : {false, true})
        for (double eps : ce ? std::vector<double>{0.0, 0.2} : std::vector<double>{0.0})
          for (int64_t red : {0, 1, 2}) {
            SCOPED_TRACE(std::string(ce ? "ce" : "nll") + (weighted ? " weighted" : "") + " eps=" +
                         std::to_string(eps) + " red=" + std::to_string(red));
            Tensor x = rand_tensor({N, S, C}, d, 61).transpose(1, 2);  // (N, C, S), non-contiguous
            Tensor target = int_tensor({N, S}, t);
            Tensor w = weighted ? rand_tensor({C}, d, 62) : Tensor();
            std::vector<double> xv = to_vec(x), wv = weighted ? to_vec(w) : std::vector<double>{}, loss, gu;
            double tw;
            ce_ref(xv, t, wv, N, C, S, -100, eps, ce, loss, gu, tw);
            Tensor out = ce ? cross_entropy(x, target, w, red, -100, eps) : nll_loss(x, target, w, red, -100);
            Tensor g = red == 0 ? rand_tensor({N, S}, d, 63) : rand_tensor({}, d, 63);
            std::vector<double> gv = to_vec(g), want, gwant(xv.size());
            if (red == 0) want = loss;
            else {
              double s = 0;
              for (double v : loss) s += v;
              want = {red == 1 ? s / tw : s};
            }
            for (int64_t n = 0; n < N; ++n)
              for (int64_t c = 0; c < C; ++c)
                for (int64_t s = 0; s < S; ++s) {
                  double scale = red == 0 ? gv[n * S + s] : (red == 1 ? gv[0] / tw : gv[0]);
                  gwant[(n * C + c) * S + s] = scale * gu[(n * C + c) * S + s];
                }
            EXPECT_EQ(out.shape(), red == 0 ? (Shape{N, S}) : Shape{});
            expect_close(out, want, d, 4.0, "loss");
            Tensor gx = ce ? cross_entropy_backward(g, x, target, w, red, -100, eps)
                           : nll_loss_backward(g, x, target, w, red, -100);
            EXPECT_EQ(gx.shape(), x.shape());
            expect_close(gx, gwant, d, 4.0, "grad");
          }
}

TEST(NN, LossErrors) {
  Tensor x = rand_tensor({3, 4}, DType::Float32, 1);
  EXPECT_THROW(nll_loss(x, int_tensor({3}, {0, 4, 1}), Tensor(), 1, -100), std::out_of_range);
  EXPECT_THROW(cross_entropy(x, int_tensor({3}, {0, -2, 1}), Tensor(), 1, -100, 0.0), std::out_of_range);
  EXPECT_THROW(nll_loss(x, int_tensor({2}, {0, 1}), Tensor(), 1, -100), std::invalid_argument);
  EXPECT_THROW(nll_loss(x, int_tensor({3}, {0, 1, 1}), rand_tensor({3}, DType::Float32, 1), 1, -100),
               std::runtime_error);
  EXPECT_THROW(nll_loss(x, int_tensor({3}, {0, 1, 1}), Tensor(), 3, -100), std::invalid_argument);
  EXPECT_THROW(cross_entropy(x, int_tensor({3}, {0, 1, 1}), Tensor(), 1, -100, 1.5), std::invalid_argument);
  try {
    nll_loss(x, int_tensor({3}, {0, 7, 1}), Tensor(), 1, -100);
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("Target 7 is out of bounds"), std::string::npos) << e.what();
  }
}
