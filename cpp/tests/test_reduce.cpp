// GoogleTests for the reduce family against double-precision references computed here.
#include <cmath>
#include "reduce_test_util.h"
#include "tinytorch/ops/reduce.h"

namespace tt {
namespace {

using namespace tt::reduce_testing;

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

}  // namespace
}  // namespace tt
