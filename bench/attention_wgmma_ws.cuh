#pragma once
// EXPERIMENT (bench only, not in the library): the Hopper attention forward with warp
// specialization, as FlashAttention-3 does it. Warpgroup 0 is the producer: one thread loads Q once
// and the K/V tiles through TMA (cp.async.bulk.tensor, 128-byte swizzle: the layout of
// wg::swizzled) into a ring of kStages stages guarded by mbarriers (full: the bytes landed; empty:
// both consumers are done with the stage); warpgroups 1 and 2 (64 query rows each) only compute,
// with no block barrier inside the loop, so one's softmax can run under the other's products. The
// register budget moves to the consumers (setmaxnreg). Promote it into cuda/src once
// bench/attention_wgmma_dev.py (cfg 2) shows it correct and faster. Untested as of 2026-11-27.
#include <cuda.h>
#include "../cuda/src/attention_wgmma.cuh"

namespace tt::cuda::wg::ws {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// Arrives and adds `bytes` to the transaction count the phase waits for (the TMA loads' bytes).
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `phase` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t phase) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(bar),
      "r"(phase)
      : "memory");
}
// Box (64 columns, rows) of a (B, H, L, E) 16-bit operand at (column c0, row, head, batch) -> dst.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int row, int head,
                                         int batch) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(row), "r"(head), "r"(batch)
      : "memory");
}

// Scores sc (64 x BC of this warpgroup, raw) of the key tile at k0 -> probabilities in place, the
// running max m_r / sum l_r updated, corr = the factor for the output so far. Keys past Lk or
// (causal) after the row score -inf, one uniform branch around the tile.
template <int BC>
__device__ __forceinline__ void online_softmax(float (&sc)[BC / 2], float (&m_r)[2], float (&l_r)[2], float (&corr)[2],
                                               const AttentionParams& p, int64_t k0, int64_t wrow0, int64_t row_base,
                                               int t4, float sl2) {
  if (!(k0 + BC <= p.Lk && (!p.causal || k0 + BC - 1 <= wrow0))) {
    const int rel = int(row_base - k0), lim = int(p.Lk - k0 < BC ? p.Lk - k0 : BC);
#pragma unroll
    for (int i = 0; i < BC / 2; ++i) {
      const int col = (i >> 2) * 8 + t4 * 2 + (i & 1);
      if (col >= lim || (p.causal && col > rel + 8 * ((i >> 1) & 1))) sc[i] = -INFINITY;
    }
  }
  float mx[2] = {m_r[0], m_r[1]};
#pragma unroll
  for (int i = 0; i < BC / 2; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], sc[i]);
  float neg_m[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    const float m_use = mx[r] == -INFINITY ? 0.f : mx[r];
    corr[r] = fast_exp2((m_r[r] - m_use) * sl2);
    neg_m[r] = -m_use * sl2;
    m_r[r] = mx[r];
    l_r[r] *= corr[r];
  }
#pragma unroll
  for (int i = 0; i < BC / 2; ++i) {
    const float pr = fast_exp2(fmaf(sc[i], sl2, neg_m[(i >> 1) & 1]));
    l_r[(i >> 1) & 1] += pr;
    sc[i] = pr;
  }
}

template <int D, int BC, int kStages>
struct Tiles {
  static constexpr int BR = 128, kThreads = 384;
  static constexpr uint32_t kQBytes = BR * D * 2, kTileBytes = BC * D * 2;
  static constexpr uint32_t kBarBytes = 8 * (1 + 4 * kStages);
  static constexpr size_t kSmemBytes = kQBytes + 2 * kStages * kTileBytes + kBarBytes + 1024;
};

// The mbarriers of the K/V ring: full (the TMA bytes landed) and empty (both consumers are done).
template <int kStages>
struct Ring {
  uint32_t base;  // q_full, then k_full[kStages], v_full[kStages], k_empty[kStages], v_empty[kStages]
  __device__ uint32_t q_full() const { return base; }
  __device__ uint32_t k_full(int s) const { return base + 8 + 8 * s; }
  __device__ uint32_t v_full(int s) const { return base + 8 + 8 * (kStages + s); }
  __device__ uint32_t k_empty(int s) const { return base + 8 + 8 * (2 * kStages + s); }
  __device__ uint32_t v_empty(int s) const { return base + 8 + 8 * (3 * kStages + s); }
};

// grid (ceil(Lq / 128), B * H), 384 threads; tq, tk, tv: TMA maps of q (B, H, Lq, E), k, v
// (B, Hkv, Lk, E) with boxes of (64 columns, 128 / BC / BC rows) -> out (B, H, Lq, E), lse (B, H, Lq).
// kOverlap: each consumer issues the next tile's S = Q K^T together with this tile's O += P V and
// computes the next softmax while P V runs (FlashAttention-3's intra-warpgroup pipelining).
template <bool kBf16, int D, int BC, int kStages, bool kOverlap>
__global__ void __launch_bounds__(384, 1)
    attention_forward_ws_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                                const __grid_constant__ CUtensorMap tv, AttentionParams p, uint16_t* out, float* lse) {
#if TT_HAS_WGMMA
  using T = Tiles<D, BC, kStages>;
  constexpr int BR = T::BR;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Qs = smem_base(smem_raw), K0 = Qs + T::kQBytes, V0 = K0 + kStages * T::kTileBytes;
  const Ring<kStages> ring{V0 + kStages * T::kTileBytes};
  const int tid = threadIdx.x, wg = tid / 128;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;  // the longest causal rows first
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int ntiles = int((kend + BC - 1) / BC);
  if (tid == 0) {
    mbar_init(ring.q_full(), 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(ring.k_full(s), 1), mbar_init(ring.v_full(s), 1);
      mbar_init(ring.k_empty(s), 256), mbar_init(ring.v_empty(s), 256);  // every consumer thread arrives
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      mbar_expect_tx(ring.q_full(), T::kQBytes);
      for (int half = 0; half < D / 64; ++half)
        tma_load(Qs + half * BR * 128, &tq, ring.q_full(), 64 * half, int(q0), int(h), int(b));
      for (int t = 0; t < ntiles; ++t) {
        const int s = t % kStages, n = t / kStages;
        if (n > 0) mbar_wait(ring.k_empty(s), (n - 1) & 1);
        mbar_expect_tx(ring.k_full(s), T::kTileBytes);
        for (int half = 0; half < D / 64; ++half)
          tma_load(K0 + s * T::kTileBytes + half * BC * 128, &tk, ring.k_full(s), 64 * half, t * BC, int(hk), int(b));
        if (n > 0) mbar_wait(ring.v_empty(s), (n - 1) & 1);
        mbar_expect_tx(ring.v_full(s), T::kTileBytes);
        for (int half = 0; half < D / 64; ++half)
          tma_load(V0 + s * T::kTileBytes + half * BC * 128, &tv, ring.v_full(s), 64 * half, t * BC, int(hk), int(b));
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const int64_t wrow0 = q0 + 64 * cw, row_base = wrow0 + 16 * warp + g;  // row of fragment half r: row_base + 8 r
  float o[D / 2] = {};
  float m_r[2] = {-INFINITY, -INFINITY}, l_r[2] = {0.f, 0.f};
  const float sl2 = float(p.scale) * kLog2e;
  auto k_tile = [&](int t) { return K0 + (t % kStages) * T::kTileBytes; };
  auto v_tile = [&](int t) { return V0 + (t % kStages) * T::kTileBytes; };
  auto phase = [&](int t) { return uint32_t((t / kStages) & 1); };
  // causal: every key of tile t follows every row of this warpgroup (then so do all later tiles)
  auto skipped = [&](int t) { return p.causal && int64_t(t) * BC > wrow0 + 63; };
  auto issue_scores = [&](float (&sc)[BC / 2], int t) {  // S = Q K_t^T, not committed
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      Wgmma<BC, kBf16>::template ss<0, 0>(sc, kmajor<BR>(Qs, 64 * cw, kk), kmajor<BC>(k_tile(t), 0, kk), kk > 0);
  };
  auto issue_pv = [&](const uint32_t (&pa)[BC / 16][4], int t) {  // O += P V_t, not committed
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(o, pa[kk], mnmajor<BC>(v_tile(t), kk), 1);
  };
  mbar_wait(ring.q_full(), 0);
  if constexpr (!kOverlap) {
    for (int t = 0; t < ntiles; ++t) {
      const bool skip = skipped(t);
      uint32_t pa[BC / 16][4];
      float corr[2] = {1.f, 1.f};
      mbar_wait(ring.k_full(t % kStages), phase(t));
      if (!skip) {
        float sc[BC / 2];
        issue_scores(sc, t);
        wg_commit();
        wg_wait<0>();
        pin(sc);
        mbar_arrive(ring.k_empty(t % kStages));
        online_softmax<BC>(sc, m_r, l_r, corr, p, int64_t(t) * BC, wrow0, row_base, t4, sl2);
        to_a<kBf16, BC>(pa, sc);
      } else {
        mbar_arrive(ring.k_empty(t % kStages));
      }
      mbar_wait(ring.v_full(t % kStages), phase(t));
      if (!skip) {
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] *= corr[(i >> 1) & 1];
        issue_pv(pa, t);
        wg_commit();
        wg_wait<0>();
        pin(o);
        pin(pa);
      }
      mbar_arrive(ring.v_empty(t % kStages));
    }
  } else {
    // tile 0's probabilities first; then per tile t: S_{t+1} and P_t V_t in flight together, the
    // softmax of S_{t+1} under P_t V_t, O rescaled once P_t V_t is done.
    uint32_t pa[BC / 16][4];
    float sc[BC / 2], corr[2];
    const bool live0 = ntiles > 0 && !skipped(0);
    if (ntiles > 0) {
      mbar_wait(ring.k_full(0), 0);
      if (live0) {
        issue_scores(sc, 0);
        wg_commit();
        wg_wait<0>();
        pin(sc);
        online_softmax<BC>(sc, m_r, l_r, corr, p, 0, wrow0, row_base, t4, sl2);
        to_a<kBf16, BC>(pa, sc);
      }
      mbar_arrive(ring.k_empty(0));
    }
    for (int t = 0; t < ntiles; ++t) {
      const bool live = !skipped(t), next = t + 1 < ntiles, live_next = next && !skipped(t + 1);
      // two commit groups every iteration (empty where a tile is skipped) and unconditional
      // waits: waits on divergent paths make ptxas serialize every wgmma of the kernel (C7518)
      if (next) mbar_wait(ring.k_full((t + 1) % kStages), phase(t + 1));
      if (live_next) issue_scores(sc, t + 1);
      wg_commit();
      mbar_wait(ring.v_full(t % kStages), phase(t));
      if (live) issue_pv(pa, t);
      wg_commit();
      wg_wait<1>();  // S_{t+1} (committed first) done; P_t V_t may still run
      pin(sc);
      uint32_t pa_next[BC / 16][4];
      float corr_next[2] = {1.f, 1.f};
      if (live_next) {
        online_softmax<BC>(sc, m_r, l_r, corr_next, p, int64_t(t + 1) * BC, wrow0, row_base, t4, sl2);
        to_a<kBf16, BC>(pa_next, sc);
      }
      if (next) mbar_arrive(ring.k_empty((t + 1) % kStages));
      wg_wait<0>();
      pin(o);
      pin(pa);
      mbar_arrive(ring.v_empty(t % kStages));
      if (live_next) {
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] *= corr_next[(i >> 1) & 1];
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk)
#pragma unroll
          for (int j = 0; j < 4; ++j) pa[kk][j] = pa_next[kk][j];
      }
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

}  // namespace tt::cuda::wg::ws
