// matmul / mm / bmm / linear / addmm against double-precision loops, all float dtypes,
// contiguous, transposed, sliced, expanded and broadcast operands.
#include <functional>
#include "nn_test_util.h"
#include "tinytorch/ops/linalg.h"

using namespace tt;
using namespace tt::testing;

namespace {

// torch.matmul in double: returns the result shape and row-major values.
std::pair<Shape, std::vector<double>> ref_matmul(const Tensor& a, const Tensor& b) {
  Tensor a1 = a.dim() == 1 ? a.unsqueeze(0) : a, b1 = b.dim() == 1 ? b.unsqueeze(1) : b;
  std::vector<double> av = to_vec(a1), bv = to_vec(b1);
  int64_t n = a1.size(a1.dim() - 2), m = a1.size(a1.dim() - 1), p = b1.size(b1.dim() - 1);
  Shape ba(a1.shape().begin(), a1.shape().end() - 2), bb(b1.shape().begin(), b1.shape().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "ref");
  int64_t nb = shape_numel(batch);
  std::vector<double> out(static_cast<size_t>(nb * n * p));
  for (int64_t bi = 0; bi < nb; ++bi) {
    // batch index -> offsets into a and b (right-aligned, size-1 dims broadcast)
    int64_t rem = bi, oa = 0, ob = 0, sa = 1, sb = 1;
    for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      int64_t idx = rem % batch[d];
      rem /= batch[d];
      int64_t da = d - static_cast<int64_t>(batch.size() - ba.size()), db = d - static_cast<int64_t>(batch.size() - bb.size());
      if (da >= 0) { oa += (ba[da] == 1 ? 0 : idx) * sa; sa *= ba[da]; }
      if (db >= 0) { ob += (bb[db] == 1 ? 0 : idx) * sb; sb *= bb[db]; }
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < p; ++j) {
        double s = 0;
        for (int64_t k = 0; k < m; ++k) s += av[(oa * n + i) * m + k] * bv[(ob * m + k) * p + j];
        out[(bi * n + i) * p + j] = s;
      }
  }
  Shape shape = batch;
  if (a.dim() > 1) shape.push_back(n);
  if (b.dim() > 1) shape.push_back(p);
  return {shape, out};
}

using Maker = std::function<Tensor(DType, uint32_t)>;
Maker plain(Shape s) { return [s](DType d, uint32_t seed) { return rand_tensor(s, d, seed); }; }
Maker transposed(Shape s, int64_t d0, int64_t d1) {
  return [=](DType d, uint32_t seed) { return rand_tensor(s, d, seed).transpose(d0, d1); };
}

struct Case { const char* name; Maker a, b; };

}  // namespace

TEST(Linalg, MatmulAllForms) {
  std::vector<Case> cases = {
      {"dot", plain({5}), plain({5})},
      {"mv", plain({3, 5}), plain({5})},
      {"vm", plain({5}), plain({5, 4})},
      {"mm", plain({3, 5}), plain({5, 4})},
      {"bmm", plain({2, 3, 5}), plain({2, 5, 4})},
      {"broadcast (2,1,3,5)@(4,5,6)", plain({2, 1, 3, 5}), plain({4, 5, 6})},
      {"batched @ vector", plain({2, 3, 5}), plain({5})},
      {"vector @ batched", plain({5}), plain({2, 5, 4})},
      {"folded (2,3,5)@(5,4)", plain({2, 3, 5}), plain({5, 4})},
      {"transposed A", transposed({5, 3}, 0, 1), plain({5, 4})},
      {"transposed B", plain({3, 5}), transposed({4, 5}, 0, 1)},
      {"both transposed", transposed({5, 3}, 0, 1), transposed({4, 5}, 0, 1)},
      {"sliced A (stride 2 cols)", [](DType d, uint32_t s) { return rand_tensor({3, 10}, d, s).slice(1, 0, 10, 2); },
       plain({5, 4})},
      {"batched transposed inner", transposed({2, 5, 3}, 1, 2), transposed({2, 4, 5}, 1, 2)},
      {"expanded A", [](DType d, uint32_t s) { return rand_tensor({1, 3, 5}, d, s).expand({4, 3, 5}); },
       plain({4, 5, 2})},
      {"unfoldable batch", transposed({3, 2, 5}, 0, 1), plain({5, 4})},
      {"4-D both broadcast", plain({3, 1, 2, 4}), plain({1, 2, 4, 3})},
      {"empty k", plain({3, 0}), plain({0, 4})},
  };
  for (DType d : kFloatTypes)
    for (auto& c : cases) {
      SCOPED_TRACE(c.name);
      Tensor a = c.a(d, 1), b = c.b(d, 2);
      auto [shape, want] = ref_matmul(a, b);
      Tensor got = matmul(a, b);
      EXPECT_EQ(got.shape(), shape);
      EXPECT_EQ(got.dtype(), d);
      expect_close(got, want, d, 3.0, c.name);
    }
}

TEST(Linalg, MmBmmIntegers) {
  Tensor a = int_tensor({2, 3}, {1, 2, 3, 4, 5, 6}, DType::Int32), b = int_tensor({3, 2}, {7, 8, 9, 10, 11, 12}, DType::Int32);
  Tensor c = mm(a, b);
  EXPECT_EQ(c.dtype(), DType::Int32);
  std::vector<double> want = {58, 64, 139, 154};
  EXPECT_EQ(to_vec(c), want);
  Tensor bb = bmm(a.to(DType::Int64).unsqueeze(0).expand({3, 2, 3}), b.to(DType::Int64).unsqueeze(0).expand({3, 3, 2}));
  EXPECT_EQ(bb.shape(), (Shape{3, 2, 2}));
  std::vector<double> w3;
  for (int i = 0; i < 3; ++i) w3.insert(w3.end(), want.begin(), want.end());
  EXPECT_EQ(to_vec(bb), w3);
}

TEST(Linalg, LinearAndAddmm) {
  for (DType d : kFloatTypes) {
    Tensor x = rand_tensor({4, 2, 5}, d, 3).transpose(0, 1);  // (2, 4, 5), not foldable
    Tensor w = rand_tensor({3, 5}, d, 4), bias = rand_tensor({3}, d, 5);
    auto [shape, want] = ref_matmul(x, w.transpose(0, 1));
    std::vector<double> bv = to_vec(bias);
    std::vector<double> want_b = want;
    for (size_t i = 0; i < want_b.size(); ++i) want_b[i] += bv[i % 3];
    Tensor y = linear(x, w, bias);
    EXPECT_EQ(y.shape(), (Shape{2, 4, 3}));
    expect_close(y, want_b, d, 3.0, "linear+bias");
    expect_close(linear(x, w, Tensor()), want, d, 3.0, "linear");
    Tensor x1 = rand_tensor({5}, d, 6);
    auto [s1, w1] = ref_matmul(x1, w.transpose(0, 1));
    EXPECT_EQ(linear(x1, w, Tensor()).shape(), (Shape{3}));
    expect_close(linear(x1, w, Tensor()), w1, d, 3.0, "linear 1-D");

    Tensor m1 = rand_tensor({4, 5}, d, 7), m2 = rand_tensor({5, 3}, d, 8);
    auto [s2, mm_ref] = ref_matmul(m1, m2);
    for (size_t i = 0; i < mm_ref.size(); ++i) mm_ref[i] = 0.5 * bv[i % 3] + 2.0 * mm_ref[i];
    expect_close(addmm(bias, m1, m2, 0.5, 2.0), mm_ref, d, 3.0, "addmm");
  }
}

TEST(Linalg, Errors) {
  Tensor a = rand_tensor({2, 3}, DType::Float32, 1), b = rand_tensor({4, 5}, DType::Float32, 2);
  try {
    matmul(a, b);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(matmul(rand_tensor({3}, DType::Float32, 1), rand_tensor({4}, DType::Float32, 1)), std::runtime_error);
  EXPECT_THROW(matmul(a, rand_tensor({3, 2}, DType::Float64, 1)), std::runtime_error);
  EXPECT_THROW(matmul(rand_tensor({}, DType::Float32, 1), a), std::runtime_error);
  EXPECT_THROW(matmul(rand_tensor({2, 3, 4}, DType::Float32, 1), rand_tensor({3, 4, 5}, DType::Float32, 1)),
               std::runtime_error);
  EXPECT_THROW(matmul(a.to(DType::Bool), a.transpose(0, 1).to(DType::Bool)), TypeError);
  EXPECT_THROW(linear(rand_tensor({2, 4}, DType::Float32, 1), rand_tensor({3, 5}, DType::Float32, 1), Tensor()),
               std::runtime_error);
  EXPECT_THROW(linear(rand_tensor({2, 5}, DType::Float32, 1), rand_tensor({3, 5}, DType::Float32, 1),
                      rand_tensor({4}, DType::Float32, 1)),
               std::runtime_error);
}
