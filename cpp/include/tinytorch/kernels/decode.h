#pragma once
// Kernels of the fused decode step (ops/decode.h): one new token per sequence against a
// preallocated KV cache. Operands arrive validated and contiguous, float32.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// The attention geometry of a decoder layer: grouped-query heads, rotary convention, score scale.
struct DecodeAttention {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  double scale = 0.0;        // scores are scale * q . k
  bool interleaved = false;  // rotary pairs (2i, 2i + 1) (llama.cpp's), else (i, i + D/2) (Hugging Face's)
};

// qkv: (B, (H + 2 Hkv) D) the new token's un-rotated queries, keys and values; keys/values:
// (B, Hkv, S, D) the layer's cache; cos/sin: (D) the rotary angles at `pos`. Rotates q and k,
// writes k and v at position pos of the cache, and attends each query head to cache positions
// [first, pos] -> out: (B, H D).
TT_DECLARE_KERNEL(decode_attention, const Tensor& qkv, const Tensor& keys, const Tensor& values, const Tensor& cos,
                  const Tensor& sin, const DecodeAttention& attention, int64_t pos, int64_t first,
                  const Tensor& out)

}  // namespace tt
