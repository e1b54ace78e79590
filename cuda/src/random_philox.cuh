#pragma once
// The Philox launch shared by the random (random.cu) and dropout (dropout.cu) kernels: element
// i of a contiguous output gets philox4x32(seed, offset + i), as on the CPU.
#include "tinytorch/cuda/graph.h"
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

// The same inside a CUDA graph: (seed, offset) are read at run time from the graph's state buffer
// (state: seed, base offset, refreshed by every replay), plus this kernel's offset in the graph.
template <class F>
__global__ void philox_graph_kernel(int64_t n, const uint64_t* state, uint64_t intragraph, F f) {
  const uint64_t seed = state[0], offset = state[1] + intragraph;
  TT_GRID_STRIDE(i, n) {
    const auto r = philox4x32(seed, offset + uint64_t(i));
    f(i, r[0], r[1], r[2], r[3]);
  }
}

template <class F>
void launch_philox(const Tensor& x, int64_t n, PhiloxState st, F f, const char* op = "random") {
  if (n == 0) return;
  DeviceGuard guard(x.device());
  const int dev = x.device().index;
  const GraphPhilox g = graph_philox(dev, st, uint64_t(n), op);
  if (g.state) philox_graph_kernel<<<grid_for(n), kThreads, 0, current_stream(dev)>>>(n, g.state, g.intragraph_offset, f);
  else philox_kernel<<<grid_for(n), kThreads, 0, current_stream(dev)>>>(n, st, f);
  TT_CUDA_KERNEL_CHECK();
}

// (seed, offset) of a launch whose kernel draws the blocks itself: fixed when eager, read from
// the graph's state buffer at replay inside a CUDA graph (as philox_graph_kernel). n: the
// counters the op reserved.
struct PhiloxArgs {
  uint64_t seed, offset;
  const uint64_t* state;  // null when eager
  __device__ __forceinline__ void get(uint64_t& s, uint64_t& o) const {
    if (state) s = state[0], o = state[1] + offset;
    else s = seed, o = offset;
  }
};

inline PhiloxArgs philox_args(int dev, PhiloxState st, uint64_t n, const char* op) {
  const GraphPhilox g = graph_philox(dev, st, n, op);
  return g.state ? PhiloxArgs{0, g.intragraph_offset, g.state} : PhiloxArgs{st.seed, st.offset, nullptr};
}

}  // namespace
}  // namespace tt::cuda
