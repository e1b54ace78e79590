// Tensor-core FlashAttention-2 for float16/bfloat16 (mma.sync.m16n8k16, float32 accumulation).
// Tiles come into shared memory by cp.async (rows padded by 16 bytes: conflict-free ldmatrix);
// head dims are padded with zeros to D = 64 or 128.
// Forward: a block takes 64 query rows (4 warps x 16) of one (batch, head) and walks the key
// tiles of 64 with an online softmax; P stays in registers (its accumulator fragments are the
// A operand of P V). Backward: a block takes 64 keys (4 warps x 16) of one (batch, kv head) and
// walks the query tiles of every head of its group: S^T and dP^T per warp, dV += P^T dO and
// dK += dS^T Q in registers, dS through shared memory into dQ += dS K, added to a float32 dQ
// with atomics (then scaled and rounded by a last kernel).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include "attention_mma.h"
#include "tinytorch/cuda/common.h"

namespace tt::cuda {
namespace {

constexpr int kThreads = 128;
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
// 16 bytes global -> shared; zero-filled when !pred.
__device__ __forceinline__ void cp_async16(uint16_t* dst, const uint16_t* src, bool pred) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

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
// Two floats -> one register of two 16-bit values (lo in the low half: the lower column).
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

// dst (R, D) with row stride D + 8 <- rows [r0, r0 + R) of src (L, E) row-major; rows >= L and
// columns >= E are zero. E is a multiple of 8.
template <int R, int D>
__device__ __forceinline__ void load_tile(uint16_t* dst, const uint16_t* src, int64_t r0, int64_t L, int64_t E) {
  constexpr int kChunks = D / 8;
  for (int c = threadIdx.x; c < R * kChunks; c += kThreads) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    const bool ok = r0 + r < L && col < E;
    cp_async16(dst + r * (D + 8) + col, ok ? src + (r0 + r) * E + col : src, ok);
  }
}

__device__ __forceinline__ float mask_at(const AttentionParams& p, const float* mask, int64_t b, int64_t h, int64_t i,
                                         int64_t j) {
  return mask[b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2] + j * p.mask_stride[3]];
}
__device__ __forceinline__ float keep_scale(const AttentionParams& p, int64_t bh, int64_t i, int64_t j) {
  if (p.dropout_p <= 0) return 1.f;
  if (p.dropout_p >= 1) return 0.f;
  return attention_keep(p, bh, i, j) ? float(1.0 / (1.0 - p.dropout_p)) : 0.f;
}

// ------------------------------------------------------------------------------------ forward
// grid (ceil(Lq / 64), B * H); q: (B, H, Lq, E), k, v: (B, Hkv, Lk, E) -> out (B, H, Lq, E), lse (B, H, Lq)
template <bool kBf16, int D>
__global__ void __launch_bounds__(kThreads) attention_forward_mma_kernel(AttentionParams p, const uint16_t* q,
                                                                         const uint16_t* k, const uint16_t* v,
                                                                         const float* mask, uint16_t* out,
                                                                         float* lse) {
  constexpr int BR = 64, BC = 64, LD = D + 8;
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t *Qs = smem, *Ks = Qs + BR * LD, *Vs = Ks + BC * LD;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, bhk = b * p.Hkv + h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;  // the longest causal rows first
  const uint16_t *qb = q + bh * p.Lq * p.E, *kb = k + bhk * p.Lk * p.E, *vb = v + bhk * p.Lk * p.E;
  load_tile<BR, D>(Qs, qb, q0, p.Lq, p.E);

  float o[D / 8][4] = {};
  float m_r[2] = {-INFINITY, -INFINITY}, l_r[2] = {0.f, 0.f};
  const float sl2 = float(p.scale) * kLog2e;
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int64_t row_base = q0 + warp * 16 + g;
  for (int64_t k0 = 0; k0 < kend; k0 += BC) {
    __syncthreads();  // the previous tile is no longer read
    load_tile<BC, D>(Ks, kb, k0, p.Lk, p.E);
    load_tile<BC, D>(Vs, vb, k0, p.Lk, p.E);
    cp_async_wait_all();
    __syncthreads();
    float s[BC / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[4];
      ldsm_x4(a, Qs + (warp * 16 + (lane & 15)) * LD + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int nb = 0; nb < BC / 16; ++nb) {
        uint32_t bb[4];
        ldsm_x4(bb, Ks + (nb * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + kk * 16 + ((lane >> 3) & 1) * 8);
        mma16816<kBf16>(s[2 * nb], a, bb[0], bb[1]);
        mma16816<kBf16>(s[2 * nb + 1], a, bb[2], bb[3]);
      }
    }
    // scores in log2 units, masked; row maxima over the quad of lanes sharing a row
    float mx[2] = {m_r[0], m_r[1]};
#pragma unroll
    for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t row = row_base + (e >> 1) * 8, col = k0 + nb * 8 + t4 * 2 + (e & 1);
        float x = s[nb][e] * sl2;
        if (col >= p.Lk || (p.causal && col > row)) x = -INFINITY;
        else if (mask && row < p.Lq) x += mask_at(p, mask, b, h, row, col) * kLog2e;
        s[nb][e] = x;
        mx[e >> 1] = fmaxf(mx[e >> 1], x);
      }
    float corr[2], m_use[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
      m_use[r] = mx[r] == -INFINITY ? 0.f : mx[r];  // a row with no key yet: P = 0, no NaN
      corr[r] = exp2f(m_r[r] - m_use[r]);
      m_r[r] = mx[r];
      l_r[r] *= corr[r];
    }
#pragma unroll
    for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float pr = exp2f(s[nb][e] - m_use[e >> 1]);
        l_r[e >> 1] += pr;
        s[nb][e] = pr;
      }
    if (p.dropout_p > 0) {
#pragma unroll
      for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t row = row_base + (e >> 1) * 8, col = k0 + nb * 8 + t4 * 2 + (e & 1);
          if (row < p.Lq && col < p.Lk) s[nb][e] *= keep_scale(p, bh, row, col);
        }
    }
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      o[d][0] *= corr[0], o[d][1] *= corr[0];
      o[d][2] *= corr[1], o[d][3] *= corr[1];
    }
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      const uint32_t a[4] = {pack2<kBf16>(s[2 * kk][0], s[2 * kk][1]), pack2<kBf16>(s[2 * kk][2], s[2 * kk][3]),
                             pack2<kBf16>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                             pack2<kBf16>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int nd = 0; nd < D / 16; ++nd) {
        uint32_t bb[4];
        ldsm_x4_t(bb, Vs + (kk * 16 + (lane & 15)) * LD + nd * 16 + (lane >> 4) * 8);
        mma16816<kBf16>(o[2 * nd], a, bb[0], bb[1]);
        mma16816<kBf16>(o[2 * nd + 1], a, bb[2], bb[3]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l_r[r] += __shfl_xor_sync(0xffffffffu, l_r[r], 1);
    l_r[r] += __shfl_xor_sync(0xffffffffu, l_r[r], 2);
    const int64_t row = row_base + r * 8;
    if (row >= p.Lq) continue;
    const float inv = l_r[r] > 0 ? 1.f / l_r[r] : 0.f;
    uint16_t* orow = out + (bh * p.Lq + row) * p.E;
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      const int col = d * 8 + t4 * 2;
      if (col < p.E)
        *reinterpret_cast<uint32_t*>(orow + col) = pack2<kBf16>(o[d][2 * r] * inv, o[d][2 * r + 1] * inv);
    }
    if (t4 == 0) lse[bh * p.Lq + row] = l_r[r] > 0 ? m_r[r] / kLog2e + logf(l_r[r]) : -INFINITY;
  }
}

// ----------------------------------------------------------------------------------- backward
// grid (ceil(Lk / 64), B * Hkv). dq_acc: (B, H, Lq, E) float32, zeroed; gk, gv: (B, Hkv, Lk, E).
template <bool kBf16, int D, int BR>
__global__ void __launch_bounds__(kThreads) attention_backward_mma_kernel(
    AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v, const uint16_t* gout,
    const float* mask, const float* lse, const float* dvec, float* dq_acc, uint16_t* gk, uint16_t* gv) {
  constexpr int BC = 64, LD = D + 8, LDS = BC + 8;
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t *Ks = smem, *Vs = Ks + BC * LD, *Qs = Vs + BC * LD, *Gs = Qs + BR * LD, *dSs = Gs + BR * LD;
  float* lse_s = reinterpret_cast<float*>(dSs + BR * LDS);
  float* d_s = lse_s + BR;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bhk = blockIdx.y, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const int64_t k0 = int64_t(blockIdx.x) * BC;
  load_tile<BC, D>(Ks, k + bhk * p.Lk * p.E, k0, p.Lk, p.E);
  load_tile<BC, D>(Vs, v + bhk * p.Lk * p.E, k0, p.Lk, p.E);
  float dk[D / 8][4] = {}, dv[D / 8][4] = {};
  const float scale = float(p.scale);
  const int64_t key_base = k0 + warp * 16 + g;
  for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    const int64_t bh = b * p.H + h;
    for (int64_t i0 = p.causal ? k0 / BR * BR : 0; i0 < p.Lq; i0 += BR) {
      __syncthreads();  // Qs, Gs, dSs of the previous tile are no longer read
      load_tile<BR, D>(Qs, q + bh * p.Lq * p.E, i0, p.Lq, p.E);
      load_tile<BR, D>(Gs, gout + bh * p.Lq * p.E, i0, p.Lq, p.E);
      for (int r = threadIdx.x; r < BR; r += kThreads) {
        const bool ok = i0 + r < p.Lq;
        lse_s[r] = ok ? lse[bh * p.Lq + i0 + r] : -INFINITY;
        d_s[r] = ok ? dvec[bh * p.Lq + i0 + r] : 0.f;
      }
      cp_async_wait_all();
      __syncthreads();
      float st[BR / 8][4] = {}, dpt[BR / 8][4] = {};  // S^T, dP^T: (16 keys of this warp, BR queries)
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t ak[4], av[4];
        ldsm_x4(ak, Ks + (warp * 16 + (lane & 15)) * LD + kk * 16 + (lane >> 4) * 8);
        ldsm_x4(av, Vs + (warp * 16 + (lane & 15)) * LD + kk * 16 + (lane >> 4) * 8);
#pragma unroll
        for (int nb = 0; nb < BR / 16; ++nb) {
          const int off = (nb * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + kk * 16 + ((lane >> 3) & 1) * 8;
          uint32_t bq[4], bg[4];
          ldsm_x4(bq, Qs + off);
          ldsm_x4(bg, Gs + off);
          mma16816<kBf16>(st[2 * nb], ak, bq[0], bq[1]);
          mma16816<kBf16>(st[2 * nb + 1], ak, bq[2], bq[3]);
          mma16816<kBf16>(dpt[2 * nb], av, bg[0], bg[1]);
          mma16816<kBf16>(dpt[2 * nb + 1], av, bg[2], bg[3]);
        }
      }
      // element (key = key_base + (e >> 1) * 8, query = i0 + nb * 8 + t4 * 2 + (e & 1))
#pragma unroll
      for (int nb = 0; nb < BR / 8; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int qi = nb * 8 + t4 * 2 + (e & 1);
          const int64_t key = key_base + (e >> 1) * 8, row = i0 + qi;
          const float L = lse_s[qi];
          float pr = 0.f, kd = 1.f;
          if (key < p.Lk && L != -INFINITY && !(p.causal && key > row)) {
            float x = st[nb][e] * scale;
            if (mask) x += mask_at(p, mask, b, h, row, key);
            pr = __expf(x - L);
            if (p.dropout_p > 0) kd = keep_scale(p, bh, row, key);
          }
          const float ds = pr * (dpt[nb][e] * kd - d_s[qi]);
          st[nb][e] = pr * kd;
          dpt[nb][e] = ds;
          dSs[qi * LDS + warp * 16 + g + (e >> 1) * 8] = to16<kBf16>(ds);
        }
      // dV += P^T dO, dK += dS^T Q: A from the registers above, B from Gs / Qs (transposed loads)
#pragma unroll
      for (int kk = 0; kk < BR / 16; ++kk) {
        const uint32_t ap[4] = {pack2<kBf16>(st[2 * kk][0], st[2 * kk][1]),
                                pack2<kBf16>(st[2 * kk][2], st[2 * kk][3]),
                                pack2<kBf16>(st[2 * kk + 1][0], st[2 * kk + 1][1]),
                                pack2<kBf16>(st[2 * kk + 1][2], st[2 * kk + 1][3])};
        const uint32_t as[4] = {pack2<kBf16>(dpt[2 * kk][0], dpt[2 * kk][1]),
                                pack2<kBf16>(dpt[2 * kk][2], dpt[2 * kk][3]),
                                pack2<kBf16>(dpt[2 * kk + 1][0], dpt[2 * kk + 1][1]),
                                pack2<kBf16>(dpt[2 * kk + 1][2], dpt[2 * kk + 1][3])};
#pragma unroll
        for (int nd = 0; nd < D / 16; ++nd) {
          const int off = (kk * 16 + (lane & 15)) * LD + nd * 16 + (lane >> 4) * 8;
          uint32_t bg[4], bq[4];
          ldsm_x4_t(bg, Gs + off);
          ldsm_x4_t(bq, Qs + off);
          mma16816<kBf16>(dv[2 * nd], ap, bg[0], bg[1]);
          mma16816<kBf16>(dv[2 * nd + 1], ap, bg[2], bg[3]);
          mma16816<kBf16>(dk[2 * nd], as, bq[0], bq[1]);
          mma16816<kBf16>(dk[2 * nd + 1], as, bq[2], bq[3]);
        }
      }
      __syncthreads();  // dSs complete
      // dQ (BR, D) += dS (BR, BC) K (BC, D) in (16 rows, 16 cols) units spread over the warps
      for (int u = warp; u < (BR / 16) * (D / 16); u += kThreads / 32) {
        const int mb = u / (D / 16), nd = u % (D / 16);
        float acc[2][4] = {};
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk) {
          uint32_t a[4], bb[4];
          ldsm_x4(a, dSs + (mb * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
          ldsm_x4_t(bb, Ks + (kk * 16 + (lane & 15)) * LD + nd * 16 + (lane >> 4) * 8);
          mma16816<kBf16>(acc[0], a, bb[0], bb[1]);
          mma16816<kBf16>(acc[1], a, bb[2], bb[3]);
        }
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int64_t row = i0 + mb * 16 + g + (e >> 1) * 8;
            const int col = nd * 16 + j * 8 + t4 * 2 + (e & 1);
            if (row < p.Lq && col < p.E) atomicAdd(dq_acc + (bh * p.Lq + row) * p.E + col, acc[j][e]);
          }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t key = key_base + r * 8;
    if (key >= p.Lk) continue;
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      const int col = d * 8 + t4 * 2;
      if (col >= p.E) continue;
      *reinterpret_cast<uint32_t*>(gk + (bhk * p.Lk + key) * p.E + col) =
          pack2<kBf16>(dk[d][2 * r] * scale, dk[d][2 * r + 1] * scale);
      *reinterpret_cast<uint32_t*>(gv + (bhk * p.Lk + key) * p.E + col) = pack2<kBf16>(dv[d][2 * r], dv[d][2 * r + 1]);
    }
  }
}

// gq[i] = dq_acc[i] * scale, rounded
template <bool kBf16>
__global__ void attention_dq_finish(const float* dq_acc, uint16_t* gq, float scale, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    gq[i] = to16<kBf16>(dq_acc[i] * scale);
}

bool aligned16(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; }

// The padded head dim for E, or 0 where these kernels don't apply.
int mma_head_dim(const AttentionParams& p, const Tensor& q) {
  if (q.dtype() != DType::Float16 && q.dtype() != DType::BFloat16) return 0;
  if (p.E != p.Ev || p.E % 8 != 0 || p.E > 128) return 0;
  return p.E <= 64 ? 64 : 128;
}

template <class Kernel>
void set_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024) TT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

template <bool kBf16, int D>
void launch_forward(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                    const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const size_t bytes = size_t(3) * 64 * (D + 8) * sizeof(uint16_t);
  auto kernel = attention_forward_mma_kernel<kBf16, D>;
  set_smem(kernel, bytes);
  dim3 grid(unsigned((p.Lq + 63) / 64), unsigned(p.B * p.H));
  kernel<<<grid, kThreads, bytes, stream>>>(p, static_cast<const uint16_t*>(q.data_ptr()),
                                            static_cast<const uint16_t*>(k.data_ptr()),
                                            static_cast<const uint16_t*>(v.data_ptr()),
                                            mask.defined() ? mask.data<float>() : nullptr,
                                            static_cast<uint16_t*>(out.data_ptr()), lse.data<float>());
  TT_CUDA_KERNEL_CHECK();
}

template <bool kBf16, int D>
void launch_backward(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& mask, const Tensor& lse, const Tensor& dvec, const Tensor& gq, const Tensor& gk,
                     const Tensor& gv, cudaStream_t stream) {
  constexpr int BR = D <= 64 ? 64 : 32;
  const size_t bytes = (size_t(2) * 64 * (D + 8) + size_t(2) * BR * (D + 8) + size_t(BR) * 72) * sizeof(uint16_t) +
                       size_t(2) * BR * sizeof(float);
  Tensor dq_acc = Tensor::empty(q.shape(), DType::Float32, q.device());
  TT_CUDA_CHECK(cudaMemsetAsync(dq_acc.data_ptr(), 0, dq_acc.numel() * sizeof(float), stream));
  auto kernel = attention_backward_mma_kernel<kBf16, D, BR>;
  set_smem(kernel, bytes);
  dim3 grid(unsigned((p.Lk + 63) / 64), unsigned(p.B * p.Hkv));
  auto u16 = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data_ptr()); };
  kernel<<<grid, kThreads, bytes, stream>>>(p, u16(q), u16(k), u16(v), u16(gout),
                                            mask.defined() ? mask.data<float>() : nullptr, lse.data<float>(),
                                            dvec.data<float>(), dq_acc.data<float>(),
                                            static_cast<uint16_t*>(gk.data_ptr()),
                                            static_cast<uint16_t*>(gv.data_ptr()));
  TT_CUDA_KERNEL_CHECK();
  attention_dq_finish<kBf16><<<grid_for(gq.numel()), 256, 0, stream>>>(
      dq_acc.data<float>(), static_cast<uint16_t*>(gq.data_ptr()), float(p.scale), gq.numel());
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace

bool attention_forward_mma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const int D = mma_head_dim(p, q);
  if (!D || !aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(out)) return false;
  const bool bf16 = q.dtype() == DType::BFloat16;
  if (bf16) (D == 64 ? launch_forward<true, 64> : launch_forward<true, 128>)(p, q, k, v, mask, out, lse, stream);
  else (D == 64 ? launch_forward<false, 64> : launch_forward<false, 128>)(p, q, k, v, mask, out, lse, stream);
  return true;
}

bool attention_backward_mma(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                            const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream) {
  const int D = mma_head_dim(p, q);
  if (!D || !aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(gout) || !aligned16(gk) ||
      !aligned16(gv))
    return false;
  const bool bf16 = q.dtype() == DType::BFloat16;
  if (bf16)
    (D == 64 ? launch_backward<true, 64> : launch_backward<true, 128>)(p, gout, q, k, v, mask, lse, dvec, gq, gk, gv,
                                                                       stream);
  else
    (D == 64 ? launch_backward<false, 64> : launch_backward<false, 128>)(p, gout, q, k, v, mask, lse, dvec, gq, gk,
                                                                         gv, stream);
  return true;
}

}  // namespace tt::cuda
