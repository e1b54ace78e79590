#pragma once
// The Philox launch shared by the random (random.cu) and dropout (dropout.cu) kernels: element
// i of a contiguous output gets philox4x32(seed, offset + i), as on the CPU.
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/random.h"

namespace tt::cuda {
namespace {

// Launches f(i, philox block of element i) for i in [0, n) on x's device; f is a device functor.
template <class F>
__global__ void philox_kernel(int64_t n, PhiloxState st, F f) {
  TT_GRID_STRIDE(i, n) {
    const auto r = philox4x32(st.seed, st.offset + uint64_t(i));
    f(i, r[0], r[1], r[2], r[3]);
  }
}

template <class F>
void launch_philox(const Tensor& x, int64_t n, PhiloxState st, F f) {
  if (n == 0) return;
  DeviceGuard guard(x.device());
  philox_kernel<<<grid_for(n), kThreads, 0, current_stream(x.device().index)>>>(n, st, f);
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace
}  // namespace tt::cuda
