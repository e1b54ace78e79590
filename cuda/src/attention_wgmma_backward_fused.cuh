#pragma once
// Hopper (sm_90a) FlashAttention backward in one pass, float16/bfloat16, head dims 64 and 128, no
// mask or dropout, warp-specialized like the forward (attention_wgmma.cuh). S and dP are computed
// once per tile (5 products instead of the two-kernel backward's 7, attention_wgmma_backward.cuh),
// and dQ, which sums over every key block, is added into a zeroed float32 (B, H, Lq, D) accumulator
// with atomics (the order of the additions varies: not bitwise deterministic), then scaled and
// stored by the caller. A block owns 128 keys of one kv head and walks the query steps of 64 over
// the group's heads. Warpgroup 0 produces: one thread loads the block's K/V once and each step's Q
// and dO by TMA, its warp copies the step's lse and D rows, into a ring of kStages stages guarded by
// mbarriers (full: the TMA bytes landed and the 32 lanes arrived; empty: the consumers' 8 warps are
// done). Warpgroups 1 and 2 own 64 keys each, with no block barrier in the loop; per step:
//   S^T = K Q^T, dP^T = V dO^T (both from shared memory, K-major); P^T, dS^T = P^T (dP^T - D);
//   dV += P^T dO, dK += dS^T Q (register A operands, dO and Q read MN-major);
//   dS^T -> shared memory (keys x queries, 128-byte swizzle); after a barrier of the two consumers,
//   warpgroup w adds dQ[:, w D/2 .. (w+1) D/2) = dS K[:, w D/2 ..] (both operands MN-major) over
//   all 128 keys, so each dQ element gets one atomic add per key block.
#include "attention_wgmma_backward.cuh"

namespace tt::cuda::wg {

template <int D, int kStages, bool kBulkDq = false>
struct BackwardFusedTiles {
  static constexpr int BK = 128, BQ = 64, kThreads = 384;
  static constexpr uint32_t kKeyBytes = BK * D * 2, kRowBytes = BQ * D * 2;
  static constexpr uint32_t kStageBytes = 2 * kRowBytes + 1024;  // Q, dO, then lse and D (BQ floats each)
  static constexpr uint32_t kDsBytes = BK * BQ * 2;
  static constexpr uint32_t kBarBytes = 8 * (1 + 2 * kStages);  // kv_full, full[kStages], empty[kStages]
  // kBulkDq: each consumer's dQ tile (BQ x D/2 float32, fragment order), double buffered
  static constexpr uint32_t kDqBytes = kBulkDq ? BQ * (D / 2) * 4 : 0;
  static constexpr size_t kSmemBytes =
      2 * kKeyBytes + kStages * kStageBytes + kDsBytes + 4 * kDqBytes + kBarBytes + 1024;
};

// grid (ceil(Lk / 128), B * Hkv), 384 threads; tq, tg: maps of q, gout (boxes of 64 columns x 64
// rows); tk, tv: of k, v (64 x 128) -> gk, gv; dq_acc (B, H, Lq, D) float32 += dS K (unscaled)
// kBulkDq (EXPERIMENT, bench/attention_wgmma_dev.py cfg 3; not run yet): instead of atomics, each
// consumer writes its dQ tile to shared memory in fragment order and one thread adds it to dq_acc
// by a bulk reduce (cp.reduce.async.bulk); dq_acc is then (B, H, ceil(Lq / 64), 2, 64 x D/2) in
// that order: [consumer][j][r][warp][g][t4][e] for row 16 warp + 8 r + g, column
// consumer D/2 + 8 j + 2 t4 + e of each 64-row tile.
template <bool kBf16, int D, int kStages, bool kBulkDq = false>
__global__ void __launch_bounds__(384, 1)
    attention_backward_fused_wgmma_kernel(const __grid_constant__ CUtensorMap tq,
                                          const __grid_constant__ CUtensorMap tk,
                                          const __grid_constant__ CUtensorMap tv,
                                          const __grid_constant__ CUtensorMap tg, AttentionParams p, const float* lse,
                                          const float* dvec, uint16_t* gk, uint16_t* gv, float* dq_acc) {
#if TT_HAS_WGMMA
  using T = BackwardFusedTiles<D, kStages, kBulkDq>;
  constexpr int BK = T::BK, BQ = T::BQ, DN = D / 2;  // dQ columns per consumer
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Ks = smem_base(smem_raw), Vs = Ks + T::kKeyBytes, ST0 = Vs + T::kKeyBytes;
  const uint32_t DSs = ST0 + kStages * T::kStageBytes, DQ0 = DSs + T::kDsBytes, BAR = DQ0 + 4 * T::kDqBytes;
  uint8_t* generic = smem_raw + (Ks - smem_u32(smem_raw));  // Ks as a generic pointer
  auto stage = [&](int s) { return ST0 + s * T::kStageBytes; };
  auto full = [&](int s) { return BAR + 8 + 8 * s; };
  auto empty = [&](int s) { return BAR + 8 + 8 * (kStages + s); };
  const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32;
  const int64_t bhk = blockIdx.y, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const int64_t k0 = int64_t(blockIdx.x) * BK;
  const int64_t i_first = p.causal ? k0 / BQ * BQ : 0;
  const int per_head = int(p.Lq > i_first ? (p.Lq - i_first + BQ - 1) / BQ : 0);
  const int nsteps = int(group) * per_head;
  if (tid == 0) {
    mbar_init(BAR, 1);
    for (int s = 0; s < kStages; ++s) mbar_init(full(s), 1 + 32), mbar_init(empty(s), 2 * 4);  // warps arrive
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid >= 32) return;
    if (lane == 0) {
      mbar_expect_tx(BAR, 2 * T::kKeyBytes);
      for (int half = 0; half < D / 64; ++half) {
        tma_load(Ks + half * BK * 128, &tk, BAR, 64 * half, int(k0), int(hk), int(b));
        tma_load(Vs + half * BK * 128, &tv, BAR, 64 * half, int(k0), int(hk), int(b));
      }
    }
    for (int step = 0; step < nsteps; ++step) {
      const int s = step % kStages, n = step / kStages;
      const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BQ;
      if (n > 0) mbar_wait(empty(s), (n - 1) & 1);
      const uint32_t st = stage(s);
      if (lane == 0) {
        mbar_expect_tx(full(s), 2 * T::kRowBytes);
        for (int half = 0; half < D / 64; ++half) {
          tma_load(st + half * BQ * 128, &tq, full(s), 64 * half, int(i0), int(h), int(b));
          tma_load(st + T::kRowBytes + half * BQ * 128, &tg, full(s), 64 * half, int(i0), int(h), int(b));
        }
      }
      const int64_t bh = b * p.H + h;
      float* rows = reinterpret_cast<float*>(generic + (st + 2 * T::kRowBytes - Ks));
      for (int i = lane; i < 2 * BQ; i += 32) {
        const int64_t row = i0 + i % BQ;
        rows[i] = row < p.Lq ? (i < BQ ? lse : dvec)[bh * p.Lq + row] : 0.f;
      }
      mbar_arrive(full(s));  // release: the rows above are visible to the consumers' acquire
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, ctid = tid - 128, warp = (ctid % 128) / 32, g = lane / 4, t4 = lane % 4;
  float dk[D / 2] = {}, dv[D / 2] = {};
  const float scale = float(p.scale), sl2 = scale * kLog2e;
  const int64_t wkey0 = k0 + 64 * cw, key_base = wkey0 + 16 * warp + g;
  mbar_wait(BAR, 0);
  for (int step = 0; step < nsteps; ++step) {
    const int s = step % kStages;
    const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BQ;
    const uint32_t Qt = stage(s), Gt = Qt + T::kRowBytes;
    mbar_wait(full(s), (step / kStages) & 1);
    uint32_t pa[BQ / 16][4], da[BQ / 16][4];
    {
      const float* lse_s = reinterpret_cast<const float*>(generic + (Gt + T::kRowBytes - Ks));
      const float* d_s = lse_s + BQ;
      float st[BQ / 2], dpt[BQ / 2];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BQ, kBf16>::template ss<0, 0>(st, kmajor<BK>(Ks, 64 * cw, kk), kmajor<BQ>(Qt, 0, kk), kk > 0);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BQ, kBf16>::template ss<0, 0>(dpt, kmajor<BK>(Vs, 64 * cw, kk), kmajor<BQ>(Gt, 0, kk), kk > 0);
      wg_commit();
      wg_wait<0>();
      pin(st);
      pin(dpt);
      auto scores = [&](auto checks) {
#pragma unroll
        for (int i = 0; i < BQ / 2; ++i) {
          const int r = (i >> 1) & 1, qi = (i >> 2) * 8 + t4 * 2 + (i & 1);
          const float L2 = lse_s[qi] * kLog2e;
          float pr = fast_exp2(fmaf(st[i], sl2, -L2));
          if constexpr (decltype(checks)::value) {
            const int64_t key = key_base + 8 * r, row = i0 + qi;
            if (!(key < p.Lk && row < p.Lq && L2 != -INFINITY && !(p.causal && key > row))) pr = 0.f;
          }
          dpt[i] = pr * (dpt[i] - d_s[qi]);
          st[i] = pr;
        }
      };
      if (wkey0 + 64 <= p.Lk && i0 + BQ <= p.Lq && (!p.causal || wkey0 + 63 <= i0)) scores(std::false_type{});
      else scores(std::true_type{});
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
    fence_async_smem();
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < BQ / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dv, pa[kk], mnmajor<BQ>(Gt, kk), 1);
#pragma unroll
    for (int kk = 0; kk < BQ / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dk, da[kk], mnmajor<BQ>(Qt, kk), 1);
    wg_commit();
    asm volatile("bar.sync 1, 256;\n" ::: "memory");  // the dS^T tile complete: both consumers' halves
    // dQ[:, cw D/2 ..] = dS (BQ x BK, MN-major: queries contiguous) K[:, cw D/2 ..] (BK x D/2, MN-major)
    float dq[DN / 2];
    const uint32_t kcol = D == 128 ? Ks + cw * (BK * 128) : Ks + cw * 64;
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
      Wgmma<DN, kBf16>::template ss<1, 1>(dq, mnmajor<BK>(DSs, kk), mnmajor<BK>(kcol, kk), kk > 0);
    wg_commit();
    wg_wait<0>();
    pin(dq);
    pin(dv);
    pin(dk);
    pin(pa);
    pin(da);
    if (lane == 0) mbar_arrive(empty(s));  // this warp is done with the stage's Q, dO and rows
    if constexpr (kBulkDq) {
      const int wtid = ctid % 128;
      const uint32_t SQ = DQ0 + ((step & 1) * 2 + cw) * T::kDqBytes;
      if (wtid == 0) bulk_wait_read<1>();  // the reduce issued from this buffer two steps ago has read it
      asm volatile("bar.sync %0, 128;\n" ::"r"(2 + cw) : "memory");
#pragma unroll
      for (int j = 0; j < DN / 8; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(SQ + ((j * 2 + r) * 128 + wtid) * 8),
                       "f"(dq[4 * j + 2 * r]), "f"(dq[4 * j + 2 * r + 1]));
      fence_async_smem();
      asm volatile("bar.sync %0, 128;\n" ::"r"(2 + cw) : "memory");
      if (wtid == 0) {
        const int64_t tiles = (p.Lq + BQ - 1) / BQ;
        bulk_reduce_add_f32(dq_acc + (((b * p.H + h) * tiles + i0 / BQ) * 2 + cw) * (BQ * DN), SQ, T::kDqBytes);
        bulk_commit();
      }
    } else {  // dq fragment: (query 16 warp + g + 8 r, column 8 j + 2 t4 (+1) of this consumer's half)
      float* acc = dq_acc + (b * p.H + h) * p.Lq * D + cw * DN;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t row = i0 + 16 * warp + g + 8 * r;
        if (row >= p.Lq) continue;
#pragma unroll
        for (int j = 0; j < DN / 8; ++j)
          atomicAdd(reinterpret_cast<float2*>(acc + row * D + 8 * j + 2 * t4),
                    make_float2(dq[4 * j + 2 * r], dq[4 * j + 2 * r + 1]));
      }
    }
    asm volatile("bar.sync 1, 256;\n" ::: "memory");  // both consumers' dQ products are done with dS^T
  }
  if constexpr (kBulkDq) {
    if (ctid % 128 == 0) bulk_wait_all();  // the last reduces, before the block's shared memory goes
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t key = key_base + 8 * r;
    if (key >= p.Lk) continue;
    uint16_t *krow = gk + p.st.gk.row(b, hk, key), *vrow = gv + p.st.gv.row(b, hk, key);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      const int col = j * 8 + t4 * 2;
      if (col >= p.E) continue;
      *reinterpret_cast<uint32_t*>(krow + col) = pack2<kBf16>(dk[4 * j + 2 * r] * scale, dk[4 * j + 2 * r + 1] * scale);
      *reinterpret_cast<uint32_t*>(vrow + col) = pack2<kBf16>(dv[4 * j + 2 * r], dv[4 * j + 2 * r + 1]);
    }
  }
#endif
}

}  // namespace tt::cuda::wg
