#pragma once
// Tensor-core (mma.sync m16n8k16) FlashAttention-2 kernels for float16/bfloat16 with head dims
// 64 and 128 (smaller dims padded with zeros): cuda/src/attention/attention_mma_forward.cu and
// attention_mma_backward.cu. Each returns false,
// launching nothing, where the call is outside what they cover (dtype, E != Ev, E not a multiple
// of 8 or over 128, misaligned pointers); cuda/src/attention/attention.cu then runs its plain kernels.
#include <cuda_runtime.h>
#include <mutex>
#include "tinytorch/kernels/attention.h"

namespace tt::cuda {

// Whether every row of the operand starts 16-byte aligned (16-bit elements: strides multiples of 8).
inline bool rows_aligned(const HeadStrides& s) { return s.b % 8 == 0 && s.h % 8 == 0 && s.l % 8 == 0; }

// The padded head dim (64 or 128) the kernels use for this call, 0 where they don't apply.
int attention_mma_head_dim(const AttentionParams& p, const Tensor& q);

bool attention_forward_mma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream);
// The Hopper forward (attention_wgmma.cu): no mask or dropout; false where it does not apply.
bool attention_forward_wgmma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream);
// The Hopper one-pass backward (attention_wgmma.cu), which computes rowsum(dO * O) itself: no mask
// or dropout, not under deterministic algorithms (its dQ additions vary in order); false where it
// does not apply.
bool attention_backward_wgmma_fused(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                                    const Tensor& v, const Tensor& mask, const Tensor& out, const Tensor& lse,
                                    const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream);
// The Hopper two-kernel backward (attention_wgmma.cu; deterministic): no mask or dropout; false
// where it does not apply.
bool attention_backward_wgmma(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                              const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream);
// dvec: (B, H, Lq) float32 rowsum(dO * O), computed by the caller.
bool attention_backward_mma(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                            const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream);

// The backward's dQ kernel does not depend on its dK/dV kernel: it runs on a side stream (one per
// device, kept for the process, as cuBLAS's handles), forked from and joined back to the caller's
// stream with events, so the two grids fill the GPU together (each alone leaves SMs idle at its
// causal tail). A CUDA graph capture follows the fork and join. `mu` keeps a fork/join pair
// together. Used by the tensor-core and the tiled float32 backward.
struct AttentionSideStream {
  std::mutex mu;
  cudaStream_t stream = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
};
AttentionSideStream& attention_side_stream(int device);

}  // namespace tt::cuda
