// CPU attention of the fused decode step: one query per head against the KV cache. Each
// (sequence, query head) is one task: its scores over the cached keys, a softmax, the weighted
// sum of the values; the G query heads of a group read their key/value head in place.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")  // lets GCC if-convert fast_exp's compares (as attention.cpp)
#endif
#include <algorithm>
#include <vector>
#include "fast_exp.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES
#include "tinytorch/kernels/decode.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// dst = x rotated by the angles' cos/sin, as apply_rotary_pos_emb: x * cos + partner(x) * sin,
// partner (-x[i + D/2], x[i - D/2]) ("half") or (-x[2i + 1], x[2i]) ("interleaved").
void rotate(float* dst, const float* x, const float* cos, const float* sin, int64_t D, bool interleaved) {
  const int64_t h = D / 2;
  for (int64_t i = 0; i < D; ++i) {
    float partner;
    if (interleaved) partner = i % 2 ? x[i - 1] : -x[i + 1];
    else partner = i < h ? -x[i + h] : x[i - h];
    dst[i] = x[i] * cos[i] + partner * sin[i];
  }
}

constexpr int kLanes = 16;

// The sum of p[0:kLanes] as a tree of halves (fixed-size steps, so they vectorize).
__attribute__((always_inline)) inline float lane_sum(float* p) {
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) p[l] += p[l + w];
  return p[0];
}

// out (D) = softmax(scale * q . keys[j]) over keys (L, D) @ values (L, D); scores: (L) scratch.
// Sums run in kLanes partial sums (so they vectorize), in one order on every ISA.
TT_SIMD_CLONES void attend(const float* q, const float* keys, const float* values, int64_t L, int64_t D,
                           float scale, float* scores, float* out) {
  float best = -3.4e38f;
  for (int64_t j = 0; j < L; ++j) {
    const float* k = keys + j * D;
    float part[kLanes] = {};
    int64_t d = 0;
    for (; d + kLanes <= D; d += kLanes)
      for (int l = 0; l < kLanes; ++l) part[l] += q[d + l] * k[d + l];
    for (; d < D; ++d) part[d % kLanes] += q[d] * k[d];
    scores[j] = lane_sum(part) * scale;
    best = std::max(best, scores[j]);
  }
  for (int64_t j = 0; j < L; ++j) scores[j] = fast_exp(scores[j] - best);
  float part[kLanes] = {};
  for (int64_t j = 0; j < L; ++j) part[j % kLanes] += scores[j];
  const float inv = 1.f / lane_sum(part);
  for (int64_t d = 0; d < D; ++d) out[d] = 0.f;
  for (int64_t j = 0; j < L; ++j) {
    const float p = scores[j] * inv, *v = values + j * D;
    for (int64_t d = 0; d < D; ++d) out[d] += p * v[d];
  }
}

// qkv: (B, (H + 2 Hkv) D), keys/values: (B, Hkv, S, D), cos/sin: (D) -> out: (B, H D). The op
// layer reads a position tensor to pos on the CPU.
void cpu_decode_attention(const Tensor& qkv, const Tensor& keys, const Tensor& values, const Tensor& cos,
                          const Tensor& sin, const DecodeAttention& a, int64_t pos, const Tensor& /*position*/,
                          int64_t window, const Tensor& out) {
  const int64_t first = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
  const int64_t B = qkv.size(0), H = a.heads, Hkv = a.kv_heads, D = a.head_dim, S = keys.size(2);
  const int64_t G = H / Hkv, width = (H + 2 * Hkv) * D, L = pos - first + 1;
  const float *x = qkv.data<float>(), *c = cos.data<float>(), *s = sin.data<float>();
  float *kc = keys.data<float>(), *vc = values.data<float>(), *o = out.data<float>();
  for (int64_t b = 0; b < B; ++b)  // the new key (rotated) and value go into the cache first
    for (int64_t h = 0; h < Hkv; ++h) {
      const int64_t at = ((b * Hkv + h) * S + pos) * D;
      rotate(kc + at, x + b * width + (H + h) * D, c, s, D, a.interleaved);
      std::copy_n(x + b * width + (H + Hkv + h) * D, D, vc + at);
    }
  // tasks of >= ~32K multiply-adds each
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(2 * L * D, 1));
  parallel_for(0, B * H, grain, [&](int64_t t0, int64_t t1) {
    std::vector<float> scores(static_cast<size_t>(L)), q(static_cast<size_t>(D));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / H, h = t % H, at = ((b * Hkv + h / G) * S + first) * D;
      rotate(q.data(), x + b * width + h * D, c, s, D, a.interleaved);
      attend(q.data(), kc + at, vc + at, L, D, static_cast<float>(a.scale), scores.data(), o + b * H * D + h * D);
    }
  });
}

}  // namespace

TT_REGISTER_KERNEL(decode_attention, CPU, cpu_decode_attention)

}  // namespace tt::cpu
