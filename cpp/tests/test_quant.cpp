// Quantized-weight kernels on hand-built Q4_0 / Q4_1 / Q8_0 rows (codes and scales chosen here,
// values computed by the layouts' definitions) against double-precision loops; the Python tests
// cover every format against gguf's own dequantizer.
#include <random>
#include "nn_test_util.h"
#include "tinytorch/ops/quant.h"

using namespace tt;
using namespace tt::testing;

namespace {

void put_half(uint8_t* p, float v) {
  uint16_t h = Half(v).bits;
  p[0] = static_cast<uint8_t>(h & 0xFF);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// A random (N, K) weight packed in `qtype` with its exact values. Scales are powers of two, so
// every value is exact in float32.
Tensor build(int64_t qtype, int64_t N, int64_t K, std::vector<double>& values, uint32_t seed) {
  std::mt19937 gen(seed);
  int64_t row = quant_row_bytes(qtype, K), nb = K / 32;
  Tensor w = Tensor::empty({N, row}, DType::UInt8);
  uint8_t* p = w.data<uint8_t>();
  values.assign(static_cast<size_t>(N * K), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = p + n * row + b * (row / nb);
      double d = std::ldexp(1.0, static_cast<int>(gen() % 5) - 3), m = -0.25 * static_cast<double>(gen() % 8);
      put_half(blk, static_cast<float>(d));
      double* v = values.data() + n * K + b * 32;
      if (qtype == 8) {
        for (int i = 0; i < 32; ++i) {
          int8_t q = static_cast<int8_t>(gen() % 256 - 128);
          blk[2 + i] = static_cast<uint8_t>(q);
          v[i] = q * d;
        }
        continue;
      }
      uint8_t* qs = blk + (qtype == 3 ? 4 : 2);
      if (qtype == 3) put_half(blk + 2, static_cast<float>(m));
      for (int i = 0; i < 16; ++i) {
        int lo = static_cast<int>(gen() % 16), hi = static_cast<int>(gen() % 16);
        qs[i] = static_cast<uint8_t>(lo | (hi << 4));  // low nibble: value i, high: value i + 16
        v[i] = qtype == 3 ? lo * d + m : (lo - 8) * d;
        v[i + 16] = qtype == 3 ? hi * d + m : (hi - 8) * d;
      }
    }
  return w;
}

}  // namespace

TEST(Quant, DequantizeAndLinear) {
  const int64_t N = 13, K = 96;
  for (int64_t qtype : {2, 3, 8}) {
    std::vector<double> wv;
    Tensor w = build(qtype, N, K, wv, static_cast<uint32_t>(qtype));
    expect_close(quant_dequantize(w, qtype, N, K, DType::Float32), wv, DType::Float64, 0.0, "dequantize");
    for (DType d : {DType::Float32, DType::Float16, DType::BFloat16})
      for (int64_t M : {1, 3, 9, 50}) {  // matvec and the dequantize + GEMM path
        Tensor x = rand_tensor({M, K}, d, 7), bias = rand_tensor({N}, d, 8);
        std::vector<double> xv = to_vec(x), bv = to_vec(bias), want(static_cast<size_t>(M * N));
        for (int64_t i = 0; i < M; ++i)
          for (int64_t n = 0; n < N; ++n) {
            double s = bv[n];
            for (int64_t k = 0; k < K; ++k) s += xv[i * K + k] * wv[n * K + k];
            want[i * N + n] = s;
          }
        Tensor y = quant_linear(x, w, qtype, N, K, bias);
        ASSERT_EQ(y.dtype(), d);
        expect_close(y, want, d, 4.0, "quant_linear");
      }
  }
}

TEST(Quant, BadInput) {
  std::vector<double> wv;
  Tensor w = build(2, 4, 64, wv, 1);
  Tensor x = rand_tensor({2, 64}, DType::Float32, 2);
  EXPECT_THROW(quant_linear(x, w, 6, 4, 64, Tensor()), std::invalid_argument);      // unsupported qtype
  EXPECT_THROW(quant_linear(x, w, 2, 5, 64, Tensor()), std::invalid_argument);      // byte count
  EXPECT_THROW(quant_row_bytes(2, 48), std::invalid_argument);                      // K % 32
  EXPECT_THROW(quant_linear(x.to(DType::Float64), w, 2, 4, 64, Tensor()), TypeError);
  EXPECT_THROW(quant_linear(x, w.to(DType::Int32), 2, 4, 64, Tensor()), TypeError);
  EXPECT_THROW(quant_linear(x, w, 2, 4, 64, rand_tensor({3}, DType::Float32, 3)), std::invalid_argument);
}
