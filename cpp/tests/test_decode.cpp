// The fused decode step on one layer whose MLP is zero and o_proj the identity, so its output is
// x + attention: two steps (positions 0 and 1, both rotary conventions) against a double-precision
// loop over the layer's definition (RMSNorm, q/k/v, rotary, cache, softmax over the cache).
#include <cmath>
#include "nn_test_util.h"
#include "tinytorch/ops/decode.h"
#include "tinytorch/ops/elementwise.h"

using namespace tt;
using namespace tt::testing;

namespace {

constexpr int64_t kHidden = 8, kHeads = 2, kKv = 1, kD = 4, kWidth = (kHeads + 2 * kKv) * kD;

Tensor zeros(const Shape& shape) { return full(shape, 0.0, DType::Float32); }

DecodeLinear dense(const Tensor& w) { return DecodeLinear{w, Tensor(), -1, w.size(0), w.size(1)}; }

std::vector<double> rotate(const std::vector<double>& x, const std::vector<double>& c, const std::vector<double>& s,
                           bool interleaved) {
  std::vector<double> y(kD);
  for (int64_t i = 0; i < kD; ++i) {
    double partner = interleaved ? (i % 2 ? x[i - 1] : -x[i + 1]) : (i < kD / 2 ? -x[i + kD / 2] : x[i - kD / 2]);
    y[i] = x[i] * c[i] + partner * s[i];
  }
  return y;
}

}  // namespace

TEST(Decode, AttentionOverTheCacheMatchesDefinition) {
  for (bool interleaved : {false, true}) {
    Tensor wqkv = rand_tensor({kWidth, kHidden}, DType::Float32, 1);
    std::vector<double> eye(kHidden * kHidden, 0.0);
    for (int64_t i = 0; i < kHidden; ++i) eye[i * kHidden + i] = 1.0;
    Tensor keys = zeros({1, kKv, 3, kD}), values = zeros({1, kKv, 3, kD});
    DecodeLayer layer{from_vec(std::vector<double>(kHidden, 1.0), {kHidden}, DType::Float32),
                      from_vec(std::vector<double>(kHidden, 1.0), {kHidden}, DType::Float32),
                      {dense(wqkv)}, {dense(from_vec(eye, {kHidden, kHidden}, DType::Float32))},
                      {dense(zeros({4, kHidden}))},
                      {dense(zeros({kHidden, 2}))}, keys, values, 0};
    DecodeStack stack({layer}, DecodeAttention{kHeads, kKv, kD, 0.5, interleaved}, 1e-6);
    const std::vector<double> w = to_vec(wqkv);
    std::vector<std::vector<double>> ks, vs;  // the reference cache
    for (int64_t pos = 0; pos < 2; ++pos) {
      Tensor x = rand_tensor({1, kHidden}, DType::Float32, 10 + pos), c = rand_tensor({kD}, DType::Float32, 20 + pos),
             s = rand_tensor({kD}, DType::Float32, 30 + pos);
      std::vector<double> xv = to_vec(x), cv = to_vec(c), sv = to_vec(s), qkv(kWidth, 0.0);
      double ms = 0;
      for (double v : xv) ms += v * v / kHidden;
      for (int64_t r = 0; r < kWidth; ++r)
        for (int64_t k = 0; k < kHidden; ++k) qkv[r] += w[r * kHidden + k] * xv[k] / std::sqrt(ms + 1e-6);
      auto slice = [&](int64_t at) { return std::vector<double>(qkv.begin() + at, qkv.begin() + at + kD); };
      ks.push_back(rotate(slice(kHeads * kD), cv, sv, interleaved));
      vs.push_back(slice((kHeads + 1) * kD));
      std::vector<double> want = xv;
      for (int64_t h = 0; h < kHeads; ++h) {
        std::vector<double> q = rotate(slice(h * kD), cv, sv, interleaved), p;
        double total = 0;
        for (const auto& k : ks) {
          double dot = 0;
          for (int64_t d = 0; d < kD; ++d) dot += q[d] * k[d];
          p.push_back(std::exp(0.5 * dot));
          total += p.back();
        }
        for (size_t j = 0; j < ks.size(); ++j)
          for (int64_t d = 0; d < kD; ++d) want[h * kD + d] += p[j] / total * vs[j][d];
      }
      expect_close(stack.step(x, pos, c, s), want, DType::Float32, 4.0, interleaved ? "interleaved" : "half");
      expect_close(keys.narrow(2, pos, 1), ks.back(), DType::Float32, 4.0, "cached key");
    }
  }
}

TEST(Decode, ChecksShapesAndPositions) {
  Tensor cache = zeros({1, kKv, 3, kD}), norm = zeros({kHidden});
  DecodeLayer layer{norm, norm, {dense(zeros({kWidth, kHidden}))},
                    {dense(zeros({kHidden, kHeads * kD}))},
                    {dense(zeros({4, kHidden}))},
                    {dense(zeros({kHidden, 2}))}, cache, cache, 0};
  DecodeStack stack({layer}, DecodeAttention{kHeads, kKv, kD, 0.5, false}, 1e-6);
  Tensor angle = zeros({kD});
  EXPECT_THROW(stack.step(zeros({1, kHidden}), 3, angle, angle), std::invalid_argument);
  EXPECT_THROW(stack.step(zeros({2, kHidden}), 0, angle, angle), std::invalid_argument);
  layer.o = {dense(zeros({kHidden, 7}))};
  EXPECT_THROW(DecodeStack({layer}, DecodeAttention{kHeads, kKv, kD, 0.5, false}, 1e-6), std::invalid_argument);
}
