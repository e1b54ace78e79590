#pragma once
// Warp and block reductions for the reduction, softmax and normalization kernels. Every
// combination order is fixed by the thread layout, so results are deterministic run to run.
#include <cstdint>
#include <type_traits>
#include "tinytorch/cuda/common.h"

namespace tt::cuda {

// Number of SMs of `device` (cached): sizes grids that split one long reduction across blocks.
int sm_count(int device);

template <class T>
__device__ __forceinline__ T shfl_down(T v, int delta, int width = 32) {
  if constexpr (std::is_same_v<T, bool>) return __shfl_down_sync(0xffffffffu, int(v), delta, width) != 0;
  else if constexpr (sizeof(T) == 1) return T(__shfl_down_sync(0xffffffffu, int(v), delta, width));
  else return __shfl_down_sync(0xffffffffu, v, delta, width);
}
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int mask) {
  if constexpr (std::is_same_v<T, bool>) return __shfl_xor_sync(0xffffffffu, int(v), mask) != 0;
  else return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <class T>
__device__ __forceinline__ T shfl_up(T v, int delta) {
  return __shfl_up_sync(0xffffffffu, v, delta);
}

// Butterfly all-reduce over the 32 lanes of a warp: every lane gets the result. Partners combine
// (a, b) and (b, a), so with a commutative op all lanes hold bitwise the same value.
template <class T, class Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v = op(v, shfl_xor(v, m));
  return v;
}

// All-reduce over a block of blockDim.x threads (a multiple of 32): every thread gets the
// result. smem: at least blockDim.x / 32 elements; reusable right after the call returns.
template <class T, class Op>
__device__ __forceinline__ T block_allreduce(T v, Op op, T* smem) {
  const int warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  v = warp_allreduce(v, op);
  __syncthreads();  // smem may still be read by a previous call
  if (threadIdx.x % 32 == 0) smem[warp] = v;
  __syncthreads();
  T r = smem[0];
  for (int w = 1; w < nwarps; ++w) r = op(r, smem[w]);  // same order in every thread
  return r;
}

struct AddOp {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
// max that propagates NaN (as the CPU kernels): a NaN operand wins.
struct NanMaxOp {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
    const T r = b > a ? b : a;
    return b != b ? b : r;
  }
};

}  // namespace tt::cuda
