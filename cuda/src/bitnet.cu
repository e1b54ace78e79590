// CUDA kernel of BitNet b1.58 inference: int8 activations times ternary weights packed 2 bits per
// value (the plane layout of kernels/bitnet.h, the CPU kernel's), summed exactly in int32, so the
// result is bitwise the CPU kernel's.
//
// Two launches:
// 1. interleave: the activations (float32 holding int8 values) become int8 with the four planes
//    interleaved, xi[m][4j + p] = q[m][p*K4 + j] (zero past K), so the four activations that
//    byte j of a weight row multiplies are one int32.
// 2. matmul: a warp per weight row (8 rows a block), R tokens a block (grid.y over token groups).
//    Each lane reads 4 weight bytes at once (one uint32; a byte at a time where rows are not
//    4-byte aligned), turns each byte into four signed bytes (codes - 1, one __vsub4) and
//    multiplies them with the token's int32 of activations by __dp4a. The weight row is streamed
//    once for the R tokens (decode is memory bound: 2 bits read per weight instead of 32).
#include <climits>
#include <cstdint>
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/bitnet.h"

namespace tt::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

// q: (M, K) float32 int8 values -> xi: (M, 4*K4) int8, xi[m][4j + p] = q[m][p*K4 + j] (0 past K).
// Values outside [-128, 127] saturate (the contract is int8 values; absmax quantization gives them).
__global__ void interleave_int8_kernel(const float* __restrict__ q, int8_t* __restrict__ xi, int64_t M, int64_t K,
                                       int64_t K4) {
  TT_GRID_STRIDE(e, M * 4 * K4) {
    int64_t m = e / (4 * K4), r = e - m * 4 * K4;
    int64_t j = r >> 2, p = r & 3, k = p * K4 + j;
    int v = k < K ? __float2int_rn(q[m * K + k]) : 0;
    xi[e] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
  }
}

// One packed byte (codes t+1 in bits 2p..2p+1) -> four signed bytes t_p in {-1, 0, 1}, byte p = plane p.
__device__ __forceinline__ int ternary_char4(uint32_t b) {
  uint32_t codes = (b & 0x3u) | ((b & 0xCu) << 6) | ((b & 0x30u) << 12) | ((b & 0xC0u) << 18);
  return static_cast<int>(__vsub4(codes, 0x01010101u));
}

// xi: (M, K4) int32 (interleaved int8 activations), w: (N, K4) uint8, mult: (M) -> out: (M, N).
// Vec: rows read as uint32 (K4 % 4 == 0 and w 4-byte aligned) with int4 activation loads.
template <int R, bool Vec>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    ternary_matmul_kernel(const int* __restrict__ xi, const uint8_t* __restrict__ w, const float* __restrict__ mult,
                          float* __restrict__ out, int64_t M, int64_t N, int64_t K4) {
  int lane = threadIdx.x & 31;
  int64_t n = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (n >= N) return;  // no barriers below: a whole warp leaves
  int64_t m0 = static_cast<int64_t>(blockIdx.y) * R;
  int rows = static_cast<int>(M - m0 < R ? M - m0 : R);
  const uint8_t* row = w + n * K4;
  int acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0;
  if constexpr (Vec) {
    const uint32_t* row32 = reinterpret_cast<const uint32_t*>(row);
    for (int64_t v = lane; v < K4 / 4; v += 32) {
      uint32_t bytes = __ldg(row32 + v);
      int t0 = ternary_char4(bytes & 0xFFu), t1 = ternary_char4((bytes >> 8) & 0xFFu);
      int t2 = ternary_char4((bytes >> 16) & 0xFFu), t3 = ternary_char4(bytes >> 24);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r < rows) {
          int4 x = __ldg(reinterpret_cast<const int4*>(xi + (m0 + r) * K4) + v);
          acc[r] = __dp4a(t3, x.w, __dp4a(t2, x.z, __dp4a(t1, x.y, __dp4a(t0, x.x, acc[r]))));
        }
      }
    }
  } else {
    for (int64_t j = lane; j < K4; j += 32) {
      int t = ternary_char4(row[j]);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < rows) acc[r] = __dp4a(t, __ldg(xi + (m0 + r) * K4 + j), acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    int s = warp_allreduce(acc[r], [](int a, int b) { return a + b; });
    if (lane == 0 && r < rows) out[(m0 + r) * N + n] = static_cast<float>(s) * mult[m0 + r];
  }
}

template <int R, bool Vec>
void launch_ternary(const int* xi, const uint8_t* w, const float* mult, float* out, int64_t M, int64_t N, int64_t K4,
                    cudaStream_t stream) {
  dim3 grid(static_cast<unsigned>((N + kWarpsPerBlock - 1) / kWarpsPerBlock), static_cast<unsigned>((M + R - 1) / R));
  ternary_matmul_kernel<R, Vec><<<grid, kWarpsPerBlock * 32, 0, stream>>>(xi, w, mult, out, M, N, K4);
  TT_CUDA_KERNEL_CHECK();
}

template <bool Vec>
void launch_ternary_tokens(const int* xi, const uint8_t* w, const float* mult, float* out, int64_t M, int64_t N,
                           int64_t K4, cudaStream_t stream) {
  if (M >= 4) launch_ternary<4, Vec>(xi, w, mult, out, M, N, K4, stream);
  else if (M >= 2) launch_ternary<2, Vec>(xi, w, mult, out, M, N, K4, stream);
  else launch_ternary<1, Vec>(xi, w, mult, out, M, N, K4, stream);
}

// q: (M, K) float32 int8 values, w: (N, K4) uint8, mult: (M) -> out: (M, N) (contiguous, checked by the op layer)
void cuda_bitnet_matmul(const Tensor& q, const Tensor& w, const Tensor& mult, const Tensor& out) {
  DeviceGuard guard(q.device());
  cudaStream_t stream = current_stream(q.device().index);
  const int64_t M = q.size(0), K = q.size(1), N = w.size(0), K4 = w.size(1);
  TT_CHECK((N + kWarpsPerBlock - 1) / kWarpsPerBlock <= INT32_MAX && (M + 3) / 4 <= 65535,
           "bitnet_matmul: too many weight rows (", N, ") or tokens (", M, ") for one launch");
  // interleaved int8 activations, K4 int32 per token (a uint8 tensor on the caching allocator)
  Tensor xi = Tensor::empty({M, 4 * K4}, DType::UInt8, q.device());
  interleave_int8_kernel<<<grid_for(M * 4 * K4), kThreads, 0, stream>>>(
      q.data<float>(), reinterpret_cast<int8_t*>(xi.data<uint8_t>()), M, K, K4);
  TT_CUDA_KERNEL_CHECK();
  const int* xp = reinterpret_cast<const int*>(xi.data<uint8_t>());
  const uint8_t* wp = w.data<uint8_t>();
  bool vec = K4 % 4 == 0 && reinterpret_cast<uintptr_t>(wp) % 4 == 0;
  if (vec) launch_ternary_tokens<true>(xp, wp, mult.data<float>(), out.data<float>(), M, N, K4, stream);
  else launch_ternary_tokens<false>(xp, wp, mult.data<float>(), out.data<float>(), M, N, K4, stream);
}

}  // namespace

TT_REGISTER_KERNEL(bitnet_matmul, CUDA, cuda_bitnet_matmul)

}  // namespace tt::cuda
