#pragma once
// Hopper (sm_90a) FlashAttention forward for float16/bfloat16, head dims 64 and 128, on warpgroup
// MMA (wgmma.cuh), warp-specialized as FlashAttention-3: a block takes 128 query rows of one
// (batch, head) and has three warpgroups. Warpgroup 0 is the producer: one thread loads Q once and
// the K/V tiles of BC keys through TMA (tma.cuh, 128-byte swizzle: the layout of wg::swizzled)
// into a ring of kStages stages guarded by mbarriers (full: the bytes landed; empty: both
// consumers are done with the stage). Warpgroups 1 and 2 own 64 rows each and only compute, with
// no block barrier in the loop, so one's softmax runs under the other's products; setmaxnreg moves
// the register budget to them. Per key tile: S = Q K^T from shared memory (K-major), the online
// softmax in log2 units, O += P V with P in registers and V read MN-major (no transposes).
#include "attention_mma.cuh"
#include "../tma.cuh"
#include "../wgmma.cuh"

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

// Scores sc (64 x BC of this warpgroup, raw) of the key tile at k0 -> probabilities in place, the
// running max m_r / sum l_r updated, corr = the factor for the output so far. Keys past Lk or
// (causal) after the row score -inf: one uniform branch around the whole tile, so that interior
// tiles run none of it (per element it would be if-converted and paid by every tile). P =
// 2^(s sl2 - m sl2): one FFMA and one MUFU per score.
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
    const float m_use = mx[r] == -INFINITY ? 0.f : mx[r];  // a row with no key yet: P = 0, no NaN
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

template <int D, int BC, int kStages, int kConsumers = 2>
struct ForwardTiles {
  // No warpgroup skips a key tile (a skip would put the products on a divergent path: ptxas then
  // serializes every wgmma of the kernel, warning C7520): under a causal mask a warpgroup's last
  // tiles may lie wholly after its rows (BR = 192) and are computed anyway, their P all 0.
  static_assert(BC == 128, "key tiles of 128");
  static_assert(kConsumers == 2 || (kConsumers == 3 && D == 64), "registers: 3 consumers only at D = 64");
  static constexpr int BR = 64 * kConsumers, kThreads = 128 * (kConsumers + 1);
  // setmaxnreg: the registers the block is launched with (65536 / kThreads, a multiple of 8), moved
  // from the producer warpgroup to the consumers
  static constexpr int kProducerRegs = kConsumers == 2 ? 40 : 32, kConsumerRegs = kConsumers == 2 ? 232 : 160;
  static constexpr uint32_t kQBytes = BR * D * 2, kTileBytes = BC * D * 2;
  static constexpr uint32_t kBarBytes = 8 * (2 + 4 * kStages) + 8;
  // Q, kStages K tiles, kStages V tiles, the barriers and the tile slot; + 1024 to align the start
  static constexpr size_t kSmemBytes = kQBytes + 2 * kStages * kTileBytes + kBarBytes + 1024;
};

// The mbarriers of the Q buffer and the K/V ring: full (the TMA bytes landed) and empty (both
// consumers are done), and the slot where the producer publishes each tile's index.
template <int kStages>
struct Ring {
  uint32_t base;  // q_full, q_empty, k_full[kStages], v_full[kStages], k_empty[kStages], v_empty[kStages], slot
  __device__ uint32_t q_full() const { return base; }
  __device__ uint32_t q_empty() const { return base + 8; }
  __device__ uint32_t k_full(int s) const { return base + 16 + 8 * s; }
  __device__ uint32_t v_full(int s) const { return base + 16 + 8 * (kStages + s); }
  __device__ uint32_t k_empty(int s) const { return base + 16 + 8 * (2 * kStages + s); }
  __device__ uint32_t v_empty(int s) const { return base + 16 + 8 * (3 * kStages + s); }
  __device__ uint32_t slot() const { return base + 16 + 8 * 4 * kStages; }
};

// The persistent kernels' tiles: block x takes tile x, then the next one nobody has taken (counter,
// zeroed before the launch, counts the tiles taken after the first grid's); counter = nullptr: one
// tile per block. Returns tiles or more once every tile is taken.
__device__ __forceinline__ int next_tile(int* counter, int tiles) {
  return counter ? int(gridDim.x) + atomicAdd(counter, 1) : tiles;
}

// The forward's tiles: tile i is BR query rows of head bh = i / qblocks, the longest causal rows
// first within a head (so that the blocks running together share one head's K/V in L2).
struct ForwardTile {
  int64_t bh, q0;
  __device__ ForwardTile(int i, int qblocks, int BR) : bh(i / qblocks), q0(int64_t(qblocks - 1 - i % qblocks) * BR) {}
};

// grid (blocks), 128 (kConsumers + 1) threads; tq, tk, tv: TMA maps of q (B, H, Lq, E), k, v
// (B, Hkv, Lk, E) with boxes of (64 columns, BR / BC / BC rows) -> out (B, H, Lq, E), lse (B, H,
// Lq). Persistent (next_tile, tile_counter): the producer loads a tile's Q and K/V while the
// consumers still finish the previous tile, and the K/V ring runs on across tiles.
template <bool kBf16, int D, int BC, int kStages, int kConsumers = 2>
__global__ void __launch_bounds__(128 * (kConsumers + 1), 1)
    attention_forward_wgmma_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                                   const __grid_constant__ CUtensorMap tv, AttentionParams p, uint16_t* out,
                                   float* lse, int* tile_counter) {
#if TT_HAS_WGMMA
  using T = ForwardTiles<D, BC, kStages, kConsumers>;
  constexpr int BR = T::BR;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Qs = smem_base(smem_raw), K0 = Qs + T::kQBytes, V0 = K0 + kStages * T::kTileBytes;
  const Ring<kStages> ring{V0 + kStages * T::kTileBytes};
  volatile int* slot = reinterpret_cast<volatile int*>(smem_raw + (ring.slot() - smem_u32(smem_raw)));
  const int tid = threadIdx.x, wg = tid / 128;
  const int qblocks = int((p.Lq + BR - 1) / BR), tiles = int(p.B * p.H) * qblocks;
  // key tiles of the block's rows: up to the last row's key under a causal mask
  auto key_tiles = [&](int64_t q0) {
    const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
    return int((kend + BC - 1) / BC);
  };
  if (tid == 0) {
    mbar_init(ring.q_full(), 1);
    mbar_init(ring.q_empty(), 128 * kConsumers);  // every consumer thread arrives
    for (int s = 0; s < kStages; ++s) {
      mbar_init(ring.k_full(s), 1), mbar_init(ring.v_full(s), 1);
      mbar_init(ring.k_empty(s), 128 * kConsumers), mbar_init(ring.v_empty(s), 128 * kConsumers);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(T::kProducerRegs));
    if (tid != 0) return;
    int it = 0;  // K/V tiles loaded so far: ring stage it % kStages, its round it / kStages
    for (int n = 0, i = blockIdx.x;; ++n) {
      if (n > 0) mbar_wait(ring.q_empty(), (n - 1) & 1);
      *slot = i < tiles ? i : -1;
      if (i >= tiles) {  // release: the slot is visible to the consumers' acquire
        mbar_arrive(ring.q_full());
        return;
      }
      const ForwardTile tile(i, qblocks, BR);
      const int b = int(tile.bh / p.H), h = int(tile.bh % p.H), hk = h / int(p.H / p.Hkv);
      mbar_expect_tx(ring.q_full(), T::kQBytes);
      for (int half = 0; half < D / 64; ++half)
        tma_load(Qs + half * BR * 128, &tq, ring.q_full(), 64 * half, int(tile.q0), h, b);
      const int ntiles = key_tiles(tile.q0);
      for (int t = 0; t < ntiles; ++t, ++it) {
        const int s = it % kStages, round = it / kStages;
        if (round > 0) mbar_wait(ring.k_empty(s), (round - 1) & 1);
        mbar_expect_tx(ring.k_full(s), T::kTileBytes);
        for (int half = 0; half < D / 64; ++half)
          tma_load(K0 + s * T::kTileBytes + half * BC * 128, &tk, ring.k_full(s), 64 * half, t * BC, hk, b);
        if (round > 0) mbar_wait(ring.v_empty(s), (round - 1) & 1);
        mbar_expect_tx(ring.v_full(s), T::kTileBytes);
        for (int half = 0; half < D / 64; ++half)
          tma_load(V0 + s * T::kTileBytes + half * BC * 128, &tv, ring.v_full(s), 64 * half, t * BC, hk, b);
      }
      i = next_tile(tile_counter, tiles);
    }
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(T::kConsumerRegs));
  const int cw = wg - 1, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const float sl2 = float(p.scale) * kLog2e;
  int it = 0;
  for (int n = 0;; ++n) {
    mbar_wait(ring.q_full(), n & 1);
    const int i = *slot;
    if (i < 0) return;
    const ForwardTile tile(i, qblocks, BR);
    const int64_t b = tile.bh / p.H, h = tile.bh % p.H;
    const int64_t wrow0 = tile.q0 + 64 * cw, row_base = wrow0 + 16 * warp + g;  // fragment half r: row_base + 8 r
    const int ntiles = key_tiles(tile.q0);
    float o[D / 2] = {};
    float m_r[2] = {-INFINITY, -INFINITY}, l_r[2] = {0.f, 0.f};
    for (int t = 0; t < ntiles; ++t, ++it) {
      const int s = it % kStages;
      const uint32_t phase = (it / kStages) & 1, k_tile = K0 + s * T::kTileBytes, v_tile = V0 + s * T::kTileBytes;
      uint32_t pa[BC / 16][4];
      float corr[2];
      {
        float sc[BC / 2];
        mbar_wait(ring.k_full(s), phase);
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
          Wgmma<BC, kBf16>::template ss<0, 0>(sc, kmajor<BR>(Qs, 64 * cw, kk), kmajor<BC>(k_tile, 0, kk), kk > 0);
        wg_commit();
        wg_wait<0>();
        pin(sc);
        mbar_arrive(ring.k_empty(s));
        if (t + 1 == ntiles) mbar_arrive(ring.q_empty());  // Q is read: the next tile's may load
        online_softmax<BC>(sc, m_r, l_r, corr, p, int64_t(t) * BC, wrow0, row_base, t4, sl2);
        to_a<kBf16, BC>(pa, sc);
      }
      mbar_wait(ring.v_full(s), phase);
#pragma unroll
      for (int j = 0; j < D / 2; ++j) o[j] *= corr[(j >> 1) & 1];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BC / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(o, pa[kk], mnmajor<BC>(v_tile, kk), 1);
      wg_commit();
      wg_wait<0>();
      pin(o);
      pin(pa);
      mbar_arrive(ring.v_empty(s));
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
      if (t4 == 0) lse[tile.bh * p.Lq + row] = l > 0 ? m_r[r] * float(p.scale) + logf(l) : -INFINITY;
    }
  }
#endif
}

}  // namespace tt::cuda::wg
