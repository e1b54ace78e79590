#pragma once
// Embedding ops (checks, shapes, allocation; kernels in kernels/embedding.h).
#include <optional>
#include "tinytorch/kernels/embedding.h"

namespace tt {

// weight: (V, D), indices: any shape, int32/int64 -> (*indices.shape, D).
Tensor embedding(const Tensor& weight, const Tensor& indices);
// grad: (*indices.shape, D) -> (V, D); padding_idx < 0 (after wrapping) means none.
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                          std::optional<int64_t> padding_idx);

}  // namespace tt
