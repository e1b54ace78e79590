// Random kernels: Philox stream, reproducibility across thread counts, moments per dtype.
#include <gtest/gtest.h>
#include <cmath>
#include "tinytorch/ops/dropout.h"
#include "tinytorch/ops/random.h"
#include "tinytorch/parallel.h"

namespace {
using namespace tt;

std::vector<double> to_vec(const Tensor& t) {
  Tensor c = t.to(DType::Float64, true).contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

TEST(Philox, KnownAnswer) {
  // Random123's published kat_vectors for philox4x32_10 with counter = key = 0.
  auto r = philox4x32(0, 0);
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

class RandomTest : public ::testing::TestWithParam<DType> {};

TEST_P(RandomTest, SameSeedAnyThreadCount) {
  DType dt = GetParam();
  int old = get_num_threads();
  std::vector<double> first;
  for (int nt : {1, 2, 4}) {
    set_num_threads(nt);
    Generator g(99);
    Tensor x = Tensor::empty({50001}, dt);
    normal_(x, 0, 1, &g);
    auto v = to_vec(x);
    if (first.empty()) first = v;
    else EXPECT_EQ(v, first);
  }
  set_num_threads(old);
}

TEST_P(RandomTest, UniformNormalMoments) {
  DType dt = GetParam();
  Generator g(5);
  Tensor u = Tensor::empty({100, 1000}, dt).transpose(0, 1);  // strided target
  uniform_(u, 2.0, 4.0, &g);
  double s = 0, s2 = 0, lo = 1e9, hi = -1e9;
  for (double x : to_vec(u)) { s += x; s2 += x * x; lo = std::min(lo, x); hi = std::max(hi, x); }
  double n = 1e5, mean = s / n, var = s2 / n - mean * mean;
  EXPECT_GE(lo, 2.0);
  EXPECT_LE(hi, 4.0);
  EXPECT_NEAR(mean, 3.0, 0.01);
  EXPECT_NEAR(var, 1.0 / 3.0, 0.01);
  Tensor z = Tensor::empty({100000}, dt);
  normal_(z, -1.0, 0.5, &g);
  s = s2 = 0;
  for (double x : to_vec(z)) { s += x; s2 += x * x; }
  mean = s / n;
  EXPECT_NEAR(mean, -1.0, 0.01);
  EXPECT_NEAR(std::sqrt(s2 / n - mean * mean), 0.5, 0.01);
}

TEST_P(RandomTest, DropoutScalesKeptValues) {
  DType dt = GetParam();
  Generator g(8);
  Tensor x = Tensor::empty({4000}, DType::Float64);
  for (int i = 0; i < 4000; ++i) x.data<double>()[i] = 1.0 + i % 7;
  Tensor xd = x.to(dt);
  auto [y, mask] = dropout(xd, 0.5, true, &g);
  auto yv = to_vec(y);
  int kept = 0;
  for (int i = 0; i < 4000; ++i) {
    bool k = mask.data<bool>()[i];
    kept += k;
    EXPECT_EQ(yv[i], k ? 2.0 * (1.0 + i % 7) : 0.0);
  }
  EXPECT_NEAR(kept / 4000.0, 0.5, 0.04);
}

TEST(Random, StateAndRandperm) {
  Generator g(1);
  auto st = g.get_state_bytes();
  Tensor a = randint(0, 1000, {64}, DType::Int64, Device(), &g);
  g.set_state_bytes(st);
  Tensor b = randint(0, 1000, {64}, DType::Int64, Device(), &g);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(a.data<int64_t>()[i], b.data<int64_t>()[i]);
  EXPECT_EQ(g.get_state().second, 64u);
  Tensor p = randperm(500, DType::Int64, Device(), &g);
  std::vector<int64_t> seen(500, 0);
  for (int i = 0; i < 500; ++i) ++seen[p.data<int64_t>()[i]];
  for (int64_t c : seen) EXPECT_EQ(c, 1);
  EXPECT_THROW(randint(3, 3, {1}), std::runtime_error);
  EXPECT_THROW(dropout(a.to(DType::Float32), 2.0, true), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RandomTest,
                         ::testing::Values(DType::Float32, DType::Float16, DType::BFloat16, DType::Float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
