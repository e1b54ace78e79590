#pragma once
// Kernels of the fused decode step (ops/decode.h): one new token per sequence against a
// preallocated KV cache. Operands arrive validated and contiguous, float32.
#include <vector>
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// The attention geometry of a decoder layer: grouped-query heads, rotary convention, score scale.
struct DecodeAttention {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  double scale = 0.0;        // scores are scale * q . k
  bool interleaved = false;  // rotary pairs (2i, 2i + 1) (llama.cpp's), else (i, i + D/2) (Hugging Face's)
};

// A projection: packed llama.cpp rows (qtype >= 0; weight (N, row bytes) uint8, as quant_linear)
// or a dense weight (qtype < 0; weight (N, K) float32); bias (N) float32 or undefined.
struct DecodeLinear {
  Tensor weight, bias;
  int64_t qtype = -1, out_features = 0, in_features = 0;
};

// qkv: (B, (H + 2 Hkv) D) the new token's un-rotated queries, keys and values; keys/values:
// (B, Hkv, S, D) the layer's cache; cos/sin: (D) the rotary angles at the token's position: `pos`,
// or where `position` is defined the (1,) int64 it holds on the device (read there, so a captured
// CUDA graph replays at the position of the moment). Rotates q and k, writes k and v at that
// position of the cache, and attends each query head to the positions [first, pos], first =
// pos - window + 1 for window > 0 (else 0) -> out: (B, H D).
TT_DECLARE_KERNEL(decode_attention, const Tensor& qkv, const Tensor& keys, const Tensor& values, const Tensor& cos,
                  const Tensor& sin, const DecodeAttention& attention, int64_t pos, const Tensor& position,
                  int64_t window, const Tensor& out)

// What a fused projection does with its rows' results y (B, N):
//   Store   out (B, N) = y
//   Add     out (B, N) = residual + y (out may be residual: the residual stream updated in place)
//   SwiGLU  out (B, N / 2) = silu(gate) * up, gate and up y's halves (the rows of gate_up)
enum class DecodeEpilogue { Store, Add, SwiGLU };

constexpr int kDecodeMaxParts = 3;   // parts of one fused projection (q, k, v)
constexpr int kDecodeFusedRows = 8;  // sequences a fused projection takes at once (staged in shared memory)

// y = parts(x') (the parts' rows stacked, + bias), x' = rms_norm(x) * norm (eps) where norm (K)
// is defined, else x; x: (B, K). The devices with these kernels run a layer as four of them and
// the attention; the others compose the eager ops (ops/decode.cpp).
TT_DECLARE_KERNEL(decode_project, const Tensor& x, const Tensor& norm, double eps,
                  const std::vector<DecodeLinear>& parts, DecodeEpilogue epilogue, const Tensor& residual,
                  const Tensor& out)

}  // namespace tt
