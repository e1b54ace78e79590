// Indexing and sorting kernels vs double-precision references, in every float dtype and on
// non-contiguous (transposed) inputs.
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <numeric>
#include "nn_test_util.h"
#include "tinytorch/ops/index.h"

namespace {
using namespace tt;
using tt::testing::from_vec;
using tt::testing::rounded;
using tt::testing::to_vec;

Tensor ids(const std::vector<int64_t>& v, const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

class IndexTest : public ::testing::TestWithParam<DType> {};

TEST_P(IndexTest, IndexSelectTransposed) {
  DType dt = GetParam();
  auto v = rounded(12, dt);
  Tensor x = from_vec(v, {3, 4}, dt).transpose(0, 1);  // (4, 3), x[i][j] = v[j*4+i]
  Tensor out = index_select(x, 1, ids({2, 0, 2}, {3}));
  // negative indices are rejected (PyTorch: IndexError "index out of range in self")
  EXPECT_THROW(index_select(x, 1, ids({-3}, {1})), std::out_of_range);
  auto got = to_vec(out);
  ASSERT_EQ(out.shape(), (Shape{4, 3}));
  int64_t cols[] = {2, 0, 2};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[i * 3 + j], v[cols[j] * 4 + i]);
}

TEST_P(IndexTest, GatherAndScatterAdd) {
  DType dt = GetParam();
  auto v = rounded(20, dt);
  Tensor x = from_vec(v, {4, 5}, dt);
  std::vector<int64_t> ind = {0, 4, 4, 3, 2, 1};
  Tensor g = gather(x, 1, ids(ind, {2, 3}));
  // no wrapping of negative indices (PyTorch: RuntimeError "index -1 is out of bounds ...")
  EXPECT_THROW(gather(x, 1, ids({0, -1}, {1, 2})), std::runtime_error);
  Tensor z = from_vec(std::vector<double>(20, 0.0), {4, 5}, dt);
  EXPECT_THROW(scatter_add_(z, 1, ids({-1}, {1, 1}), from_vec({1.0}, {1, 1}, dt)), std::runtime_error);
  auto got = to_vec(g);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[i * 3 + j], v[i * 5 + (ind[i * 3 + j] + 5) % 5]);
  // scatter_add into zeros, duplicate targets: sums in double reference
  auto sv = rounded(6, dt, 1);
  Tensor base = from_vec(std::vector<double>(20, 0.0), {4, 5}, dt);
  scatter_add_(base, 1, ids(ind, {2, 3}), from_vec(sv, {2, 3}, dt));
  std::vector<double> ref(20, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) ref[i * 5 + (ind[i * 3 + j] + 5) % 5] += sv[i * 3 + j];
  auto r = to_vec(base);
  double tol = dt == DType::BFloat16 ? 2e-2 : dt == DType::Float16 ? 2e-3 : 1e-6;
  for (int k = 0; k < 20; ++k) EXPECT_NEAR(r[k], ref[k], tol * (1 + std::abs(ref[k])));
}

TEST_P(IndexTest, AdvancedIndexSeparatedGoesFirst) {
  DType dt = GetParam();
  auto v = rounded(2 * 3 * 4, dt);
  Tensor x = from_vec(v, {2, 3, 4}, dt);
  // x[[1, 0], :, [3, 1]] -> (2, 3): broadcast dims first because the indices are separated
  Tensor out = index(x, {ids({1, 0}, {2}), std::nullopt, ids({3, 1}, {2})});
  ASSERT_EQ(out.shape(), (Shape{2, 3}));
  auto got = to_vec(out);
  int64_t a[] = {1, 0}, c[] = {3, 1};
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[k * 3 + j], v[a[k] * 12 + j * 4 + c[k]]);
  // x[:, [[0], [2]], [1, 3]] on a permuted view -> adjacent, stays in place: (2, 2, 2)
  Tensor xp = x.permute({0, 2, 1});  // (2, 4, 3), xp[i][j][k] = x[i][k][j]
  Tensor o2 = index(xp, {std::nullopt, ids({0, 2}, {2, 1}), ids({1, 2}, {2})});
  ASSERT_EQ(o2.shape(), (Shape{2, 2, 2}));
  auto g2 = to_vec(o2);
  int64_t jj[] = {0, 2}, kk[] = {1, 2};
  for (int i = 0; i < 2; ++i)
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 2; ++q) EXPECT_EQ(g2[i * 4 + p * 2 + q], v[i * 12 + kk[q] * 4 + jj[p]]);
}

TEST_P(IndexTest, IndexPutAccumulateAndMasks) {
  DType dt = GetParam();
  Tensor x = from_vec(std::vector<double>(6, 1.0), {2, 3}, dt);
  Tensor vals = from_vec({0.5, 0.25, 2.0, 4.0}, {4}, dt);
  index_put_(x, {ids({0, 0, 1, 0}, {4}), ids({2, 2, 0, -1}, {4})}, vals, true);
  auto got = to_vec(x);
  std::vector<double> ref = {1, 1, 1 + 0.5 + 0.25 + 4.0, 3.0, 1, 1};
  for (int k = 0; k < 6; ++k) EXPECT_DOUBLE_EQ(got[k], ref[k]);
  Tensor mask = Tensor::empty({3}, DType::Bool);
  mask.data<bool>()[0] = true; mask.data<bool>()[1] = false; mask.data<bool>()[2] = true;
  Tensor xt = x.transpose(0, 1);  // (3, 2); mask over rows of xt = columns of x
  masked_fill_(xt, mask.unsqueeze(1), -7.0);
  got = to_vec(x);
  ref = {-7, 1, -7, -7, 1, -7};
  for (int k = 0; k < 6; ++k) EXPECT_DOUBLE_EQ(got[k], ref[k]);
  Tensor nz = nonzero(from_vec({0, 1, 0, 2, 0, 3}, {3, 2}, dt).transpose(0, 1));  // (2,3): [[0,0,0],[1,2,3]]
  ASSERT_EQ(nz.shape(), (Shape{3, 2}));
  std::vector<int64_t> nzref = {1, 0, 1, 1, 1, 2};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(nz.data<int64_t>()[k], nzref[k]);
}

TEST_P(IndexTest, SortNaNLargestStable) {
  DType dt = GetParam();
  double nan = std::nan("");
  std::vector<double> v = {3, nan, 1, 3, -2, 1, 0, 5};
  Tensor x = from_vec(v, {2, 4}, dt).transpose(0, 1);  // (4, 2) view, columns are the rows of v
  auto [vals, inds] = sort(x, 0, false);
  auto gv = to_vec(vals);
  std::vector<int64_t> gi(inds.data<int64_t>(), inds.data<int64_t>() + 8);
  // column 0: [3, nan, 1, 3] -> [1, 3, 3, nan] idx [2, 0, 3, 1]; column 1: [-2, 1, 0, 5]
  std::vector<double> ev = {1, -2, 3, 0, 3, 1, nan, 5};
  std::vector<int64_t> ei = {2, 0, 0, 2, 3, 1, 1, 3};
  for (int k = 0; k < 8; ++k) {
    if (std::isnan(ev[k])) EXPECT_TRUE(std::isnan(gv[k]));
    else EXPECT_EQ(gv[k], ev[k]);
    EXPECT_EQ(gi[k], ei[k]);
  }
  auto [dv, di] = sort(from_vec({3, nan, 1, 3}, {4}, dt), 0, true);
  std::vector<int64_t> edi = {1, 0, 3, 2};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(di.data<int64_t>()[k], edi[k]);
  EXPECT_TRUE(std::isnan(to_vec(dv)[0]));
}

TEST_P(IndexTest, TopkMatchesFullSort) {
  DType dt = GetParam();
  auto v = rounded(5 * 37, dt, 3);
  Tensor x = from_vec(v, {5, 37}, dt);
  for (bool largest : {true, false}) {
    auto [vals, inds] = topk(x.transpose(0, 1), 6, 0, largest, true);  // (6, 5)
    auto gv = to_vec(vals);
    for (int r = 0; r < 5; ++r) {
      std::vector<double> row(v.begin() + r * 37, v.begin() + (r + 1) * 37);
      std::sort(row.begin(), row.end());
      if (largest) std::reverse(row.begin(), row.end());
      for (int k = 0; k < 6; ++k) {
        EXPECT_EQ(gv[k * 5 + r], row[k]);
        EXPECT_EQ(v[r * 37 + inds.data<int64_t>()[k * 5 + r]], row[k]);
      }
    }
  }
}

TEST(IndexErrors, OutOfRangeAndBadIndexTypes) {
  Tensor x = Tensor::empty({3, 4}, DType::Float32);
  EXPECT_THROW(index(x, {ids({3}, {1})}), std::out_of_range);
  EXPECT_THROW(index_select(x, 1, ids({-5}, {1})), std::out_of_range);
  EXPECT_THROW(index(x, {Tensor::empty({2}, DType::Float32)}), TypeError);
  EXPECT_THROW(gather(x, 0, ids({0}, {1})), std::runtime_error);
  try {
    index_select(x, 0, ids({7}, {1}));
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("index 7 is out of bounds for dimension 0 with size 3"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, IndexTest,
                         ::testing::Values(DType::Float32, DType::Float16, DType::BFloat16, DType::Float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
