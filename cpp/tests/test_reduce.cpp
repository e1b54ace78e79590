// GoogleTests for the reduce family against double-precision references computed here.
#include <gtest/gtest.h>
#include <cmath>
#include <random>
#include "tinytorch/ops/reduce.h"

namespace tt {
namespace {

const DType kFloats[] = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64};
double tol(DType d) {
  switch (d) {
    case DType::Float64: return 1e-10;
    case DType::Float32: return 2e-5;
    case DType::Float16: return 4e-3;
    default: return 3e-2;
  }
}

Tensor from(const std::vector<double>& v, const Shape& shape, DType d) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.to(d);
}
// Values as double, contiguous, in logical order.
std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(DType::Float64, true).contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}
std::vector<double> randn(int64_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i]))) << "at " << i;
}

// x: (A, B) stored transposed, so x.transpose is a non-contiguous view.
struct Case {
  Tensor x;             // (A, B), non-contiguous
  std::vector<double> r;  // its rounded values, row-major (A, B)
  int64_t A, B;
};
Case make_case(DType d, int64_t A, int64_t B, unsigned seed) {
  auto v = randn(A * B, seed);
  Tensor stored = from(v, {B, A}, d);  // (B, A) contiguous
  Case c{stored.transpose(0, 1), {}, A, B};
  c.r = values(c.x);
  return c;
}

TEST(Reduce, SumMeanMaxVarOverEachDim) {
  for (DType d : kFloats) {
    Case c = make_case(d, 5, 7, 1);
    for (int64_t dim : {0, 1}) {
      int64_t n = dim == 0 ? c.B : c.A, R = dim == 0 ? c.A : c.B;
      std::vector<double> s(n), mx(n, -INFINITY), vr(n), lse(n);
      for (int64_t o = 0; o < n; ++o) {
        auto at = [&](int64_t k) { return dim == 0 ? c.r[k * c.B + o] : c.r[o * c.B + k]; };
        double m = 0;
        for (int64_t k = 0; k < R; ++k) { s[o] += at(k); mx[o] = std::max(mx[o], at(k)); }
        m = s[o] / R;
        for (int64_t k = 0; k < R; ++k) vr[o] += (at(k) - m) * (at(k) - m) / (R - 1);
        for (int64_t k = 0; k < R; ++k) lse[o] += std::exp(at(k) - mx[o]);
        lse[o] = std::log(lse[o]) + mx[o];
      }
      expect_close(values(sum(c.x, Shape{dim})), s, tol(d));
      std::vector<double> mean_ref(s);
      for (auto& v : mean_ref) v /= R;
      expect_close(values(mean(c.x, Shape{dim})), mean_ref, tol(d));
      expect_close(values(amax(c.x, Shape{dim})), mx, tol(d));
      expect_close(values(var(c.x, Shape{dim})), vr, 2 * tol(d));
      expect_close(values(logsumexp(c.x, Shape{dim})), lse, 2 * tol(d));
      EXPECT_EQ(sum(c.x, Shape{dim}, true).shape(), (dim == 0 ? Shape{1, c.B} : Shape{c.A, 1}));
    }
  }
}

TEST(Reduce, IntegerSumIsInt64AndMeanRejectsIntegers) {
  Tensor x = from({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Int32);
  Tensor s = sum(x, Shape{1});
  EXPECT_EQ(s.dtype(), DType::Int64);
  EXPECT_EQ(values(s), (std::vector<double>{6, 15}));
  EXPECT_EQ(values(prod(x)), (std::vector<double>{720}));
  EXPECT_THROW(mean(x), TypeError);
  Tensor b = from({1, 0, 1, 1}, {4}, DType::Bool);
  EXPECT_EQ(sum(b).dtype(), DType::Int64);
  EXPECT_EQ(values(sum(b)), (std::vector<double>{3}));
  EXPECT_EQ(all(b).dtype(), DType::Bool);
  EXPECT_EQ(values(all(b)), (std::vector<double>{0}));
  EXPECT_EQ(values(any(b)), (std::vector<double>{1}));
}

TEST(Reduce, EmptyAndErrors) {
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  EXPECT_EQ(values(sum(e, Shape{0})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(prod(e, Shape{0})), (std::vector<double>{1, 1, 1}));
  EXPECT_THROW(amax(e, Shape{0}), std::out_of_range);
  EXPECT_THROW(max_all(e), std::out_of_range);
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  EXPECT_THROW(sum(x, Shape{2}), std::out_of_range);
  EXPECT_THROW(sum(x, Shape{1, -1}), std::runtime_error);
}

TEST(Reduce, MaxDimTiesAndNaN) {
  for (DType d : kFloats) {
    Tensor x = from({1, 3, 3, 2, NAN, 5, NAN, 0}, {2, 4}, d);
    auto [v, i] = max_dim(x, 1);
    EXPECT_EQ(values(i), (std::vector<double>{1, 0}));
    EXPECT_EQ(values(v)[0], 3);
    EXPECT_TRUE(std::isnan(values(v)[1]));
    auto [v2, i2] = min_dim(x.transpose(0, 1), 0);
    EXPECT_EQ(values(i2), (std::vector<double>{0, 0}));
    EXPECT_TRUE(std::isnan(values(amax(x, Shape{1}))[1]));
    EXPECT_EQ(values(argmax(x)), (std::vector<double>{4}));
  }
}

TEST(Reduce, NormP) {
  for (DType d : kFloats) {
    Case c = make_case(d, 3, 9, 2);
    for (double p : {2.0, 1.0, 3.0, double(INFINITY), -double(INFINITY), 0.0}) {
      std::vector<double> want(c.A, 0);
      for (int64_t a = 0; a < c.A; ++a) {
        double acc = std::isinf(p) ? (p > 0 ? 0 : INFINITY) : 0;
        for (int64_t b = 0; b < c.B; ++b) {
          double v = std::abs(c.r[a * c.B + b]);
          if (std::isinf(p)) acc = p > 0 ? std::max(acc, v) : std::min(acc, v);
          else if (p == 0) acc += v != 0;
          else acc += std::pow(v, p);
        }
        want[a] = (std::isinf(p) || p == 0) ? acc : std::pow(acc, 1 / p);
      }
      expect_close(values(norm(c.x, p, Shape{1})), want, 4 * tol(d));
    }
  }
}

TEST(Scan, CumsumCumprod) {
  for (DType d : kFloats) {
    Case c = make_case(d, 4, 6, 3);
    for (int64_t dim : {0, 1}) {
      std::vector<double> cs(c.r), cp(c.r);
      for (int64_t a = 0; a < c.A; ++a)
        for (int64_t b = 0; b < c.B; ++b) {
          int64_t k = a * c.B + b, prev = dim == 0 ? k - c.B : k - 1;
          bool first = dim == 0 ? a == 0 : b == 0;
          if (!first) { cs[k] += cs[prev]; cp[k] *= cp[prev]; }
        }
      expect_close(values(cumsum(c.x, dim)), cs, 4 * tol(d));
      expect_close(values(cumprod(c.x, dim)), cp, 4 * tol(d));
    }
  }
  EXPECT_EQ(cumsum(from({1, 2}, {2}, DType::UInt8), 0).dtype(), DType::Int64);
}

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
