#pragma once
// Fast unsigned 32-bit division by a divisor fixed at launch (a multiply-high and a shift, as
// PyTorch's IntDivider, after Granlund & Montgomery): 64-bit `/` and `%` are emulated in dozens
// of instructions on the GPU, and the strided elementwise loops do one per dimension per element.
// Valid for dividends and divisors below 2^31.
#include <cstdint>
#include "tinytorch/macros.h"

namespace tt::cuda {

struct IntDivider {
  uint32_t divisor = 1, m1 = 0, shift = 0;

  IntDivider() = default;
  explicit IntDivider(uint32_t d) : divisor(d == 0 ? 1 : d) {
    while (shift < 32 && (uint64_t(1) << shift) < divisor) ++shift;
    m1 = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - divisor)) / divisor + 1);
  }

  TT_INLINE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    uint32_t t = __umulhi(n, m1);
#else
    uint32_t t = static_cast<uint32_t>((uint64_t(n) * m1) >> 32);
#endif
    return (t + n) >> shift;
  }
};

}  // namespace tt::cuda
