// conv2d forward/backward against direct double-precision loops. Every output channel is
// checked (keith2018/TinyTorch's layout bug hid behind tests that looked at one channel),
// with groups > 1, non-square kernels/strides/padding/dilation, and non-contiguous inputs.
#include "nn_test_util.h"
#include "tinytorch/ops/conv.h"

using namespace tt;
using namespace tt::testing;

namespace {

struct Spec {
  const char* name;
  int64_t B, C, H, W, O, kh, kw, groups;
  Pair stride, padding, dilation;
  bool bias;
};

struct Ref { std::vector<double> y, gx, gw, gb; int64_t Ho, Wo; };

// y[b,o,oh,ow] = bias[o] + sum_{c in group(o), i, j} x[b,c,ih,iw] * w[o,c-g0,i,j]; and the
// gradients for upstream gradient g, by the same loop.
Ref reference(const Spec& s, const std::vector<double>& x, const std::vector<double>& w,
              const std::vector<double>& bias, const std::vector<double>& g_or_empty) {
  Ref r;
  r.Ho = (s.H + 2 * s.padding[0] - s.dilation[0] * (s.kh - 1) - 1) / s.stride[0] + 1;
  r.Wo = (s.W + 2 * s.padding[1] - s.dilation[1] * (s.kw - 1) - 1) / s.stride[1] + 1;
  int64_t Cg = s.C / s.groups, Og = s.O / s.groups;
  r.y.assign(static_cast<size_t>(s.B * s.O * r.Ho * r.Wo), 0.0);
  r.gx.assign(x.size(), 0.0), r.gw.assign(w.size(), 0.0), r.gb.assign(static_cast<size_t>(s.O), 0.0);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t o = 0; o < s.O; ++o)
      for (int64_t oh = 0; oh < r.Ho; ++oh)
        for (int64_t ow = 0; ow < r.Wo; ++ow) {
          int64_t yi = ((b * s.O + o) * r.Ho + oh) * r.Wo + ow;
          double acc = s.bias ? bias[o] : 0.0;
          double g = g_or_empty.empty() ? 0.0 : g_or_empty[yi];
          r.gb[o] += g;
          int64_t g0 = (o / Og) * Cg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                int64_t ih = oh * s.stride[0] - s.padding[0] + i * s.dilation[0];
                int64_t iw = ow * s.stride[1] - s.padding[1] + j * s.dilation[1];
                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
                int64_t xi = ((b * s.C + g0 + c) * s.H + ih) * s.W + iw, wi = ((o * Cg + c) * s.kh + i) * s.kw + j;
                acc += x[xi] * w[wi];
                r.gx[xi] += g * w[wi];
                r.gw[wi] += g * x[xi];
              }
          r.y[yi] = acc;
        }
  return r;
}

const std::vector<Spec> kSpecs = {
    {"plain 3x3", 2, 3, 6, 5, 4, 3, 3, 1, {1, 1}, {0, 0}, {1, 1}, true},
    {"non-square all", 2, 4, 7, 6, 6, 3, 2, 2, {2, 1}, {1, 2}, {1, 2}, true},
    {"depthwise", 2, 4, 5, 5, 8, 3, 3, 4, {1, 2}, {1, 1}, {1, 1}, false},
    {"pointwise 1x1", 3, 5, 4, 3, 7, 1, 1, 1, {1, 1}, {0, 0}, {1, 1}, true},
    {"strided 1x1 + groups", 2, 6, 5, 4, 3, 1, 1, 3, {2, 2}, {0, 0}, {1, 1}, true},
    {"big dilation", 1, 2, 9, 8, 3, 2, 3, 1, {3, 2}, {2, 0}, {3, 2}, false},
};

}  // namespace

TEST(Conv, ForwardBackwardAllChannels) {
  for (DType d : kFloatTypes)
    for (const Spec& s : kSpecs) {
      SCOPED_TRACE(s.name);
      // x made non-contiguous: allocate (B, C, W, H) and transpose the last two dims.
      Tensor x = rand_tensor({s.B, s.C, s.W, s.H}, d, 11).transpose(2, 3);
      Tensor w = rand_tensor({s.O, s.C / s.groups, s.kh, s.kw}, d, 12);
      Tensor bias = s.bias ? rand_tensor({s.O}, d, 13) : Tensor();
      Tensor y = conv2d(x, w, bias, s.stride, s.padding, s.dilation, s.groups);
      Tensor g = rand_tensor(y.shape(), d, 14);
      Ref r = reference(s, to_vec(x), to_vec(w), s.bias ? to_vec(bias) : std::vector<double>{}, to_vec(g));
      EXPECT_EQ(y.shape(), (Shape{s.B, s.O, r.Ho, r.Wo}));
      EXPECT_EQ(y.dtype(), d);
      expect_close(y, r.y, d, 4.0, "y");
      auto [gx, gw, gb] = conv2d_backward(g, x, w, s.stride, s.padding, s.dilation, s.groups, {true, true, true});
      EXPECT_EQ(gx.shape(), x.shape());
      EXPECT_EQ(gw.shape(), w.shape());
      expect_close(gx, r.gx, d, 4.0, "grad_input");
      expect_close(gw, r.gw, d, 8.0, "grad_weight");
      expect_close(gb, r.gb, d, 8.0, "grad_bias");
      auto [gx2, gw2, gb2] = conv2d_backward(g, x, w, s.stride, s.padding, s.dilation, s.groups, {false, true, false});
      EXPECT_FALSE(gx2.defined());
      EXPECT_FALSE(gb2.defined());
      expect_close(gw2, r.gw, d, 8.0, "grad_weight alone");
    }
}

TEST(Conv, Unbatched) {
  Spec s{"unbatched", 1, 2, 5, 5, 3, 3, 3, 1, {1, 1}, {1, 1}, {1, 1}, true};
  Tensor x = rand_tensor({2, 5, 5}, DType::Float64, 1), w = rand_tensor({3, 2, 3, 3}, DType::Float64, 2);
  Tensor b = rand_tensor({3}, DType::Float64, 3);
  Tensor y = conv2d(x, w, b, s.stride, s.padding, s.dilation, 1);
  EXPECT_EQ(y.shape(), (Shape{3, 5, 5}));
  Ref r = reference(s, to_vec(x), to_vec(w), to_vec(b), {});
  expect_close(y, r.y, DType::Float64, 1.0, "unbatched");
}

TEST(Conv, Errors) {
  Tensor x = rand_tensor({1, 4, 5, 5}, DType::Float32, 1);
  EXPECT_THROW(conv2d(x, rand_tensor({2, 3, 3, 3}, DType::Float32, 1), Tensor(), {1, 1}, {0, 0}, {1, 1}, 1),
               std::runtime_error);  // channel mismatch
  EXPECT_THROW(conv2d(x, rand_tensor({3, 2, 3, 3}, DType::Float32, 1), Tensor(), {1, 1}, {0, 0}, {1, 1}, 2),
               std::runtime_error);  // out channels not divisible by groups
  EXPECT_THROW(conv2d(x, rand_tensor({2, 4, 7, 7}, DType::Float32, 1), Tensor(), {1, 1}, {0, 0}, {1, 1}, 1),
               std::runtime_error);  // kernel larger than input
  EXPECT_THROW(conv2d(x, rand_tensor({2, 4, 3, 3}, DType::Float32, 1), Tensor(), {0, 1}, {0, 0}, {1, 1}, 1),
               std::runtime_error);  // zero stride
  EXPECT_THROW(conv2d(x, rand_tensor({2, 4, 3, 3}, DType::Float64, 1), Tensor(), {1, 1}, {0, 0}, {1, 1}, 1),
               std::runtime_error);  // dtype mismatch
  EXPECT_THROW(conv2d(x, rand_tensor({2, 4, 3, 3}, DType::Float32, 1), rand_tensor({3}, DType::Float32, 1), {1, 1},
                      {0, 0}, {1, 1}, 1),
               std::runtime_error);  // bias size
}
