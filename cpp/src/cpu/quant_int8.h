#pragma once
// The matvec on packed Q4_0 / Q4_1 / Q8_0 weights with int8 activations, as llama.cpp computes
// it: x is quantized per 32-value block (d = max|x| / 127, codes round(x / d)) and each block's
// dot is integer arithmetic (quant_int8.cpp). Opt-in (tt::set_quant_int8_activations): its
// results differ from the float32 matmul on the dequantized weight by x's rounding, at most
// sum_i |w_i| d_block / 2 per output.
#include <cstdint>
#include <vector>

namespace tt::cpu {

// The formats it has a kernel for (on an AVX2 CPU: quant.cpp's ISA choice decides).
bool quant_matvec_int8_formats(int64_t qtype);

// x: (M, K) float32 quantized once per matvec; rows() is then called by each row task.
class QuantizedX {
 public:
  QuantizedX(const float* x, int64_t M, int64_t K);
  // w: (N, row) packed rows -> out[m * ldo + n] for n in [n0, n1)
  void rows(int64_t qtype, const uint8_t* w, int64_t row, float* out, int64_t ldo, int64_t n0, int64_t n1) const;

 private:
  int64_t M_, K_;
  std::vector<int8_t> q_;   // (M, K) codes
  std::vector<float> d_;    // (M, K/32) scales
  std::vector<float> sum_;  // (M, K/32) sums of the float x of each block (Q4_1's offset term)
  std::vector<int32_t> qsum_;  // (M, K/32) sums of the codes (Q4_0's -8 offset)
};

}  // namespace tt::cpu
