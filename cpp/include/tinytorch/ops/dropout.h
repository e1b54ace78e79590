#pragma once
// Dropout: the mask is drawn from a Generator (ops/random.h), as every random op.
#include <utility>
#include "tinytorch/kernels/dropout.h"
#include "tinytorch/ops/random.h"

namespace tt {

// (y, mask): y = x * mask / (1 - p), mask bool; !train or p == 0 -> (x, all-true mask).
std::pair<Tensor, Tensor> dropout(const Tensor& x, double p, bool train, Generator* gen = nullptr);
Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double p);  // grad * mask / (1 - p)

}  // namespace tt
