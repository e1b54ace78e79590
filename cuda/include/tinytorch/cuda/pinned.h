#pragma once
#include <cuda_runtime.h>
#include "tinytorch/tensor.h"

namespace tt::cuda {

Tensor pin_memory(const Tensor& t);  // a copy of t in page-locked host memory
bool is_pinned(const Tensor& t);
// An asynchronous copy on `stream` reads `t`: if t's storage is a cached pinned block, it is not
// reused before that copy is done. No-op for other memory.
void record_host_use(const Tensor& t, cudaStream_t stream);

}  // namespace tt::cuda
