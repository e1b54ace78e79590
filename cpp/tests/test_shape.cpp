// Joining/shape kernels and factories vs double references, every float dtype, strided inputs.
#include <gtest/gtest.h>
#include "nn_test_util.h"
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/shape.h"

namespace {
using namespace tt;
using tt::testing::from_vec;
using tt::testing::rounded;
using tt::testing::to_vec;

class ShapeTest : public ::testing::TestWithParam<DType> {};

TEST_P(ShapeTest, CatStackTransposed) {
  DType dt = GetParam();
  auto a = rounded(6, dt, 1), b = rounded(6, dt, 2);
  Tensor ta = from_vec(a, {2, 3}, dt), tb = from_vec(b, {3, 2}, dt).transpose(0, 1);  // tb[i][j] = b[j*2+i]
  Tensor c = cat({ta, tb}, 1);  // (2, 6)
  ASSERT_EQ(c.shape(), (Shape{2, 6}));
  auto g = to_vec(c);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(g[i * 6 + j], a[i * 3 + j]);
      EXPECT_EQ(g[i * 6 + 3 + j], b[j * 2 + i]);
    }
  Tensor s = stack({ta, tb}, 2);  // (2, 3, 2)
  auto gs = to_vec(s);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(gs[(i * 3 + j) * 2], a[i * 3 + j]);
      EXPECT_EQ(gs[(i * 3 + j) * 2 + 1], b[j * 2 + i]);
    }
  // mixed dtypes promote: float32 + float64 -> float64
  EXPECT_EQ(cat({ta, Tensor::empty({1, 3}, DType::Float64)}, 0).dtype(), promote_types(dt, DType::Float64));
}

TEST_P(ShapeTest, FlipRollRepeat) {
  DType dt = GetParam();
  auto v = rounded(12, dt);
  Tensor x = from_vec(v, {3, 4}, dt);
  auto f = to_vec(flip(x.transpose(0, 1), {0, 1}));  // (4, 3): f[i][j] = xT[3-i][2-j] = x[2-j][3-i]
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(f[i * 3 + j], v[(2 - j) * 4 + (3 - i)]);
  auto r = to_vec(roll(x, {1, -1}, {0, 1}));  // r[i][j] = x[(i-1)%3][(j+1)%4]
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(r[i * 4 + j], v[((i + 2) % 3) * 4 + (j + 1) % 4]);
  Tensor rp = repeat(x.slice(1, 0, 4, 2), {2, 1, 3});  // (2, 3, 6) of x[:, ::2]
  ASSERT_EQ(rp.shape(), (Shape{2, 3, 6}));
  auto g = to_vec(rp);
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 6; ++j) EXPECT_EQ(g[(a * 3 + i) * 6 + j], v[i * 4 + (j % 2) * 2]);
}

TEST_P(ShapeTest, TrilTriu) {
  DType dt = GetParam();
  auto v = rounded(2 * 3 * 5, dt);
  Tensor x = from_vec(v, {2, 5, 3}, dt).transpose(1, 2);  // (2, 3, 5) view
  for (int64_t k : {-1, 0, 2}) {
    auto lo = to_vec(tril(x, k)), up = to_vec(triu(x, k));
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
          double xv = v[b * 15 + j * 3 + i];
          EXPECT_EQ(lo[b * 15 + i * 5 + j], j - i <= k ? xv : 0.0);
          EXPECT_EQ(up[b * 15 + i * 5 + j], j - i >= k ? xv : 0.0);
        }
  }
}

TEST_P(ShapeTest, Factories) {
  DType dt = GetParam();
  double tol = dt == DType::BFloat16 ? 1e-2 : dt == DType::Float16 ? 1e-3 : 1e-6;
  auto a = to_vec(arange(-1.0, 1.0, 0.25, dt));
  ASSERT_EQ(a.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(a[i], -1.0 + 0.25 * i, tol);
  auto l = to_vec(linspace(0.0, 3.0, 7, dt));
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(l[i], 0.5 * i, tol);
  EXPECT_EQ(to_vec(linspace(0.0, 3.0, 7, dt)).back(), 3.0);  // exact at the end
  auto e = to_vec(eye(2, 3, dt));
  std::vector<double> ref = {1, 0, 0, 0, 1, 0};
  EXPECT_EQ(e, ref);
}

TEST(ShapeOps, OneHotAndIntArange) {
  Tensor ind = arange(int64_t(0), int64_t(3), int64_t(1), DType::Int64);
  Tensor oh = one_hot(ind, 4);
  ASSERT_EQ(oh.shape(), (Shape{3, 4}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(oh.data<int64_t>()[i * 4 + j], i == j);
  Tensor big = arange(int64_t(1) << 60, (int64_t(1) << 60) + 3, int64_t(1), DType::Int64);
  EXPECT_EQ(big.data<int64_t>()[2], (int64_t(1) << 60) + 2);
}

TEST(ShapeErrors, BadInputs) {
  Tensor a = Tensor::empty({2, 3}, DType::Float32), b = Tensor::empty({2, 4}, DType::Float32);
  EXPECT_THROW(cat({a, b}, 0), std::runtime_error);
  EXPECT_THROW(cat({}, 0), std::invalid_argument);
  EXPECT_THROW(cat({a}, 3), std::out_of_range);
  EXPECT_THROW(stack({a, b}, 0), std::runtime_error);
  EXPECT_THROW(repeat(a, {2}), std::runtime_error);
  EXPECT_THROW(tril(Tensor::empty({3}, DType::Float32)), std::runtime_error);
  EXPECT_THROW(arange(0.0, 1.0, -1.0, DType::Float32), std::runtime_error);
}

// Views whose element count or reach overflows int64 are refused (they used to report a wrapped numel).
TEST(ShapeOps, SizesThatOverflowAreRefused) {
  Tensor one = Tensor::empty({1, 1}, DType::Float32);
  EXPECT_THROW(one.expand({int64_t(1) << 62, 4}), std::runtime_error);
  EXPECT_THROW(one.expand({int64_t(1) << 32, int64_t(1) << 32}), std::runtime_error);
  EXPECT_EQ(one.expand({0, int64_t(1) << 62}).numel(), 0);   // empty, however large the other dimension
  Tensor four = Tensor::empty({4}, DType::Float32);
  EXPECT_THROW(four.as_strided({3, 2}, {int64_t(1) << 62, 1}, 0), std::runtime_error);
  EXPECT_THROW(Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}, DType::Float32), std::runtime_error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ShapeTest,
                         ::testing::Values(DType::Float32, DType::Float16, DType::BFloat16, DType::Float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
