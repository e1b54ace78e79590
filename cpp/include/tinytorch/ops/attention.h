#pragma once
// Fused scaled-dot-product attention: argument checks, mask and GQA handling, dropout seeding;
// the kernels (kernels/attention.h) never see a (Lq, Lk) matrix.
#include <optional>
#include <tuple>
#include "tinytorch/kernels/attention.h"
#include "tinytorch/ops/random.h"

namespace tt {

struct AttentionOptions {
  bool is_causal = false;
  std::optional<double> scale;  // default 1 / sqrt(E)
  double dropout_p = 0.0;
};

// q: (B, H, Lq, E), k: (B, Hkv, Lk, E), v: (B, Hkv, Lk, Ev) with H % Hkv == 0; mask: bool
// (true = take part) or additive float, broadcastable to (B, H, Lq, Lk), or undefined.
// Returns (out (B, H, Lq, Ev), lse (B, H, Lq) float32 (float64 for float64 q), dropout seed, dropout offset).
std::tuple<Tensor, Tensor, uint64_t, uint64_t> scaled_dot_product_attention_forward(
    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const AttentionOptions& opt,
    Generator* gen = nullptr);
// Returns (grad_q, grad_k, grad_v); seed/offset are those the forward returned.
std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& out,
    const Tensor& lse, const AttentionOptions& opt, uint64_t seed, uint64_t offset);
// The dropout keep mask (B, H, Lq, Lk) bool that the fused kernels drew with (seed, offset).
Tensor attention_dropout_mask(const Shape& shape, double dropout_p, uint64_t seed, uint64_t offset,
                              Device device = Device());

}  // namespace tt
