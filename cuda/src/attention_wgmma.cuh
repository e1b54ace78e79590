#pragma once
// Hopper (sm_90a) FlashAttention forward for float16/bfloat16, head dims 64 and 128, on warpgroup
// MMA (wgmma.cuh). A block takes 64 kWG query rows of one (batch, head): warpgroup w owns rows
// 64w..64w+63 and walks the key tiles of BC with an online softmax in log2 units. S = Q K^T reads
// both operands from shared memory (K-major), P stays in registers as the A operand of P V, and V
// is read MN-major (no transpose anywhere). K and V tiles are double buffered with cp.async, the
// next tile's loads in flight while this one is multiplied.
#include "attention_mma.cuh"
#include "wgmma.cuh"

namespace tt::cuda::wg {

using mma::fast_exp2;
using mma::kLog2e;
using mma::pack2;

// The accumulator fragment s (64 x N) -> the register A fragments of its 16-column slices: slice kk
// is column blocks 2 kk and 2 kk + 1, packed to 16-bit pairs (the m16n8k16 A layout).
template <bool kBf16, int N>
__device__ __forceinline__ void to_a(uint32_t (&a)[N / 16][4], const float (&s)[N / 2]) {
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) {
    a[kk][0] = pack2<kBf16>(s[8 * kk + 0], s[8 * kk + 1]);
    a[kk][1] = pack2<kBf16>(s[8 * kk + 2], s[8 * kk + 3]);
    a[kk][2] = pack2<kBf16>(s[8 * kk + 4], s[8 * kk + 5]);
    a[kk][3] = pack2<kBf16>(s[8 * kk + 6], s[8 * kk + 7]);
  }
}

// The first 1024-byte-aligned address of the dynamic shared memory (kernels ask 1024 bytes more).
__device__ __forceinline__ uint32_t smem_base(const void* smem) { return (smem_u32(smem) + 1023) & ~1023u; }

template <int D, int kWG, int BC>
struct ForwardTiles {
  static constexpr int BR = 64 * kWG, kThreads = 128 * kWG;
  static constexpr uint32_t kQBytes = BR * D * 2, kTileBytes = BC * D * 2;
  // Q, then per stage K and V; + 1024 to align the start
  static constexpr size_t kSmemBytes = kQBytes + 4 * kTileBytes + 1024;
};

// grid (ceil(Lq / BR), B * H); q: (B, H, Lq, E), k, v: (B, Hkv, Lk, E) -> out (B, H, Lq, E), lse (B, H, Lq)
template <bool kBf16, int D, int kWG, int BC>
__global__ void __launch_bounds__(128 * kWG, 1)
    attention_forward_wgmma_kernel(AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                   uint16_t* out, float* lse) {
#if TT_HAS_WGMMA
  using Tiles = ForwardTiles<D, kWG, BC>;
  constexpr int BR = Tiles::BR, kThreads = Tiles::kThreads;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Qs = smem_base(smem_raw), KV0 = Qs + Tiles::kQBytes;
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;  // the longest causal rows first
  const int64_t wrow0 = q0 + 64 * wg, row_base = wrow0 + 16 * warp + g;  // row of fragment half r: row_base + 8 r
  const uint16_t *kb = k + p.st.k.row(b, hk, 0), *vb = v + p.st.v.row(b, hk, 0);
  auto k_tile = [&](int t) { return KV0 + (t & 1) * 2 * Tiles::kTileBytes; };
  auto v_tile = [&](int t) { return KV0 + (t & 1) * 2 * Tiles::kTileBytes + Tiles::kTileBytes; };

  load_tile<BR, D, kThreads>(Qs, q + p.st.q.row(b, h, 0), q0, p.Lq, p.E, p.st.q.l, tid);
  load_tile<BC, D, kThreads>(k_tile(0), kb, 0, p.Lk, p.E, p.st.k.l, tid);
  cp_commit();
  load_tile<BC, D, kThreads>(v_tile(0), vb, 0, p.Lk, p.E, p.st.v.l, tid);
  cp_commit();

  float o[D / 2] = {};
  float m_r[2] = {-INFINITY, -INFINITY}, l_r[2] = {0.f, 0.f};
  const float sl2 = float(p.scale) * kLog2e;
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int ntiles = int((kend + BC - 1) / BC);
  for (int t = 0; t < ntiles; ++t) {
    const int64_t k0 = int64_t(t) * BC;
    const bool next = t + 1 < ntiles;
    // in flight: K_t (with Q at t = 0), V_t; prefetch K_{t+1}, then wait for K_t
    if (next) {
      load_tile<BC, D, kThreads>(k_tile(t + 1), kb, k0 + BC, p.Lk, p.E, p.st.k.l, tid);
      cp_commit();
      cp_wait<2>();
    } else {
      cp_wait<1>();
    }
    fence_async_smem();
    __syncthreads();
    // causal: every key of this tile follows every row of this warpgroup (uniform per warpgroup)
    const bool skip = p.causal && k0 > wrow0 + 63;
    uint32_t pa[BC / 16][4];
    float corr[2] = {1.f, 1.f};
    if (!skip) {
      float s[BC / 2];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BC, kBf16>::template ss<0, 0>(s, kmajor<BR>(Qs, 64 * wg, kk), kmajor<BC>(k_tile(t), 0, kk), kk > 0);
      wg_commit();
      wg_wait<0>();
      pin(s);
      // keys past Lk or (causal) after the row score -inf: one uniform branch around the whole
      // tile, so that the interior tiles run none of it (per element, it would be if-converted)
      if (!(k0 + BC <= p.Lk && (!p.causal || k0 + BC - 1 <= wrow0))) {
        const int rel = int(row_base - k0), lim = int(p.Lk - k0 < BC ? p.Lk - k0 : BC);
#pragma unroll
        for (int i = 0; i < BC / 2; ++i) {
          const int col = (i >> 2) * 8 + t4 * 2 + (i & 1);
          if (col >= lim || (p.causal && col > rel + 8 * ((i >> 1) & 1))) s[i] = -INFINITY;
        }
      }
      // online softmax on the raw scores: P = 2^(s sl2 - m sl2), one FFMA and one MUFU each
      float mx[2] = {m_r[0], m_r[1]};
#pragma unroll
      for (int i = 0; i < BC / 2; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], s[i]);
      float neg_m[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        const float m_use = mx[r] == -INFINITY ? 0.f : mx[r];  // a row with no key yet: P = 0, no NaN
        corr[r] = fast_exp2((m_r[r] - m_use) * sl2);
        neg_m[r] = -m_use * sl2;
        m_r[r] = mx[r];
        l_r[r] *= corr[r];
      }
#pragma unroll
      for (int i = 0; i < BC / 2; ++i) {
        const float pr = fast_exp2(fmaf(s[i], sl2, neg_m[(i >> 1) & 1]));
        l_r[(i >> 1) & 1] += pr;
        s[i] = pr;
      }
      to_a<kBf16, BC>(pa, s);
    }
    // prefetch V_{t+1}, then wait for V_t
    if (next) {
      load_tile<BC, D, kThreads>(v_tile(t + 1), vb, k0 + BC, p.Lk, p.E, p.st.v.l, tid);
      cp_commit();
      cp_wait<2>();
    } else {
      cp_wait<0>();
    }
    fence_async_smem();
    __syncthreads();
    if (!skip) {
#pragma unroll
      for (int i = 0; i < D / 2; ++i) o[i] *= corr[(i >> 1) & 1];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BC / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(o, pa[kk], mnmajor<BC>(v_tile(t), kk), 1);
      wg_commit();
      wg_wait<0>();
      pin(o);
      pin(pa);
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = l_r[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const int64_t row = row_base + 8 * r;
    if (row >= p.Lq) continue;
    const float inv = l > 0 ? 1.f / l : 0.f;
    uint16_t* orow = out + p.st.out.row(b, h, row);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      const int col = j * 8 + t4 * 2;
      if (col < p.E)
        *reinterpret_cast<uint32_t*>(orow + col) = pack2<kBf16>(o[4 * j + 2 * r] * inv, o[4 * j + 2 * r + 1] * inv);
    }
    if (t4 == 0) lse[bh * p.Lq + row] = l > 0 ? m_r[r] * float(p.scale) + logf(l) : -INFINITY;
  }
#endif
}

}  // namespace tt::cuda::wg
