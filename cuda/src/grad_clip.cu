// CUDA multi-tensor kernels of clip_grad_norm_ (kernels/grad_clip.h): up to kGroup tensors per
// launch, their pointers and sizes passed by value in the kernel's arguments (so a CUDA graph
// captures them), grid (kBlocksPerTensor, tensors). Sums of squares: each block writes one partial
// per tensor, a second kernel adds each tensor's partials in order (deterministic, no atomics).
#include <algorithm>
#include <vector>
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/common.h"
#include "tinytorch/kernels/grad_clip.h"

namespace tt::cuda {
namespace {

constexpr int kGroup = 64;            // tensors per launch (the argument struct stays ~1 KiB)
constexpr int kBlocksPerTensor = 64;  // blocks striding over one tensor
constexpr int kThreadsPerBlock = 256;

template <class T>
struct Group {
  T* ptr[kGroup];
  int64_t numel[kGroup];
};

// partial: (tensors, kBlocksPerTensor) <- per block, the sum of squares of its elements of tensor blockIdx.y
template <class T, class M>
__global__ void __launch_bounds__(kThreadsPerBlock) sum_squares_kernel(Group<T> g, M* partial) {
  __shared__ M smem[32];
  const T* x = g.ptr[blockIdx.y];
  const int64_t n = g.numel[blockIdx.y], stride = int64_t(gridDim.x) * blockDim.x;
  M acc = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const M v = M(x[i]);
    acc += v * v;
  }
  acc = block_allreduce(acc, AddOp(), smem);
  if (threadIdx.x == 0) partial[int64_t(blockIdx.y) * gridDim.x + blockIdx.x] = acc;
}

// sums: (tensors,) <- partial: (tensors, kBlocksPerTensor) summed along the blocks, one warp per tensor
template <class M>
__global__ void sum_partials_kernel(const M* partial, M* sums, int tensors) {
  const int t = int(blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (t >= tensors) return;
  M acc = 0;
  for (int b = lane; b < kBlocksPerTensor; b += 32) acc += partial[t * kBlocksPerTensor + b];
  acc = warp_allreduce(acc, AddOp());
  if (lane == 0) sums[t] = acc;
}

template <class T, class M>
__global__ void __launch_bounds__(kThreadsPerBlock) scale_kernel(Group<T> g, const M* coef) {
  T* x = g.ptr[blockIdx.y];
  const int64_t n = g.numel[blockIdx.y], stride = int64_t(gridDim.x) * blockDim.x;
  const M c = *coef;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = T(M(x[i]) * c);
}

// Calls launch(group, first, count) for each run of up to kGroup tensors of xs.
template <class T, class F>
void for_each_group(const std::vector<Tensor>& xs, const F& launch) {
  for (size_t first = 0; first < xs.size(); first += kGroup) {
    const int count = int(std::min<size_t>(kGroup, xs.size() - first));
    Group<T> g{};
    for (int i = 0; i < count; ++i) g.ptr[i] = xs[first + i].data<T>(), g.numel[i] = xs[first + i].numel();
    launch(g, first, count);
  }
}

void cuda_multi_sum_squares(const std::vector<Tensor>& xs, const Tensor& sums) {
  DeviceGuard guard(sums.device());
  cudaStream_t stream = current_stream(sums.device().index);
  TT_DISPATCH_FLOATING(xs[0].dtype(), "multi_sum_squares", [&] {
    using M = opmath_t<scalar_t>;
    Tensor partial = Tensor::empty({int64_t(xs.size()) * kBlocksPerTensor}, sums.dtype(), sums.device());
    for_each_group<scalar_t>(xs, [&](const Group<scalar_t>& g, size_t first, int count) {
      sum_squares_kernel<scalar_t, M><<<dim3(kBlocksPerTensor, unsigned(count)), kThreadsPerBlock, 0, stream>>>(
          g, partial.data<M>() + first * kBlocksPerTensor);
      TT_CUDA_KERNEL_CHECK();
    });
    const int tensors = int(xs.size());
    sum_partials_kernel<M><<<unsigned((tensors * 32 + 255) / 256), 256, 0, stream>>>(partial.data<M>(),
                                                                                      sums.data<M>(), tensors);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_multi_scale(const std::vector<Tensor>& xs, const Tensor& coef) {
  DeviceGuard guard(coef.device());
  cudaStream_t stream = current_stream(coef.device().index);
  TT_DISPATCH_FLOATING(xs[0].dtype(), "multi_scale_", [&] {
    using M = opmath_t<scalar_t>;
    for_each_group<scalar_t>(xs, [&](const Group<scalar_t>& g, size_t, int count) {
      scale_kernel<scalar_t, M><<<dim3(kBlocksPerTensor, unsigned(count)), kThreadsPerBlock, 0, stream>>>(
          g, coef.data<M>());
      TT_CUDA_KERNEL_CHECK();
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(multi_sum_squares, CUDA, cuda_multi_sum_squares)
TT_REGISTER_KERNEL(multi_scale, CUDA, cuda_multi_scale)

}  // namespace tt::cuda
