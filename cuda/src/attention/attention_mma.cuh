#pragma once
// What the tensor-core attention kernels share (attention_mma_forward.cu, attention_mma_backward.cu):
// ldmatrix / mma.sync m16n8k16 / cp.async wrappers, tile loads into padded shared memory, and
// the mask and dropout lookups. Fragment layouts (PTX ISA, m16n8k16, g = lane / 4, t = lane % 4):
// A (16x16): a0 (g, 2t..2t+1), a1 (g+8, 2t), a2 (g, 2t+8), a3 (g+8, 2t+8); B (16x8): b0 (k 2t, n g),
// b1 (k 2t+8, n g); C (16x8 float): c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1). So a C fragment
// pair (two n-blocks of 8) packed to 16 bits is the A fragment of the next product (P in P V).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include "tinytorch/cuda/common.h"
#include "tinytorch/kernels/attention.h"

namespace tt::cuda::mma {

constexpr int kThreads = 128;  // 4 warps
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const uint16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const uint16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
// 16 (or 4) bytes global -> shared, zero-filled when !pred.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool pred) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async4(void* dst, const void* src, bool pred) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(pred ? 4 : 0));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

template <bool kBf16>
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (kBf16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Two floats -> one register of two 16-bit values (lo = the lower column, in the low half).
template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (kBf16) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
}
template <bool kBf16>
__device__ __forceinline__ uint16_t to16(float x) {
  if constexpr (kBf16) {
    __nv_bfloat16 v = __float2bfloat16_rn(x);
    return *reinterpret_cast<uint16_t*>(&v);
  } else {
    __half v = __float2half_rn(x);
    return *reinterpret_cast<uint16_t*>(&v);
  }
}
// The A fragment of a product whose left operand is the 16 x 16 slice kk of C fragments c.
template <bool kBf16, int N>
__device__ __forceinline__ void c_to_a(uint32_t (&a)[4], const float (&c)[N][4], int kk) {
  a[0] = pack2<kBf16>(c[2 * kk][0], c[2 * kk][1]);
  a[1] = pack2<kBf16>(c[2 * kk][2], c[2 * kk][3]);
  a[2] = pack2<kBf16>(c[2 * kk + 1][0], c[2 * kk + 1][1]);
  a[3] = pack2<kBf16>(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

// Each warp owns WM row blocks of 16 (its rows a_row .. a_row + 16 WM): every B fragment read from
// shared memory feeds WM products, so larger WM means fewer ldmatrix per mma (the kernels are
// bound by shared-memory reads otherwise).

// A fragments of rows [row, row + 16 WM) x KD columns of a row-major tile, kept in registers.
template <int WM, int KD, int LD>
__device__ __forceinline__ void load_a(uint32_t (&a)[WM][KD / 16][4], const uint16_t* tile, int row, int lane) {
#pragma unroll
  for (int m = 0; m < WM; ++m)
#pragma unroll
    for (int kk = 0; kk < KD / 16; ++kk)
      ldsm_x4(a[m][kk], tile + (row + m * 16 + (lane & 15)) * LD + kk * 16 + (lane >> 4) * 8);
}

// acc (16 WM x N) += A @ B^T where B is the (N, KD) row-major tile `b_tile` (S = Q K^T: the B
// operand read without transposing) and A comes from registers (kRegs: a_regs) or from rows
// [a_row, a_row + 16 WM) of `a_tile`.
template <bool kBf16, int WM, int KD, int N, int LD, bool kRegs = false>
__device__ __forceinline__ void gemm_abt(float (&acc)[WM][N / 8][4], const uint32_t (*a_regs)[KD / 16][4],
                                         const uint16_t* a_tile, int a_row, const uint16_t* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < KD / 16; ++kk) {
    uint32_t a[WM][4];
#pragma unroll
    for (int m = 0; m < WM; ++m) {
      if constexpr (kRegs) {
#pragma unroll
        for (int i = 0; i < 4; ++i) a[m][i] = a_regs[m][kk][i];
      } else {
        ldsm_x4(a[m], a_tile + (a_row + m * 16 + (lane & 15)) * LD + kk * 16 + (lane >> 4) * 8);
      }
    }
#pragma unroll
    for (int nb = 0; nb < N / 16; ++nb) {
      uint32_t b[4];
      ldsm_x4(b, b_tile + (nb * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + kk * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
      for (int m = 0; m < WM; ++m) {
        mma16816<kBf16>(acc[m][2 * nb], a[m], b[0], b[1]);
        mma16816<kBf16>(acc[m][2 * nb + 1], a[m], b[2], b[3]);
      }
    }
  }
}

// acc (16 WM x D) += C-fragments c (16 WM x K) @ the (K, D) row-major tile b_tile (P V, dS K, P^T dO).
template <bool kBf16, int WM, int K, int D, int LD>
__device__ __forceinline__ void gemm_cb(float (&acc)[WM][D / 8][4], const float (&c)[WM][K / 8][4],
                                        const uint16_t* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    uint32_t a[WM][4];
#pragma unroll
    for (int m = 0; m < WM; ++m) c_to_a<kBf16>(a[m], c[m], kk);
#pragma unroll
    for (int nd = 0; nd < D / 16; ++nd) {
      uint32_t b[4];
      ldsm_x4_t(b, b_tile + (kk * 16 + (lane & 15)) * LD + nd * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int m = 0; m < WM; ++m) {
        mma16816<kBf16>(acc[m][2 * nd], a[m], b[0], b[1]);
        mma16816<kBf16>(acc[m][2 * nd + 1], a[m], b[2], b[3]);
      }
    }
  }
}

// 2^x by the special-function unit (ex2.approx.ftz: 2^-inf = 0); scores are pre-scaled by
// log2(e) so that softmax's exp is one FFMA and one MUFU.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// dst (R, D), row stride D + 8 <- rows [r0, r0 + R) of src (L, E), rows ld apart, asynchronously;
// rows >= L and columns >= E are zero. E and ld are multiples of 8 and src 16-byte aligned.
template <int R, int D>
__device__ __forceinline__ void load_tile(uint16_t* dst, const uint16_t* src, int64_t r0, int64_t L, int64_t E,
                                          int64_t ld) {
  constexpr int kChunks = D / 8;
  for (int c = threadIdx.x; c < R * kChunks; c += kThreads) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    const bool ok = r0 + r < L && col < E;
    cp_async16(dst + r * (D + 8) + col, ok ? src + (r0 + r) * ld + col : src, ok);
  }
}
// dst[r] <- src[r0 + r] for r < R (0 past n), asynchronously.
template <int R>
__device__ __forceinline__ void load_row_stats(float* dst, const float* src, int64_t r0, int64_t n) {
  for (int r = threadIdx.x; r < R; r += kThreads) cp_async4(dst + r, r0 + r < n ? src + r0 + r : src, r0 + r < n);
}

__device__ __forceinline__ float mask_at(const AttentionParams& p, const float* mask, int64_t b, int64_t h, int64_t i,
                                         int64_t j) {
  return mask[b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2] + j * p.mask_stride[3]];
}
__device__ __forceinline__ float keep_scale(const AttentionParams& p, int64_t bh, int64_t i, int64_t j) {
  if (p.dropout_p >= 1) return 0.f;
  return attention_keep(p, bh, i, j) ? float(1.0 / (1.0 - p.dropout_p)) : 0.f;
}

template <class Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    TT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

}  // namespace tt::cuda::mma
