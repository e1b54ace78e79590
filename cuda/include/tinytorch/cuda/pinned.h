#pragma once
#include "tinytorch/tensor.h"

namespace tt::cuda {

Tensor pin_memory(const Tensor& t);  // a copy of t in page-locked host memory
bool is_pinned(const Tensor& t);

}  // namespace tt::cuda
