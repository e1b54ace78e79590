#pragma once
// Hopper (sm_90a) FlashAttention backward in one pass, float16/bfloat16, head dims 64 and 128, no
// mask or dropout, warp-specialized like the forward (attention_wgmma.cuh) and scheduled as
// FlashAttention-3's. S and dP are computed once per tile (5 products instead of the two-kernel
// backward's 7, attention_wgmma_backward.cuh), and dQ, which sums over every key block, is added
// into a zeroed float32 accumulator by bulk reduce-adds of whole tiles (the order of the additions
// varies: not bitwise deterministic), then scaled and stored by attention_dq_store.
//
// A tile is BK = 128 keys of one kv head, walked in query steps of BQ over the group's heads; the
// blocks are persistent (next_tile, as the forward's). Warpgroup 0: one lane of its warp 0 loads
// a tile's K/V (once the consumers are done with the last tile's) and each step's Q and dO by TMA
// and its lse and D (from attention_backward_prepare) by one bulk copy, into a ring of kStages
// stages guarded by mbarriers (full: the bytes landed; empty: the consumers' 8 warps are done);
// its warp 1 adds the consumers' dQ tiles to the accumulator (cp.reduce.async.bulk) at the
// addresses they leave beside them. Warpgroups 1 and 2 own 64 keys each, with no block barrier in
// the loop; per step (the products' order lets the tensor cores run under the exponentials and
// stores):
//   S^T = K Q^T, dP^T = V dO^T (from shared memory, K-major), issued together; P^T while dP^T runs;
//   dS^T = P^T (dP^T - D) -> shared memory (keys x queries, 128-byte swizzle, two buffers);
//   dV += P^T dO (register A, dO read MN-major); after a barrier of the two consumers (the dS^T
//   tile complete), this warpgroup's 64 x DQN tile of dQ = dS K (both MN-major); dK += dS^T Q,
//   still running while the dQ tile goes to shared memory for the writer.
// The dQ tile of consumer c: BQ = 64 -> all 64 rows, columns [c DQN, (c + 1) DQN) with DQN = D / 2;
// BQ = 128 (D = 64) -> rows [64 c, 64 c + 64), all D columns.
#include "attention_wgmma_backward.cuh"

namespace tt::cuda::wg {

template <int D, int BQ_, int kStages>
struct BackwardFusedTiles {
  static constexpr int BK = 128, BQ = BQ_, kThreads = 384;
  static_assert(BQ == 64 || (BQ == 128 && D == 64), "registers: S^T, dP^T (BQ / 2 each) and dK, dV (D / 2 each)");
  static constexpr int DQN = BQ == 64 ? D / 2 : D;  // dQ tile columns per consumer (64 rows)
  static constexpr uint32_t kKeyBytes = BK * D * 2, kRowBytes = BQ * D * 2;
  static constexpr uint32_t kStatBytes = 2 * BQ * 4;                 // a step's lse (log2 units) and D
  static constexpr uint32_t kStageBytes = 2 * kRowBytes + kStatBytes;  // Q, dO, stats
  static constexpr uint32_t kDsBytes = BK * BQ * 2;              // dS^T, two buffers
  static constexpr uint32_t kDqBytes = 64 * DQN * 4;             // a consumer's dQ tile (fragment order)
  // kv_full, kv_empty, full[kStages], empty[kStages], the tile slot, each consumer's dQ tile address
  static constexpr uint32_t kBarBytes = 8 * (2 + 2 * kStages) + 8 + 16;
  static constexpr size_t kSmemBytes =
      2 * kKeyBytes + kStages * kStageBytes + 2 * kDsBytes + 2 * kDqBytes + kBarBytes + 1024;
  // dq_acc: (B, H, rows / 64, D / DQN, 64 x DQN) float32, rows = Lq rounded up to BQ; a tile in the
  // accumulator fragment's order [j][r][warp][g][t4][e] for (row 16 warp + 8 r + g, column 8 j + 2 t4 + e)
  static __host__ __device__ int64_t acc_rows(int64_t Lq) { return (Lq + BQ - 1) / BQ * BQ; }
};

// Two 16-bit values (lo in the low half) -> float2.
template <bool kBf16>
__device__ __forceinline__ float2 unpack2(uint32_t x) {
  if constexpr (kBf16) return make_float2(__uint_as_float(x << 16), __uint_as_float(x & 0xffff0000u));
  else return __half22float2(*reinterpret_cast<const __half2*>(&x));
}

// The one-pass backward's preparations in one pass over the rows (as FlashAttention-3's
// preprocess): stats (B H, rows / BQ, 2, BQ), per query step lse in log2 units (+inf past Lq and
// for rows without keys, so that P = 0 there) then D = rowsum(dO O) (0 past Lq), which the producer
// copies with one bulk copy per step; dq_acc (B H rows D floats) and the kernel's tile counter
// zeroed. rows = acc_rows(Lq); D / 8 threads per row, 8 columns each (16-byte loads: rows 16-byte
// aligned, E a multiple of 8).
template <bool kBf16, int D, int BQ>
__global__ void attention_backward_prepare(AttentionParams p, const uint16_t* gout, const uint16_t* out,
                                           const float* lse, float* stats, float* dq_acc, int64_t rows,
                                           int* tile_counter) {
  constexpr int kLanes = D / 8;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, grow = i / kLanes;
  if (i == 0) *tile_counter = 0;
  const int c = int(i % kLanes);
  const bool live = grow < p.B * p.H * rows;  // no early return: the shuffles below take the whole warp
  const int64_t bh = grow / rows, row = grow % rows;
  float dot = 0.f;
  if (live && row < p.Lq && 8 * c < p.E) {
    const int64_t b = bh / p.H, h = bh % p.H;
    const uint4 g = *reinterpret_cast<const uint4*>(gout + p.st.gout.row(b, h, row) + 8 * c);
    const uint4 o = *reinterpret_cast<const uint4*>(out + p.st.out.row(b, h, row) + 8 * c);
    const uint32_t gw[4] = {g.x, g.y, g.z, g.w}, ow[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const float2 u = unpack2<kBf16>(gw[w]), v = unpack2<kBf16>(ow[w]);
      dot = fmaf(u.x, v.x, fmaf(u.y, v.y, dot));
    }
  }
#pragma unroll
  for (int off = kLanes / 2; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
  if (!live) return;
  float4* acc = reinterpret_cast<float4*>(dq_acc + grow * D + 8 * c);
  acc[0] = acc[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  if (c == 0) {
    const float l = row < p.Lq ? lse[bh * p.Lq + row] : -INFINITY;
    float* st = stats + (bh * rows + row / BQ * BQ) * 2 + row % BQ;
    st[0] = l == -INFINITY ? INFINITY : l * mma::kLog2e;
    st[BQ] = dot;
  }
}

// Named barriers (0 is __syncthreads): the consumers' dS^T exchange; dQ buffer c full / empty.
constexpr int kBarDs = 1, kBarDqFull = 2, kBarDqEmpty = 4;
__device__ __forceinline__ void named_sync(int id, int n) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

// The backward's tiles: tile i is the BK = 128 keys k0 = (i % kblocks) BK of kv head bhk = i /
// kblocks (the tiles of one kv head run together: its Q and dO stay in L2; the longest causal
// first), and its steps: each head h of the kv head's group, queries i0 = i_first, i_first + BQ,
// ... < Lq.
template <int BQ>
struct BackwardTile {
  int64_t b, hk, k0, i_first;
  int per_head, steps;
  __device__ BackwardTile(int i, int kblocks, const AttentionParams& p)
      : b(i / kblocks / p.Hkv), hk(i / kblocks % p.Hkv), k0(int64_t(i % kblocks) * 128),
        i_first(p.causal ? k0 / BQ * BQ : 0),
        per_head(int(p.Lq > i_first ? (p.Lq - i_first + BQ - 1) / BQ : 0)),
        steps(int(p.H / p.Hkv) * per_head) {}
};

// grid (blocks), 384 threads; tq, tg: maps of q, gout (boxes of 64 columns x BQ rows); tk, tv: of
// k, v (64 x 128); stats, dq_acc (zeroed) and tile_counter (zeroed) from attention_backward_prepare
// -> gk, gv; dq_acc (layout above) += dS K (unscaled). Persistent (next_tile): the producer loads a
// tile's K/V as soon as the consumers are done with the previous tile's, and the Q/dO ring runs on
// across tiles.
template <bool kBf16, int D, int BQ, int kStages>
__global__ void __launch_bounds__(384, 1)
    attention_backward_fused_wgmma_kernel(const __grid_constant__ CUtensorMap tq,
                                          const __grid_constant__ CUtensorMap tk,
                                          const __grid_constant__ CUtensorMap tv,
                                          const __grid_constant__ CUtensorMap tg, AttentionParams p, const float* stats,
                                          uint16_t* gk, uint16_t* gv, float* dq_acc, int* tile_counter) {
#if TT_HAS_WGMMA
  using T = BackwardFusedTiles<D, BQ, kStages>;
  constexpr int BK = T::BK, DQN = T::DQN;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Ks = smem_base(smem_raw), Vs = Ks + T::kKeyBytes, ST0 = Vs + T::kKeyBytes;
  const uint32_t DS0 = ST0 + kStages * T::kStageBytes, DQ0 = DS0 + 2 * T::kDsBytes, BAR = DQ0 + 2 * T::kDqBytes;
  const uint32_t kv_full = BAR, kv_empty = BAR + 8, SLOT = BAR + 16 + 16 * kStages;
  uint8_t* generic = smem_raw + (Ks - smem_u32(smem_raw));  // Ks as a generic pointer
  volatile int* slot = reinterpret_cast<volatile int*>(generic + (SLOT - Ks));
  float* volatile* dq_dst = reinterpret_cast<float* volatile*>(generic + (SLOT + 8 - Ks));  // [consumer]
  auto stage = [&](int s) { return ST0 + s * T::kStageBytes; };
  auto full = [&](int s) { return BAR + 16 + 8 * s; };
  auto empty = [&](int s) { return BAR + 16 + 8 * (kStages + s); };
  const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32;
  const int kblocks = int((p.Lk + BK - 1) / BK), tiles = int(p.B * p.Hkv) * kblocks;
  const int64_t rows = T::acc_rows(p.Lq), group = p.H / p.Hkv;
  if (tid == 0) {
    mbar_init(kv_full, 1);
    mbar_init(kv_empty, 2 * 4);  // the consumers' warps arrive
    for (int s = 0; s < kStages; ++s) mbar_init(full(s), 1), mbar_init(empty(s), 2 * 4);
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid >= 64) return;
    if (tid >= 32) {  // warp 1: the dQ writer, which adds each consumer's tile at the address it left
      for (int c = 0; c < 2; ++c) named_arrive(kBarDqEmpty + c, 160);  // the buffers start empty
      for (bool end = false; !end;) {
        for (int c = 0; c < 2; ++c) {
          named_sync(kBarDqFull + c, 160);  // consumer c's tile is in shared memory
          float* dst = dq_dst[c];
          if (!dst) end = true;  // both consumers finish together
          else if (lane == 0) {
            bulk_reduce_add_f32(dst, DQ0 + c * T::kDqBytes, T::kDqBytes);
            bulk_commit();
          }
        }
        if (end) break;
        if (lane == 0) bulk_wait_read<1>();
        __syncwarp();
        named_arrive(kBarDqEmpty + 0, 160);
        if (lane == 0) bulk_wait_read<0>();
        __syncwarp();
        named_arrive(kBarDqEmpty + 1, 160);
      }
      if (lane == 0) bulk_wait_all();  // the last reduces, before the block's shared memory goes
      return;
    }
    if (lane != 0) return;  // warp 0, one lane: the loads
    int it = 0;             // steps loaded so far: ring stage it % kStages, its round it / kStages
    for (int n = 0, i = blockIdx.x;; ++n) {
      if (n > 0) mbar_wait(kv_empty, (n - 1) & 1);
      *slot = i < tiles ? i : -1;
      if (i >= tiles) {  // release: the slot is visible to the consumers' acquire
        mbar_arrive(kv_full);
        return;
      }
      const BackwardTile<BQ> tile(i, kblocks, p);
      const int b = int(tile.b), hk = int(tile.hk);
      mbar_expect_tx(kv_full, 2 * T::kKeyBytes);
      for (int half = 0; half < D / 64; ++half) {
        tma_load(Ks + half * BK * 128, &tk, kv_full, 64 * half, int(tile.k0), hk, b);
        tma_load(Vs + half * BK * 128, &tv, kv_full, 64 * half, int(tile.k0), hk, b);
      }
      // row: the step's first row in the (B H, rows) layout of stats
      int h = int(hk * group), i0 = int(tile.i_first);
      int64_t row = (b * p.H + h) * rows + i0;
      for (int step = 0; step < tile.steps; ++step, ++it) {
        const int s = it % kStages, round = it / kStages;
        if (round > 0) mbar_wait(empty(s), (round - 1) & 1);
        const uint32_t st = stage(s);
        mbar_expect_tx(full(s), 2 * T::kRowBytes + T::kStatBytes);
        for (int half = 0; half < D / 64; ++half) {
          tma_load(st + half * BQ * 128, &tq, full(s), 64 * half, i0, h, b);
          tma_load(st + T::kRowBytes + half * BQ * 128, &tg, full(s), 64 * half, i0, h, b);
        }
        bulk_load(st + 2 * T::kRowBytes, stats + row * 2, T::kStatBytes, full(s));
        i0 += BQ, row += BQ;
        if (i0 >= p.Lq) row += rows - (i0 - tile.i_first), i0 = int(tile.i_first), ++h;
      }
      i = next_tile(tile_counter, tiles);
    }
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, ctid = tid - 128, wtid = ctid % 128, warp = wtid / 32, g = lane / 4, t4 = lane % 4;
  const float scale = float(p.scale), sl2 = scale * kLog2e;
  // this consumer's dQ operands: dS (queries x keys) and K (keys x DQN columns), both MN-major
  const uint32_t ds_off = BQ == 128 ? cw * (BK * 128) : 0;
  const uint32_t kcol = BQ == 128 ? Ks : (D == 128 ? Ks + cw * (BK * 128) : Ks + cw * 64);
  const uint32_t DQs = DQ0 + cw * T::kDqBytes;
  int it = 0;
  for (int n = 0;; ++n) {
    mbar_wait(kv_full, n & 1);
    const int i = *slot;
    if (i < 0) break;
    const BackwardTile<BQ> tile(i, kblocks, p);
    const int64_t wkey0 = tile.k0 + 64 * cw, key_base = wkey0 + 16 * warp + g;
    float dk[D / 2] = {}, dv[D / 2] = {};
    for (int step = 0; step < tile.steps; ++step, ++it) {
      const int s = it % kStages;
      const int64_t h = tile.hk * group + step / tile.per_head, i0 = tile.i_first + int64_t(step % tile.per_head) * BQ;
      const uint32_t Qt = stage(s), Gt = Qt + T::kRowBytes, DSs = DS0 + (it & 1) * T::kDsBytes;
      mbar_wait(full(s), (it / kStages) & 1);
      uint32_t pa[BQ / 16][4], da[BQ / 16][4];
      {
        // this thread's query columns: 8 j + 2 t4 + e, j < BQ / 8, e < 2 (m = 2 j + e)
        const float* lse_s = reinterpret_cast<const float*>(generic + (Gt + T::kRowBytes - Ks));
        const float* d_s = lse_s + BQ;
        auto lse_at = [&](int m) { return lse_s[(m >> 1) * 8 + t4 * 2 + (m & 1)]; };
        auto d_at = [&](int m) { return d_s[(m >> 1) * 8 + t4 * 2 + (m & 1)]; };
        float st[BQ / 2], dpt[BQ / 2];
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
          Wgmma<BQ, kBf16>::template ss<0, 0>(st, kmajor<BK>(Ks, 64 * cw, kk), kmajor<BQ>(Qt, 0, kk), kk > 0);
        wg_commit();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
          Wgmma<BQ, kBf16>::template ss<0, 0>(dpt, kmajor<BK>(Vs, 64 * cw, kk), kmajor<BQ>(Gt, 0, kk), kk > 0);
        wg_commit();
        wg_wait<1>();  // S^T
        pin(st);
        // rows past Lq need no check: their lse is +inf (P = 0)
        const bool interior = wkey0 + 64 <= p.Lk && (!p.causal || wkey0 + 63 <= i0);
        auto probabilities = [&](auto checks) {
#pragma unroll
          for (int m = 0; m < BQ / 4; ++m) {
            const float neg_l2 = -lse_at(m);
#pragma unroll
            for (int r = 0; r < 2; ++r) {
              const int j = 4 * (m >> 1) + 2 * r + (m & 1);
              float pr = fast_exp2(fmaf(st[j], sl2, neg_l2));
              if constexpr (decltype(checks)::value) {
                const int64_t key = key_base + 8 * r, row = i0 + (m >> 1) * 8 + t4 * 2 + (m & 1);
                if (!(key < p.Lk && !(p.causal && key > row))) pr = 0.f;
              }
              st[j] = pr;
            }
          }
        };
        if (interior) probabilities(std::false_type{});
        else probabilities(std::true_type{});
        wg_wait<0>();
        pin(dpt);
#pragma unroll
        for (int m = 0; m < BQ / 4; ++m) {
          const float dm = d_at(m);
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            const int j = 4 * (m >> 1) + 2 * r + (m & 1);
            dpt[j] = st[j] * (dpt[j] - dm);
          }
        }
        to_a<kBf16, BQ>(pa, st);
        to_a<kBf16, BQ>(da, dpt);
      }
      {
        const int krow = 64 * cw + 16 * warp + g;
#pragma unroll
        for (int kk = 0; kk < BQ / 16; ++kk)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(DSs + swizzled<BK>(krow + 8 * (j & 1), 2 * kk + (j >> 1)) +
                                                            4 * t4),
                         "r"(da[kk][j]));
      }
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BQ / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dv, pa[kk], mnmajor<BQ>(Gt, kk), 1);
      wg_commit();
      fence_async_smem();
      named_sync(kBarDs, 256);  // the dS^T tile complete: both consumers' halves
      float dq[DQN / 2];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        Wgmma<DQN, kBf16>::template ss<1, 1>(dq, mnmajor<BK>(DSs + ds_off, kk), mnmajor<BK>(kcol, kk), kk > 0);
      wg_commit();
      wg_wait<1>();  // dV: this step's dO is read
      pin(dv);
      pin(pa);
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BQ / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dk, da[kk], mnmajor<BQ>(Qt, kk), 1);
      wg_commit();
      wg_wait<1>();  // dQ (dK keeps running)
      pin(dq);
      named_sync(kBarDqEmpty + cw, 160);  // the writer's reduce has read the buffer
#pragma unroll
      for (int j = 0; j < DQN / 8; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(DQs + ((j * 2 + r) * 128 + wtid) * 8),
                       "f"(dq[4 * j + 2 * r]), "f"(dq[4 * j + 2 * r + 1]));
      // where the tile goes: dq_acc holds consumer c's tile of a step at (row D + c 64 DQN), row
      // the step's first row in the (B H, rows) layout, whether c splits rows or columns
      if (wtid == 0) dq_dst[cw] = dq_acc + ((tile.b * p.H + h) * rows + i0) * D + cw * (64 * DQN);
      fence_async_smem();
      named_arrive(kBarDqFull + cw, 160);
      wg_wait<0>();  // dK: the stage is free (keeping dK in flight into the next step costs registers
      pin(dk);       // that ptxas does not have at D = 128: it would serialize every wgmma, C7512)
      if (lane == 0) mbar_arrive(empty(s));
    }
    if (lane == 0) mbar_arrive(kv_empty);  // every product of the tile is done: K and V may go
    store_dk_dv<kBf16, D>(p, dk, dv, gk, gv, tile.b, tile.hk, key_base, t4, scale);
  }
  named_sync(kBarDqEmpty + cw, 160);  // the end, for the writer
  if (wtid == 0) dq_dst[cw] = nullptr;
  named_arrive(kBarDqFull + cw, 160);
#endif
}

// dq_acc (the fused kernel's layout for DQN, rows = acc_rows(Lq)) -> gq (B, H, Lq, E) = dq_acc *
// scale, strided (rows 16-byte aligned); one thread per 8 columns of a row, which sit together in
// the fragment order
template <bool kBf16, int D, int DQN>
__global__ void attention_dq_store(AttentionParams p, const float* acc, uint16_t* gq, int64_t rows) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, n = p.B * p.H * p.Lq * (D / 8);
  if (i >= n) return;
  const int col = int(i % (D / 8)) * 8;
  const int64_t row = i / (D / 8) % p.Lq, bh = i / (D / 8) / p.Lq;
  if (col >= p.E) return;
  const int r64 = int(row % 64), c = col % DQN, warp = r64 / 16, r = (r64 / 8) & 1, g = r64 % 8;
  const float4* src = reinterpret_cast<const float4*>(acc + (bh * rows + row / 64 * 64) * D + col / DQN * (64 * DQN) +
                                                      ((c / 8 * 2 + r) * 128 + warp * 32 + g * 4) * 2);
  const float4 a = src[0], b = src[1];
  const float s = float(p.scale);
  *reinterpret_cast<uint4*>(gq + p.st.gq.row(bh / p.H, bh % p.H, row) + col) =
      make_uint4(mma::pack2<kBf16>(a.x * s, a.y * s), mma::pack2<kBf16>(a.z * s, a.w * s),
                 mma::pack2<kBf16>(b.x * s, b.y * s), mma::pack2<kBf16>(b.z * s, b.w * s));
}

}  // namespace tt::cuda::wg
