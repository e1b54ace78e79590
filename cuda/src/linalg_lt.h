#pragma once
// cuBLASLt's bias epilogue for the CUDA GEMM (cuda/src/linalg_lt.cpp).
#include <cuda_runtime.h>
#include "tinytorch/kernels/linalg.h"

namespace tt::cuda {

// C = alpha * op(A) @ op(B) + bias (g.bias defined, batch 1, beta 0, float32/float16/bfloat16) in one
// cuBLASLt call; false, launching nothing, where that doesn't apply or no algorithm fits.
bool gemm_bias_lt(const GemmArgs& g, cudaStream_t stream);

}  // namespace tt::cuda
