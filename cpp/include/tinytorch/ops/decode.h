#pragma once
// The fused decode step of a Llama-family decoder: every layer of one new token per sequence in
// one call (RMSNorm, projections, rotary + cache write + attention, SwiGLU), so a decode step
// makes one call from Python instead of ~25 per layer. On the CPU it is composed of the ops the
// eager layers run (rms_norm, quant_linear / linear, silu, mul, add), so it computes what they
// compute, and only the attention is its own kernel (kernels/decode.h); on CUDA, for up to
// kDecodeFusedRows sequences, each layer is five kernels (norm + qkv, attention, o_proj + residual,
// norm + gate/up + SwiGLU, down_proj + residual). Inference only: nothing is recorded for autograd.
#include <vector>
#include "tinytorch/kernels/decode.h"

namespace tt {

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
  // step at the position `position` (1,) int64 holds on x's device, read there by the kernels:
  // what a captured CUDA graph replays (the caller keeps position inside the cache).
  Tensor step_at(const Tensor& x, const Tensor& position, const Tensor& cos, const Tensor& sin) const;
  // Whether step runs the device's fused projection kernels (else the composed ops).
  bool fused() const { return fused_; }

 private:
  Tensor run(const Tensor& x, int64_t pos, const Tensor& position, const Tensor& cos, const Tensor& sin) const;

  std::vector<DecodeLayer> layers_;
  DecodeAttention attention_;
  double eps_;
  int64_t hidden_ = 0, batch_ = 0, max_length_ = 0;
  bool fused_ = false;
};

}  // namespace tt
