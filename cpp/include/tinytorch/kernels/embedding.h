#pragma once
// Embedding kernels. Operands arrive validated and contiguous, in the shapes noted (the op
// layer flattens the indices to N).
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// weight: (V, D), idx: (N) int32/int64 -> out: (N, D). IndexError for an index outside [0, V).
TT_DECLARE_KERNEL(embedding, const Tensor& weight, const Tensor& idx, const Tensor& out)
// grad: (N, D), idx: (N) -> gw: (V, D), overwritten; row padding_idx (if >= 0) stays zero.
// Sums run in index order whatever the thread count (deterministic).
TT_DECLARE_KERNEL(embedding_backward, const Tensor& grad, const Tensor& idx, const Tensor& gw, int64_t padding_idx)

}  // namespace tt
