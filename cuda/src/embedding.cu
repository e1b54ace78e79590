// CUDA embedding lookup and its deterministic backward.
// Backward: a stable radix sort of (index, position) pairs groups the grad rows of each
// embedding row in increasing position order; one warp per group then sums them in that order,
// exactly the CPU kernel's order, so the result is bitwise reproducible (no atomics).
#include <cub/device/device_radix_sort.cuh>
#include <climits>
#include "tinytorch/cuda/device_assert.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/embedding.h"

namespace tt::cuda {
namespace {

// weight: (V, D), idx: (N) -> out: (N, D), rows copied in units of U bytes (U = 16 when the
// row size and both base pointers allow, for 16-byte loads and stores). units = row bytes / U.
template <class U, class I>
__global__ void embedding_kernel(const U* __restrict__ w, const I* __restrict__ idx, U* __restrict__ out,
                                 int64_t N, int64_t units, int64_t V) {
  int64_t total = N * units;
  TT_GRID_STRIDE(e, total) {
    int64_t n = e / units, u = e - n * units;
    int64_t v = static_cast<int64_t>(idx[n]);
    TT_CUDA_KERNEL_ASSERT(v >= 0 && v < V);
    out[e] = w[v * units + u];
  }
}

// idx: (N) -> every index checked against [0, V) (used where no row data moves: D == 0), and
// pos: (N) = 0..N-1 when pos is given (the values of the backward's sort).
template <class I>
__global__ void check_iota_kernel(const I* __restrict__ idx, int32_t* pos, int64_t N, int64_t V) {
  TT_GRID_STRIDE(n, N) {
    int64_t v = static_cast<int64_t>(idx[n]);
    TT_CUDA_KERNEL_ASSERT(v >= 0 && v < V);
    if (pos) pos[n] = static_cast<int32_t>(n);
  }
}

template <class I>
void launch_embedding(const Tensor& weight, const Tensor& idx, const Tensor& out, cudaStream_t stream) {
  int64_t V = weight.size(0), N = idx.size(0);
  int64_t row = weight.size(1) * static_cast<int64_t>(weight.itemsize());
  const I* ip = idx.data<I>();
  if (row == 0) {
    check_iota_kernel<I><<<grid_for(N), kThreads, 0, stream>>>(ip, nullptr, N, V);
    TT_CUDA_KERNEL_CHECK();
    return;
  }
  auto fits = [&](int64_t u) {
    return row % u == 0 && reinterpret_cast<uintptr_t>(weight.data_ptr()) % u == 0 &&
           reinterpret_cast<uintptr_t>(out.data_ptr()) % u == 0;
  };
  auto go = [&](auto unit) {
    using U = decltype(unit);
    int64_t units = row / static_cast<int64_t>(sizeof(U));
    embedding_kernel<U, I><<<grid_for(N * units), kThreads, 0, stream>>>(
        static_cast<const U*>(weight.data_ptr()), ip, static_cast<U*>(out.data_ptr()), N, units, V);
    TT_CUDA_KERNEL_CHECK();
  };
  if (fits(16)) go(uint4{});
  else if (fits(8)) go(uint2{});
  else if (fits(4)) go(uint32_t{});
  else if (fits(2)) go(uint16_t{});
  else go(uint8_t{});
}

void cuda_embedding(const Tensor& weight, const Tensor& idx, const Tensor& out) {
  if (idx.size(0) == 0) return;
  DeviceGuard guard(weight.device());
  cudaStream_t stream = current_stream(weight.device().index);
  if (idx.dtype() == DType::Int32) launch_embedding<int32_t>(weight, idx, out, stream);
  else launch_embedding<int64_t>(weight, idx, out, stream);
}

constexpr int kSegWarps = kThreads / 32;

// keys: (N) sorted indices, pos: (N) their positions (increasing within equal keys),
// grad: (N, D) -> gw: (V, D) (zeroed). The warp at the first position of each run of equal
// keys sums the run's grad rows in order for columns [32 y, 32 y + 32) + k 32 gridDim.y (block
// row y): a few long runs (a small vocabulary) still spread over many warps.
template <class T, class I>
__global__ void embedding_backward_kernel(const I* __restrict__ keys, const int32_t* __restrict__ pos,
                                          const T* __restrict__ grad, T* __restrict__ gw, int64_t N, int64_t D,
                                          int64_t pad) {
  using A = opmath_t<T>;
  int64_t i = blockIdx.x * int64_t(kSegWarps) + (threadIdx.x >> 5);
  int lane = threadIdx.x & 31;
  if (i >= N) return;
  int64_t v = static_cast<int64_t>(keys[i]);
  if ((i > 0 && static_cast<int64_t>(keys[i - 1]) == v) || v == pad) return;
  int64_t end = i + 1;
  while (end < N && static_cast<int64_t>(keys[end]) == v) ++end;
  for (int64_t d = int64_t(blockIdx.y) * 32 + lane; d < D; d += int64_t(gridDim.y) * 32) {
    A acc = 0;
    for (int64_t j = i; j < end; ++j) acc += static_cast<A>(grad[static_cast<int64_t>(pos[j]) * D + d]);
    gw[v * D + d] = static_cast<T>(acc);
  }
}

int bits_for(int64_t V) {
  int b = 1;
  while (b < 63 && (int64_t(1) << b) < V) ++b;
  return b;
}

template <class T, class I>
void embedding_backward_typed(const Tensor& grad, const Tensor& idx, const Tensor& gw, int64_t pad,
                              cudaStream_t stream) {
  int64_t V = gw.size(0), D = gw.size(1), N = idx.size(0);
  Device dev = gw.device();
  TT_CHECK(N <= INT_MAX, "embedding_backward: more than 2^31-1 indices (", N, ") is not supported on CUDA");
  Tensor keys_out = Tensor::empty({N}, idx.dtype(), dev);
  Tensor pos_in = Tensor::empty({N}, DType::Int32, dev), pos_out = Tensor::empty({N}, DType::Int32, dev);
  const I* keys_in = idx.data<I>();
  check_iota_kernel<I><<<grid_for(N), kThreads, 0, stream>>>(keys_in, pos_in.data<int32_t>(), N, V);
  TT_CUDA_KERNEL_CHECK();
  // Stable: equal keys keep increasing positions. Only the bits that can be set in [0, V) sort.
  int end_bit = std::min<int>(bits_for(V), static_cast<int>(sizeof(I) * 8)), n = static_cast<int>(N);
  size_t temp_bytes = 0;
  TT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out.data<I>(),
                                                pos_in.data<int32_t>(), pos_out.data<int32_t>(), n, 0, end_bit,
                                                stream));
  Tensor temp = Tensor::empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))}, DType::UInt8, dev);
  TT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, keys_in, keys_out.data<I>(),
                                                pos_in.data<int32_t>(), pos_out.data<int32_t>(), n, 0, end_bit,
                                                stream));
  if (D == 0) return;
  dim3 blocks(static_cast<unsigned>((N + kSegWarps - 1) / kSegWarps),
              static_cast<unsigned>(std::min<int64_t>((D + 31) / 32, 65535)));
  embedding_backward_kernel<T, I><<<blocks, kThreads, 0, stream>>>(keys_out.data<I>(), pos_out.data<int32_t>(),
                                                                   grad.data<T>(), gw.data<T>(), N, D, pad);
  TT_CUDA_KERNEL_CHECK();
}

void cuda_embedding_backward(const Tensor& grad, const Tensor& idx, const Tensor& gw, int64_t pad) {
  DeviceGuard guard(gw.device());
  cudaStream_t stream = current_stream(gw.device().index);
  if (gw.numel() > 0)
    TT_CUDA_CHECK(cudaMemsetAsync(gw.data_ptr(), 0, static_cast<size_t>(gw.numel()) * gw.itemsize(), stream));
  if (idx.size(0) == 0) return;
  TT_DISPATCH_FLOATING(grad.dtype(), "embedding_backward", [&] {
    if (idx.dtype() == DType::Int32) embedding_backward_typed<scalar_t, int32_t>(grad, idx, gw, pad, stream);
    else embedding_backward_typed<scalar_t, int64_t>(grad, idx, gw, pad, stream);
  });
}

}  // namespace

TT_REGISTER_KERNEL(embedding, CUDA, cuda_embedding)
TT_REGISTER_KERNEL(embedding_backward, CUDA, cuda_embedding_backward)

}  // namespace tt::cuda
