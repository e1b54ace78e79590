#pragma once
// Contiguous float32 GELU (exact, erf) and SiLU loops, forward and backward, on the best SIMD
// path the CPU allows (simd_level.h). Same formulas as fast_gelu.h / fast_silu.h.
#include <cstdint>

namespace tt::cpu {

// out[i] = gelu(x[i])
void gelu_f32(const float* x, float* out, int64_t n);
// out[i] = grad[i] * gelu'(x[i])
void gelu_backward_f32(const float* grad, const float* x, float* out, int64_t n);
// out[i] = silu(x[i])
void silu_f32(const float* x, float* out, int64_t n);
// out[i] = grad[i] * silu'(x[i])
void silu_backward_f32(const float* grad, const float* x, float* out, int64_t n);

}  // namespace tt::cpu
