#pragma once
// The fused decode step of a Llama-family decoder: every layer of one new token per sequence in
// one call (RMSNorm, projections, rotary + cache write + attention, SwiGLU), so a decode step
// makes one call from Python instead of ~25 per layer. Composed of the ops the eager layers run
// (rms_norm, quant_linear / linear, silu, mul, add), so it computes what they compute; only the
// attention is its own kernel (kernels/decode.h). Inference only: nothing is recorded for autograd.
#include <vector>
#include "tinytorch/kernels/decode.h"

namespace tt {

// A projection: packed llama.cpp rows (qtype >= 0; weight (N, row bytes) uint8, as quant_linear)
// or a dense weight (qtype < 0; weight (N, K) float32); bias (N) float32 or undefined.
struct DecodeLinear {
  Tensor weight, bias;
  int64_t qtype = -1, out_features = 0, in_features = 0;
};

// One pre-norm decoder layer and its KV cache. A projection may come in parts whose outputs are
// concatenated: qkv gives q (H D), k (Hkv D), v (Hkv D) in order, gate_up the gate (I) then up (I).
struct DecodeLayer {
  Tensor input_norm, post_attention_norm;  // (hidden) RMSNorm weights
  std::vector<DecodeLinear> qkv, o, gate_up, down;
  Tensor keys, values;  // (B, Hkv, S, D) float32 cache
  int64_t window = 0;   // attends to the last `window` positions only; 0: to all
};

// A model's decoder layers bound to one KV cache. The constructor checks every shape, dtype and
// device (ValueError / TypeError naming the part).
class DecodeStack {
 public:
  DecodeStack(std::vector<DecodeLayer> layers, DecodeAttention attention, double eps);
  // x: (B, hidden) float32, the tokens at position pos; cos/sin: (D) float32, their rotary
  // angles -> (B, hidden), the last layer's output. Each layer writes its keys/values at pos.
  Tensor step(const Tensor& x, int64_t pos, const Tensor& cos, const Tensor& sin) const;

 private:
  std::vector<DecodeLayer> layers_;
  DecodeAttention attention_;
  double eps_;
  int64_t hidden_ = 0, batch_ = 0, max_length_ = 0;
};

}  // namespace tt
