#pragma once
// SiLU and its derivative for float with plain arithmetic, so the CPU elementwise loops vectorize
// them (std::exp is a scalar libm call; SiLU was ~4x torch's time in a SmolLM2 prefill).
#include <limits>
#include "fast_exp.h"

namespace tt::cpu {

// 1 + exp(-x); exp(-x) overflows to +inf past 88 as libm's does (fast_exp would clamp), so
// silu(-inf) = -inf / inf = NaN as torch, and far-negative x give -0.
inline float one_plus_exp_neg(float x) {
  const float e = -x > 88.0f ? std::numeric_limits<float>::infinity() : fast_exp(-x);
  return 1.0f + e;
}

// silu(x) = x * sigmoid(x)
inline float silu_fast(float x) { return x / one_plus_exp_neg(x); }

// d silu / dx = s * (1 + x * (1 - s)), s = sigmoid(x)
inline float silu_grad_fast(float x) {
  const float s = 1.0f / one_plus_exp_neg(x);
  return s * (1.0f + x * (1.0f - s));
}

}  // namespace tt::cpu
