#pragma once
// Fused scaled-dot-product attention (FlashAttention-2): the scores are computed one
// (query block, key tile) at a time with an online softmax, so no (Lq, Lk) matrix exists; the
// forward keeps only O and the row logsumexp, the backward recomputes the scores per tile.
// The op layer (cpp/src/ops/attention.cpp) brings every call to the shapes below.
#include <cstdint>
#include "tinytorch/dispatch.h"
#include "tinytorch/kernels/random.h"
#include "tinytorch/tensor.h"

namespace tt {

// Where the rows of a (B, heads, L, D) operand lie: element (b, h, l, d) at offset
// b * b_ + h * h_ + l * l_ + d (unit stride along D, any other strides). q, k, v transposed out
// of a (B, L, H, D) projection are read in place, and outputs are written in their input's layout.
struct HeadStrides {
  int64_t b = 0, h = 0, l = 0;
  HeadStrides() = default;
  explicit HeadStrides(const Tensor& t) : b(t.stride(0)), h(t.stride(1)), l(t.stride(2)) {}
  TT_INLINE int64_t row(int64_t bi, int64_t hi, int64_t li) const { return bi * b + hi * h + li * l; }
};

// The operands' row strides (elements), filled by the op layer; the backward's only in the backward.
struct AttentionLayout {
  HeadStrides q, k, v, out, gout, gq, gk, gv;
};

// What every attention kernel needs besides its tensors.
struct AttentionParams {
  int64_t B = 0, H = 0, Hkv = 0, Lq = 0, Lk = 0, E = 0, Ev = 0;  // query head h reads kv head h / (H / Hkv)
  double scale = 1.0;
  bool causal = false;         // key j takes part in query row i only when j <= i (top-left aligned)
  double dropout_p = 0.0;      // dropout on the softmax probabilities, drawn from `philox`
  PhiloxState philox;
  // mask strides (elements) over (B, H, Lq, Lk); 0 on broadcast dims. Unused without a mask.
  int64_t mask_stride[4] = {0, 0, 0, 0};
  AttentionLayout st;
};

// Dropout keep decision for element (bh, i, j) of the (B*H, Lq, Lk) probabilities: element n of
// that matrix (row-major) uses word n % 4 of the Philox block at counter offset + n / 4, so the
// op reserves ceil(B*H*Lq*Lk / 4) counters and CPU and CUDA draw the same mask.
TT_INLINE bool attention_keep(const AttentionParams& p, int64_t bh, int64_t i, int64_t j) {
  uint64_t n = (uint64_t(bh) * uint64_t(p.Lq) + uint64_t(i)) * uint64_t(p.Lk) + uint64_t(j);
  auto r = philox4x32(p.philox.seed, p.philox.offset + (n >> 2));
  return uniform_float(r[n & 3]) >= float(p.dropout_p);
}

// q: (B, H, Lq, E), k: (B, Hkv, Lk, E), v: (B, Hkv, Lk, Ev), one floating dtype, unit stride along
// the head dim and any other strides (p.st; likewise grad_out, out and the gradients below);
// mask: additive, float32 (float64 for float64 q), strides in params (undefined = none) ->
// out: (B, H, Lq, Ev) in q's dtype, lse: (B, H, Lq) contiguous in the accumulation type (float32;
// float64 for float64 q): the logsumexp of the scaled, masked scores, -inf for a row with no key
// (its output is 0).
TT_DECLARE_KERNEL(attention_forward, const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                  const Tensor& mask, const Tensor& out, const Tensor& lse)
// grad_out, out: (B, H, Lq, Ev) in q's dtype, lse: (B, H, Lq) as the forward's ->
// grad_q: (B, H, Lq, E), grad_k: (B, Hkv, Lk, E), grad_v: (B, Hkv, Lk, Ev) in q's dtype.
TT_DECLARE_KERNEL(attention_backward, const AttentionParams& p, const Tensor& grad_out, const Tensor& q,
                  const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& out, const Tensor& lse,
                  const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v)
// keep: (B, H, Lq, Lk) bool contiguous <- attention_keep for every element (tests and the
// create_graph formula, which need the mask the fused kernels drew).
TT_DECLARE_KERNEL(attention_dropout_mask, const AttentionParams& p, const Tensor& keep)

}  // namespace tt
