#pragma once
// Random kernels over a counter-based Philox4x32-10 stream. Each call gets (seed, offset) from
// a Generator; element i of the output (in row-major order of its shape) draws the 128-bit
// block philox(key = seed, counter = offset + i), so results depend on neither layout nor
// thread count, and the CUDA backend reproduces them exactly. The op layer then advances the
// generator's offset by numel.
#include <array>
#include <cstdint>
#include "tinytorch/dispatch.h"
#include "tinytorch/macros.h"
#include "tinytorch/tensor.h"

namespace tt {

struct PhiloxState {
  uint64_t seed = 0, offset = 0;
};

// Philox4x32-10 (Salmon et al. 2011): 4 x 32 random bits for a 128-bit counter and 64-bit key.
TT_INLINE std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t counter) {
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}
// [0, 1) with 24 (float) or 53 (double) random bits.
TT_INLINE float uniform_float(uint32_t a) { return float(a >> 8) * 0x1.0p-24f; }
TT_INLINE double uniform_double(uint32_t a, uint32_t b) {
  return double(((uint64_t(a) << 32) | b) >> 11) * 0x1.0p-53;
}

// x[i] = low + (high - low) * U[0, 1)
TT_DECLARE_KERNEL(uniform, const Tensor& x, double low, double high, PhiloxState st)
// x[i] = mean + std * N(0, 1) (Box-Muller on the block's two uniforms)
TT_DECLARE_KERNEL(normal, const Tensor& x, double mean, double std, PhiloxState st)
// x[i] = U < p  (probs undefined) or U < probs[i] (probs broadcastable to x, float)
TT_DECLARE_KERNEL(bernoulli, const Tensor& x, double p, const Tensor& probs, PhiloxState st)
// x[i] = low + (64 random bits) mod (high - low)
TT_DECLARE_KERNEL(randint, const Tensor& x, int64_t low, int64_t high, PhiloxState st)
// keys: int64 (n,) <- 63 random bits each (randperm argsorts them)
TT_DECLARE_KERNEL(random_keys, const Tensor& keys, PhiloxState st)

}  // namespace tt
