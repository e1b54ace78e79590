#pragma once
// Shape/factory kernel families (cat, stack, flip, roll, repeat, eye are views + copy/fill).
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// x: (..., M, N) -> out: (..., M, N), keeping x[i][j] where j - i >= k (upper) or j - i <= k (lower).
TT_DECLARE_KERNEL(triu_tril, const Tensor& x, int64_t k, bool upper, const Tensor& out)
// arange's start/step: as doubles, and exactly as int64 when `integral` (Python ints).
struct RangeArgs {
  double start = 0, step = 1;
  int64_t istart = 0, istep = 1;
  bool integral = false;
};
// out: (n,) contiguous <- start + i * step (in int64 arithmetic when args.integral).
TT_DECLARE_KERNEL(arange, const Tensor& out, RangeArgs args)
// out: (n,) contiguous <- evenly spaced from start to end inclusive (symmetric, as PyTorch).
TT_DECLARE_KERNEL(linspace, const Tensor& out, double start, double end)

}  // namespace tt
