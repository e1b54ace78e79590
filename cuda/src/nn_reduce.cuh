#pragma once
// Reduction helpers for the NN kernels (conv bias grad, losses): warp/block sums with shuffles,
// and a deterministic two-stage sum whose block count depends only on the problem size, so the
// summation tree, and hence the result, is the same on every run and every GPU.
#include <cmath>
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/tensor.h"

namespace tt::cuda::nn {

template <class A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class A>
__device__ __forceinline__ A warp_max(A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ double2 warp_sum2(double2 v) {
  v.x = warp_sum(v.x);
  v.y = warp_sum(v.y);
  return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
template <class A>
__device__ A block_sum(A v) {
  __shared__ A part[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // part may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < nw ? part[lane] : A(0);
  return warp_sum(v);
}

// Max over the whole block (NaNs ignored, like fmax); every thread gets it.
template <class A>
__device__ A block_max(A v) {
  __shared__ A part[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < nw ? part[lane] : A(-INFINITY);
  return warp_max(v);
}

__device__ __forceinline__ double2 block_sum2(double2 v) {
  v.x = block_sum(v.x);
  v.y = block_sum(v.y);
  return v;
}

constexpr int kSumThreads = 256;

// Stage 1: block b sums f(i) over i = b*T + t, b*T + t + G*T, ... (G blocks) -> part[b].
template <class F>
__global__ void det_sum_stage1(int64_t n, F f, double2* part) {
  double2 acc = make_double2(0.0, 0.0);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    double2 v = f(i);
    acc.x += v.x, acc.y += v.y;
  }
  acc = block_sum2(acc);
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

// Stage 2: one block sums the G partials, then fin(total) runs on thread 0.
template <class Fin>
__global__ void det_sum_stage2(const double2* part, int g, Fin fin) {
  double2 acc = make_double2(0.0, 0.0);
  for (int i = threadIdx.x; i < g; i += blockDim.x) acc.x += part[i].x, acc.y += part[i].y;
  acc = block_sum2(acc);
  if (threadIdx.x == 0) fin(acc);
}

// Sums the pairs f(i), i in [0, n), in double, deterministically, then calls fin(sum) on the
// device (one thread). f and fin are __device__ functors or extended lambdas.
template <class F, class Fin>
void det_sum(int64_t n, F f, Fin fin, Device dev, cudaStream_t stream) {
  int g = static_cast<int>(std::min<int64_t>(256, std::max<int64_t>(1, (n + 4095) / 4096)));
  Tensor part = Tensor::empty({int64_t(g) * 2}, DType::Float64, dev);
  auto* pp = reinterpret_cast<double2*>(part.data_ptr());
  det_sum_stage1<<<g, kSumThreads, 0, stream>>>(n, f, pp);
  TT_CUDA_KERNEL_CHECK();
  det_sum_stage2<<<1, kSumThreads, 0, stream>>>(pp, g, fin);
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace tt::cuda::nn
