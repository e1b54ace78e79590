// CPU dropout kernels. The mask uses the random kernels' stream (cpu/random.cpp): element i
// of a contiguous output draws philox4x32(seed, offset + i), for any thread count or chunking.
#include "loops.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES
#include "tinytorch/kernels/dropout.h"

namespace tt::cpu {
namespace {

constexpr int64_t kRandGrain = 4096;  // as cpu/random.cpp: Philox costs ~10 multiply rounds per element

// keep[i - b] = U(philox(seed, offset + i)) >= p for i in [b, e): the same stream as for_blocks,
// in a flat loop the compiler vectorizes (AVX-512/AVX2 clones: 16 or 8 Philox blocks at a time).
TT_SIMD_CLONES void dropout_keep(uint64_t seed, uint64_t offset, int64_t b, int64_t e, double p, bool* keep) {
  for (int64_t i = b; i < e; ++i) {
    auto r = philox4x32(seed, offset + uint64_t(i));
    keep[i - b] = uniform_double(r[0], r[1]) >= p;
  }
}

// x: contiguous (n) -> mask[i] = U >= p, y[i] = mask ? x * 1/(1-p) : 0
void cpu_dropout(const Tensor& x, double p, const Tensor& y, const Tensor& mask, PhiloxState st) {
  bool* m = mask.data<bool>();
  TT_DISPATCH_FLOATING(x.dtype(), "dropout", [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    const M scale = p >= 1 ? M(0) : M(1.0 / (1.0 - p));
    parallel_for(0, x.numel(), kRandGrain, [&](int64_t b, int64_t e) {
      dropout_keep(st.seed, st.offset, b, e, p, m + b);
      for (int64_t i = b; i < e; ++i) yp[i] = m[i] ? scalar_t(M(xp[i]) * scale) : scalar_t(M(0));
    });
  });
}

// grad: (...), mask: bool broadcast to grad -> out = mask ? grad * scale : 0
void cpu_masked_scale(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  TT_DISPATCH_FLOATING(grad.dtype(), "dropout_backward", [&] {
    using M = opmath_t<scalar_t>;
    const M s = M(scale);
    ternary_loop<scalar_t, scalar_t, bool, bool>(grad, mask, mask, out, [s](scalar_t g, bool k, bool) {
      return k ? scalar_t(M(g) * s) : scalar_t(M(0));
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(dropout, CPU, cpu_dropout)
TT_REGISTER_KERNEL(masked_scale, CPU, cpu_masked_scale)

}  // namespace tt::cpu
