// CPU dropout kernels. The mask uses the random kernels' Philox stream (cpu/random.cpp), four
// elements per block: element i takes word i % 4 of philox4x32(seed, offset + i / 4)
// (kernels/dropout.h), for any thread count or chunking, bit-equal to cuda/src/dropout.cu.
#include <algorithm>
#include "loops.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES
#include "tinytorch/kernels/dropout.h"

namespace tt::cpu {
namespace {

constexpr int64_t kRandGrain = 4096;  // as cpu/random.cpp: Philox costs ~10 multiply rounds per block

inline bool keep_one(uint64_t seed, uint64_t offset, int64_t i, float p) {
  return dropout_keep_word(philox4x32(seed, offset + uint64_t(i >> 2))[i & 3], p);
}

// keep[i - b] for i in [b, e): the whole blocks in a flat loop the compiler vectorizes (AVX-512/
// AVX2 clones), the partial blocks at either end element by element.
TT_SIMD_CLONES void dropout_keep(uint64_t seed, uint64_t offset, int64_t b, int64_t e, float p, bool* keep) {
  const int64_t first = (b + 3) >> 2, last = e >> 2;  // whole blocks: [first, last)
  const int64_t head_end = std::min(e, first * 4);
  for (int64_t i = b; i < head_end; ++i) keep[i - b] = keep_one(seed, offset, i, p);
  bool* k = keep + (first * 4 - b);
  for (int64_t blk = first; blk < last; ++blk, k += 4) {
    auto r = philox4x32(seed, offset + uint64_t(blk));
    k[0] = dropout_keep_word(r[0], p), k[1] = dropout_keep_word(r[1], p);
    k[2] = dropout_keep_word(r[2], p), k[3] = dropout_keep_word(r[3], p);
  }
  for (int64_t i = std::max(head_end, last * 4); i < e; ++i) keep[i - b] = keep_one(seed, offset, i, p);
}

// x: contiguous (n) -> mask[i] = U >= p, y[i] = x * (mask ? 1/(1-p) : 0): a product, as PyTorch's
// input * mask, so a NaN or infinite x gives NaN where it is dropped (p = 1 included)
void cpu_dropout(const Tensor& x, double p, const Tensor& y, const Tensor& mask, PhiloxState st) {
  bool* m = mask.data<bool>();
  TT_DISPATCH_FLOATING(x.dtype(), "dropout", [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    const M scale = p >= 1 ? M(0) : M(1.0 / (1.0 - p));
    parallel_for(0, x.numel(), kRandGrain, [&](int64_t b, int64_t e) {
      dropout_keep(st.seed, st.offset, b, e, float(p), m + b);
      for (int64_t i = b; i < e; ++i) yp[i] = scalar_t(M(xp[i]) * (m[i] ? scale : M(0)));
    });
  });
}

// grad: (...), mask: bool broadcast to grad -> out = grad * (mask ? scale : 0) (NaN grads stay NaN)
void cpu_masked_scale(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  TT_DISPATCH_FLOATING(grad.dtype(), "dropout_backward", [&] {
    using M = opmath_t<scalar_t>;
    const M s = M(scale);
    ternary_loop<scalar_t, scalar_t, bool, bool>(grad, mask, mask, out, [s](scalar_t g, bool k, bool) {
      return scalar_t(M(g) * (k ? s : M(0)));
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(dropout, CPU, cpu_dropout)
TT_REGISTER_KERNEL(masked_scale, CPU, cpu_masked_scale)

}  // namespace tt::cpu
