#pragma once
// Exact (erf) GELU and its derivative for float with plain arithmetic, so the CPU elementwise
// loops vectorize them (std::erf / std::exp are scalar libm calls; GELU was ~15% of a GPT step).
#include "fast_exp.h"

namespace tt::cpu {

// Phi(x) = 0.5 * erfc(-x / sqrt(2)), the normal CDF. erfc from Numerical Recipes' erfcc
// (Chebyshev fit, relative error < 1.2e-7 for every argument), so Phi keeps its relative
// accuracy in the far negative tail instead of cancelling in 1 + erf.
inline float normal_cdf(float x) {
  const float z = x * -0.70710678118654752f;  // erfc(z) with z = -x / sqrt(2)
  const float az = z < 0.0f ? -z : z;
  const float t = 1.0f / (1.0f + 0.5f * az);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float erfc_az = t * fast_exp(p - az * az);  // erfc(|z|)
  const float half = 0.5f * erfc_az;
  return z < 0.0f ? 1.0f - half : half;  // erfc(-a) = 2 - erfc(a)
}

// gelu(x) = x * Phi(x)
inline float gelu_fast(float x) { return x * normal_cdf(x); }

// d gelu / dx = Phi(x) + x * phi(x), phi the normal density
inline float gelu_grad_fast(float x) {
  return normal_cdf(x) + x * (0.39894228040143268f * fast_exp(-0.5f * x * x));
}

}  // namespace tt::cpu
