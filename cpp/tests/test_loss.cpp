// Loss kernels (nll_loss, cross_entropy) against double-precision loops, all float dtypes.
#include "nn_test_util.h"
#include "tinytorch/ops/loss.h"

using namespace tt;
using namespace tt::testing;

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

TEST(Loss, NllAndCrossEntropy) {
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

TEST(Loss, LossErrors) {
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

// A float32 loss from bfloat16 logits (autocast's request) is the loss of the logits cast to float32.
TEST(Loss, WiderLossDtypeEqualsTheCast) {
  Tensor x = rand_tensor({5, 7}, DType::BFloat16, 3);
  Tensor t = int_tensor({5}, {0, 6, 2, 2, 1});
  for (int64_t red : {0, 1, 2}) {
    Tensor a = cross_entropy(x, t, Tensor(), red, 2, 0.1, DType::Float32);
    Tensor b = cross_entropy(x.to(DType::Float32), t, Tensor(), red, 2, 0.1);
    ASSERT_EQ(a.dtype(), DType::Float32);
    EXPECT_EQ(to_vec(a), to_vec(b)) << "reduction " << red;
  }
  EXPECT_THROW(cross_entropy(x, t, Tensor(), 1, -100, 0.0, DType::Int64), std::runtime_error);
}
