// CPU kernel of BitNet b1.58 inference: int8 activations times ternary weights packed 2 bits per
// value, summed exactly in int32.
//
// Each weight row is streamed once (K/4 bytes instead of 4K for float32: the matvec of decoding
// is memory bound, so this is where the 16x smaller weight pays). The plane layout makes the four
// 2-bit fields of byte j multiply four contiguous activation streams (columns j, j + K4, ...), a
// flat loop the compiler vectorizes (AVX-512 / AVX2 clones): decode (b >> 2k & 3) - 1, widen,
// multiply-add into int32 lanes.
#include <algorithm>
#include <cmath>
#include <vector>
#include "reduce_simd.h"  // TT_SIMD_CLONES
#include "tinytorch/kernels/bitnet.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// sum_j x0[j]*t0(w[j]) + x1[j]*t1(w[j]) + x2[j]*t2(w[j]) + x3[j]*t3(w[j]); x: 4 planes of k4 int16
TT_SIMD_CLONES int32_t ternary_dot(const int16_t* x, const uint8_t* w, int64_t k4) {
  const int16_t* x0 = x;
  const int16_t* x1 = x + k4;
  const int16_t* x2 = x + 2 * k4;
  const int16_t* x3 = x + 3 * k4;
  int32_t acc = 0;
  for (int64_t j = 0; j < k4; ++j) {
    const int32_t b = w[j];
    acc += int32_t(x0[j]) * ((b & 3) - 1) + int32_t(x1[j]) * (((b >> 2) & 3) - 1) +
           int32_t(x2[j]) * (((b >> 4) & 3) - 1) + int32_t(x3[j]) * ((b >> 6) - 1);
  }
  return acc;
}

// q: (M, K) float32 int8 values, w: (N, K4) uint8, mult: (M) -> out: (M, N)
void cpu_bitnet_matmul(const Tensor& q, const Tensor& w, const Tensor& mult, const Tensor& out) {
  const int64_t M = q.size(0), K = q.size(1), N = w.size(0), K4 = w.size(1);
  // activations as int16 planes (zero-padded to 4*K4): xs[m] = columns [0, 4*K4) of row m
  std::vector<int16_t> xs(size_t(M * 4 * K4), 0);
  const float* qp = q.data<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) xs[size_t(m * 4 * K4 + k)] = int16_t(std::lrint(qp[m * K + k]));
  const uint8_t* wp = w.data<uint8_t>();
  const float* mp = mult.data<float>();
  float* op = out.data<float>();
  // rows of w in parallel: each thread streams its rows once for all M tokens
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(K4, 1));
  parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      const uint8_t* row = wp + n * K4;
      for (int64_t m = 0; m < M; ++m)
        op[m * N + n] = float(ternary_dot(xs.data() + m * 4 * K4, row, K4)) * mp[m];
    }
  });
}

}  // namespace

TT_REGISTER_KERNEL(bitnet_matmul, CPU, cpu_bitnet_matmul)

}  // namespace tt::cpu
