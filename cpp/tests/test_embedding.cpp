// Embedding kernels against double-precision loops, all float dtypes.
#include "nn_test_util.h"
#include "tinytorch/ops/embedding.h"

using namespace tt;
using namespace tt::testing;

TEST(Embedding, Embedding) {
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
