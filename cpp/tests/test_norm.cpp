// GoogleTests for the norm family (softmax, log_softmax, layer_norm, rms_norm) against
// double-precision references computed here.
#include <cmath>
#include "reduce_test_util.h"
#include "tinytorch/ops/norm.h"

namespace tt {
namespace {

using namespace tt::reduce_testing;

TEST(Softmax, ForwardBackwardEveryDim) {
  for (DType d : kFloats) {
    Case c = make_case(d, 5, 8, 4);
    auto g = from(randn(40, 5), {5, 8}, d);
    auto gr = values(g);
    for (int64_t dim : {0, 1}) {
      int64_t n = dim == 0 ? c.B : c.A, R = dim == 0 ? c.A : c.B;
      auto idx = [&](int64_t o, int64_t k) { return dim == 0 ? k * c.B + o : o * c.B + k; };
      std::vector<double> sm(c.r.size()), lsm(c.r.size());
      for (int64_t o = 0; o < n; ++o) {
        double m = -INFINITY, s = 0;
        for (int64_t k = 0; k < R; ++k) m = std::max(m, c.r[idx(o, k)]);
        for (int64_t k = 0; k < R; ++k) s += std::exp(c.r[idx(o, k)] - m);
        for (int64_t k = 0; k < R; ++k) {
          sm[idx(o, k)] = std::exp(c.r[idx(o, k)] - m) / s;
          lsm[idx(o, k)] = c.r[idx(o, k)] - m - std::log(s);
        }
      }
      Tensor y = softmax(c.x, dim);
      expect_close(values(y), sm, tol(d));
      expect_close(values(log_softmax(c.x, dim)), lsm, 4 * tol(d));
      // backward from the kernel's own output
      auto yr = values(y);
      std::vector<double> gin(yr.size()), lgin(yr.size());
      Tensor ly = log_softmax(c.x, dim);
      auto lyr = values(ly);
      for (int64_t o = 0; o < n; ++o) {
        double dot = 0, gs = 0;
        for (int64_t k = 0; k < R; ++k) { dot += gr[idx(o, k)] * yr[idx(o, k)]; gs += gr[idx(o, k)]; }
        for (int64_t k = 0; k < R; ++k) {
          gin[idx(o, k)] = yr[idx(o, k)] * (gr[idx(o, k)] - dot);
          lgin[idx(o, k)] = gr[idx(o, k)] - std::exp(lyr[idx(o, k)]) * gs;
        }
      }
      expect_close(values(softmax_backward(g, y, dim)), gin, 4 * tol(d));
      expect_close(values(log_softmax_backward(g, ly, dim)), lgin, 4 * tol(d));
    }
  }
  EXPECT_THROW(softmax(from({1, 2}, {2}, DType::Int64), 0), TypeError);
}

TEST(Norm, LayerNormAndRmsNormWithBackward) {
  for (DType d : kFloats) {
    const int64_t N = 4, D = 10;
    Case c = make_case(d, N, D, 6);
    Tensor w = from(randn(D, 7), {D}, d), b = from(randn(D, 8), {D}, d), g = from(randn(N * D, 9), {N, D}, d);
    auto wr = values(w), br = values(b), gr = values(g);
    for (bool rms : {false, true}) {
      Tensor y, mu, rs;
      if (rms) std::tie(y, rs) = rms_norm(c.x, {D}, w, 1e-5);
      else std::tie(y, mu, rs) = layer_norm(c.x, {D}, w, b, 1e-5);
      std::vector<double> yref(N * D), gx(N * D), gw(D, 0), gb(D, 0), rsref(N);
      for (int64_t i = 0; i < N; ++i) {
        double m = 0, v = 0;
        for (int64_t j = 0; j < D; ++j) m += c.r[i * D + j] / D;
        if (rms) m = 0;
        for (int64_t j = 0; j < D; ++j) v += (c.r[i * D + j] - m) * (c.r[i * D + j] - m) / D;
        double r = 1 / std::sqrt(v + 1e-5), s1 = 0, s2 = 0;
        rsref[i] = r;
        for (int64_t j = 0; j < D; ++j) {
          double xh = (c.r[i * D + j] - m) * r, gh = gr[i * D + j] * wr[j];
          yref[i * D + j] = xh * wr[j] + (rms ? 0 : br[j]);
          s1 += gh / D;
          s2 += gh * xh / D;
          gw[j] += gr[i * D + j] * xh;
          gb[j] += gr[i * D + j];
        }
        for (int64_t j = 0; j < D; ++j) {
          double xh = (c.r[i * D + j] - m) * r;
          gx[i * D + j] = r * (gr[i * D + j] * wr[j] - (rms ? 0 : s1) - xh * s2);
        }
      }
      expect_close(values(y), yref, 4 * tol(d));
      expect_close(values(rs), rsref, 2 * tol(d));
      Tensor gxt, gwt, gbt;
      if (rms) std::tie(gxt, gwt) = rms_norm_backward(g, c.x, rs, w);
      else std::tie(gxt, gwt, gbt) = layer_norm_backward(g, c.x, mu, rs, w, true);
      expect_close(values(gxt), gx, 8 * tol(d));
      expect_close(values(gwt), gw, 8 * tol(d));
      if (!rms) expect_close(values(gbt), gb, 8 * tol(d));
    }
  }
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  EXPECT_THROW(layer_norm(x, {4}, Tensor(), Tensor()), std::runtime_error);
}

}  // namespace
}  // namespace tt
