#pragma once
// Tiled SIMT FlashAttention-2 kernels for float32 (cuda/src/attention/attention_tiled.cu): a block of 128
// threads owns a 64 x 64 tile of scores, each thread an 8 x 4 register micro-tile of float32 FMAs,
// operands staged in shared memory. Each entry point returns false, launching nothing, where the
// call is outside what they cover (not float32, E != Ev, E > 128, dropout); cuda/src/attention/attention.cu
// then runs its plain kernels.
#include <cuda_runtime.h>
#include "tinytorch/kernels/attention.h"

namespace tt::cuda {

bool attention_forward_tiled(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream);
// dvec: (B, H, Lq) float32 rowsum(dO * O), computed by the caller.
bool attention_backward_tiled(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                              const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream);

}  // namespace tt::cuda
