#pragma once
// Shape/factory kernel families (cat, stack, flip, roll, repeat, eye are views + copy/fill).
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// x: (..., M, N) -> out: (..., M, N), keeping x[i][j] where j - i >= k (upper) or j - i <= k (lower).
TT_DECLARE_KERNEL(triu_tril, const Tensor& x, int64_t k, bool upper, const Tensor& out)
// out: (n,) contiguous <- start + i * step (integers exactly when start/step are integral).
TT_DECLARE_KERNEL(arange, const Tensor& out, double start, double step)
// out: (n,) contiguous <- evenly spaced from start to end inclusive (symmetric, as PyTorch).
TT_DECLARE_KERNEL(linspace, const Tensor& out, double start, double end)

}  // namespace tt
