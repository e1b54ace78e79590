#pragma once
// exp for float written with plain arithmetic, so loops over it vectorize (softmax in norm.cpp,
// the online softmax in attention.cpp).
#include <cstdint>
#include <cstring>

namespace tt::cpu {

// exp(x) for float with plain arithmetic so loops over it vectorize (Cephes polynomial,
// ~1 ulp). Exactly 0 below -87 (so masked -inf logits give 0); NaN stays NaN.
inline float fast_exp(float x) {
  float xc = x < -87.0f ? -87.0f : x;
  xc = xc > 88.0f ? 88.0f : xc;
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  const float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;              // Cody-Waite: x - n ln2
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.0f ? 0.0f : y * scale;
}

}  // namespace tt::cpu
