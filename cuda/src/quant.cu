// CUDA kernels on packed llama.cpp blocks: the matvec (decode) and row dequantization (the op
// layer runs large batches as dequantized tiles + cuBLAS GEMM). Block formats and their values
// come from tinytorch/quant_math.h, shared with the CPU kernels.
//
// Matvec: a warp per weight row; lane l decodes the row's 32-value sub-blocks l, l + 32, ...
// (a warp reads 32 consecutive sub-blocks, one contiguous stretch of the row), multiplies them
// by up to 8 input rows at once (staged in shared memory as float32) and the warp sums its
// lanes. float32 accumulation throughout.
#include <cuda_fp16.h>
#include <climits>
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/quant.h"
#include "tinytorch/quant_math.h"

namespace tt::cuda {
namespace {

// 8 warps (rows) per block share each staged chunk of x, so x is read from L2 once per 8 weight rows.
constexpr int kWarpsPerBlock = 8;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(Half v) { return __half2float(__ushort_as_half(v.bits)); }
__device__ __forceinline__ float to_float(BFloat16 v) { return __uint_as_float(static_cast<uint32_t>(v.bits) << 16); }

// Input values staged per chunk: 32 sub-blocks (one per lane), each padded to 33 floats so the
// 32 lanes reading value i of their own sub-block hit 32 different banks.
constexpr int kChunkSubs = 32, kPad = 33;

// x: (R, K) rows K apart, w: (N, row) -> out: (R, N) rows N apart (one group of input rows).
// The block's warps share each chunk of x, converted to float32 once into shared memory with
// coalesced loads; lane l then decodes sub-block l of the chunk in its warp's weight row.
template <class Fmt, class T, int R>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    matvec_kernel(const T* __restrict__ x, const uint8_t* __restrict__ w, T* __restrict__ out, int64_t N, int64_t K,
                  int64_t row) {
  __shared__ float xs[R][kChunkSubs * kPad];
  int lane = threadIdx.x & 31;
  int64_t n = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  bool active = n < N;  // inactive warps still take part in staging and barriers
  constexpr int kSub = Fmt::kValues / 32;  // 32-value sub-blocks per block
  const uint8_t* wr = w + (active ? n : 0) * row;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  int64_t subs = K / 32;
  for (int64_t c0 = 0; c0 < subs; c0 += kChunkSubs) {
    int cs = static_cast<int>(subs - c0 < kChunkSubs ? subs - c0 : kChunkSubs);
    int vals = cs * 32;
    __syncthreads();  // the previous chunk is no longer read
    for (int e = threadIdx.x; e < R * vals; e += blockDim.x) {
      int r = e / vals, v = e - r * vals;
      xs[r][(v >> 5) * kPad + (v & 31)] = to_float(x[r * K + c0 * 32 + v]);
    }
    __syncthreads();
    if (active && lane < cs) {
      int64_t s = c0 + lane;
      Fmt::for_each_value(wr + (s / kSub) * Fmt::kBytes, static_cast<int>(s % kSub), [&](int i, float v) {
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += v * xs[r][lane * kPad + i];
      });
    }
  }
  if (!active) return;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float v = warp_allreduce(acc[r], [](float a, float b) { return a + b; });
    if (lane == 0) out[r * N + n] = T(v);
  }
}

// w: (N, row) -> out: (N, K), a thread per 32-value sub-block.
template <class Fmt, class T>
__global__ void dequantize_kernel(const uint8_t* __restrict__ w, T* __restrict__ out, int64_t N, int64_t K,
                                  int64_t row) {
  constexpr int kSub = Fmt::kValues / 32;
  int64_t subs = K / 32;
  TT_GRID_STRIDE(e, N * subs) {
    int64_t n = e / subs, s = e - n * subs;
    T* dst = out + n * K + s * 32;
    Fmt::for_each_value(w + n * row + (s / kSub) * Fmt::kBytes, static_cast<int>(s % kSub),
                        [&](int i, float v) { dst[i] = T(v); });
  }
}

template <class Fmt, class T, int R>
void launch_matvec(const T* x, const uint8_t* w, T* out, int64_t N, int64_t K, int64_t row, cudaStream_t stream) {
  unsigned blocks = static_cast<unsigned>((N + kWarpsPerBlock - 1) / kWarpsPerBlock);
  matvec_kernel<Fmt, T, R><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(x, w, out, N, K, row);
  TT_CUDA_KERNEL_CHECK();
}

// x: (M, K), w: (N, row) -> out: (M, N); input rows in groups of 8, 4, 2, 1.
void cuda_quant_matvec(const Tensor& x, const Tensor& w, int64_t qtype, const Tensor& out) {
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  int64_t M = x.size(0), K = x.size(1), N = w.size(0), row = w.size(1);
  TT_CHECK((N + kWarpsPerBlock - 1) / kWarpsPerBlock <= INT32_MAX, "quant_matvec: too many weight rows ", N);
  const uint8_t* wp = w.data<uint8_t>();
  TT_DISPATCH_FLOATING(x.dtype(), "quant_matvec", [&] {
    if constexpr (!std::is_same_v<scalar_t, double>) {
      quant::dispatch_format(qtype, [&](auto fmt) {
        using Fmt = decltype(fmt);
        const scalar_t* xp = x.data<scalar_t>();
        scalar_t* op = out.data<scalar_t>();
        for (int64_t m = 0; m < M;) {
          int64_t left = M - m;
          const scalar_t* xm = xp + m * K;
          scalar_t* om = op + m * N;
          if (left >= 8) launch_matvec<Fmt, scalar_t, 8>(xm, wp, om, N, K, row, stream), m += 8;
          else if (left >= 4) launch_matvec<Fmt, scalar_t, 4>(xm, wp, om, N, K, row, stream), m += 4;
          else if (left >= 2) launch_matvec<Fmt, scalar_t, 2>(xm, wp, om, N, K, row, stream), m += 2;
          else launch_matvec<Fmt, scalar_t, 1>(xm, wp, om, N, K, row, stream), m += 1;
        }
      });
    } else {
      throw_unsupported_dtype("quant_matvec", x.dtype());
    }
  });
}

void cuda_quant_dequantize(const Tensor& w, int64_t qtype, const Tensor& out) {
  DeviceGuard guard(w.device());
  cudaStream_t stream = current_stream(w.device().index);
  int64_t N = w.size(0), row = w.size(1), K = out.size(1);
  TT_DISPATCH_FLOATING(out.dtype(), "quant_dequantize", [&] {
    quant::dispatch_format(qtype, [&](auto fmt) {
      using Fmt = decltype(fmt);
      dequantize_kernel<Fmt, scalar_t><<<grid_for(N * (K / 32)), kThreads, 0, stream>>>(
          w.data<uint8_t>(), out.data<scalar_t>(), N, K, row);
      TT_CUDA_KERNEL_CHECK();
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(quant_matvec, CUDA, cuda_quant_matvec)
TT_REGISTER_KERNEL(quant_dequantize, CUDA, cuda_quant_dequantize)

}  // namespace tt::cuda
