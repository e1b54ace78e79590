// CUDA kernels for tril/triu and the arange/linspace factories (cpp/src/cpu/shape.cpp semantics).
// The factories round exactly like the CPU: products and sums use __dmul_rn/__dadd_rn so nvcc
// cannot contract them into an FMA (which rounds once and could differ in the last bit).
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/index.h"
#include "tinytorch/kernels/shape.h"

namespace tt::cuda {
namespace {

// As the CPU's static_cast; integers go through int64 so values outside a narrow type wrap
// modulo 2^bits like the host code does (the GPU's direct conversion would saturate).
template <class T>
__device__ __forceinline__ T cast_from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return static_cast<T>(v);
}

// x: contiguous (B, M, N) -> out: (B, M, N) keeping j - i >= k (upper) / <= k (lower), else 0
template <class U>
__global__ void triu_tril_kernel(int64_t total, int64_t M, int64_t N, int64_t k, bool upper, const U* x, U* out) {
  TT_GRID_STRIDE(e, total) {
    const int64_t j = e % N, i = (e / N) % M;
    const bool keep = upper ? j - i >= k : j - i <= k;
    out[e] = keep ? x[e] : U{};  // all-zero bits are 0 in every dtype
  }
}

void cuda_triu_tril(const Tensor& x, int64_t k, bool upper, const Tensor& out) {
  const int64_t M = x.shape()[x.dim() - 2], N = x.shape()[x.dim() - 1], total = x.numel();
  if (total == 0) return;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  auto launch = [&](auto tag) {
    using U = decltype(tag);
    triu_tril_kernel<U><<<grid_for(total), kThreads, 0, stream>>>(
        total, M, N, k, upper, reinterpret_cast<const U*>(x.data_ptr()), reinterpret_cast<U*>(out.data_ptr()));
  };
  dispatch_bytes(x.itemsize(), launch);  // pure data movement: one instantiation per element size
  TT_CUDA_KERNEL_CHECK();
}

// out: (n,) <- start + i * step; exact int64 arithmetic for integer dtypes with integral args
template <class T>
__global__ void arange_kernel(int64_t n, T* out, RangeArgs a, bool exact) {
  TT_GRID_STRIDE(i, n) {
    if (exact) out[i] = static_cast<T>(a.istart + i * a.istep);
    else out[i] = cast_from_double<T>(__dadd_rn(a.start, __dmul_rn(double(i), a.step)));
  }
}

void cuda_arange(const Tensor& out, RangeArgs a) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  TT_DISPATCH_NUMERIC(out.dtype(), "arange", [&] {
    const bool exact = std::is_integral_v<scalar_t> && a.integral;
    arange_kernel<scalar_t><<<grid_for(n), kThreads, 0, stream>>>(n, out.data<scalar_t>(), a, exact);
  });
  TT_CUDA_KERNEL_CHECK();
}

// out: (n,) <- start + i * step for the first half, end - (n - 1 - i) * step for the rest
template <class T>
__global__ void linspace_kernel(int64_t n, T* out, double start, double end, double step, int64_t half) {
  TT_GRID_STRIDE(i, n) {
    const double v = i < half ? __dadd_rn(start, __dmul_rn(step, double(i)))
                              : __dsub_rn(end, __dmul_rn(step, double(n - 1 - i)));
    out[i] = cast_from_double<T>(v);
  }
}

void cuda_linspace(const Tensor& out, double start, double end) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const double step = n > 1 ? (end - start) / double(n - 1) : 0.0;
  const int64_t half = n == 1 ? 1 : n / 2;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  TT_DISPATCH_NUMERIC(out.dtype(), "linspace", [&] {
    linspace_kernel<scalar_t><<<grid_for(n), kThreads, 0, stream>>>(n, out.data<scalar_t>(), start, end, step, half);
  });
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, triu_tril, arange, linspace)

}  // namespace tt::cuda
