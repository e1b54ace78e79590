#pragma once
// Hopper (sm_90a) FlashAttention backward in one pass, float16/bfloat16, head dims 64 and 128, no
// mask or dropout: the dK/dV kernel of attention_wgmma_backward.cuh also computes dQ from the dS it
// already has, so that S and dP are computed once instead of twice (5 products per tile instead of
// the two-kernel backward's 7). Each block owns 64 kWG keys; dQ of a query tile sums over every
// key block, so the blocks add their share into a float32 accumulator with atomics (the order of the
// additions varies: not bitwise deterministic); the caller zeroes it first and converts it after.
// Per (key block, query tile of BQ) step:
//   S^T = K Q^T, dP^T = V dO^T (64 keys of warpgroup w x BQ); P^T, dS^T as there;
//   dV += P^T dO, dK += dS^T Q (register A operands);
//   dS^T -> shared memory (keys x BQ, 128-byte swizzle), then dQ_part = dS K read MN-major:
//     kSplitN: warpgroup w takes output columns [w D/2, (w+1) D/2) over all 64 kWG keys (each dQ
//              element added once per key block);
//     else:    warpgroup w takes all D columns over its own 64 keys (added kWG times).
#include "attention_wgmma_backward.cuh"

namespace tt::cuda::wg {

template <int D, int kWG, int BQ>
struct BackwardFusedTiles : BackwardKVTiles<D, kWG, BQ> {
  using Base = BackwardKVTiles<D, kWG, BQ>;
  static constexpr uint32_t kDsBytes = Base::BK * BQ * 2;  // dS^T: (BK keys, BQ queries)
  static constexpr size_t kSmemBytes = Base::kSmemBytes + kDsBytes;
  static_assert(BQ == 64, "dS^T rows are one 128-byte swizzle row of queries");
};

// grid (ceil(Lk / BK), B * Hkv) -> gk, gv: (B, Hkv, Lk, E); dq_acc (B, H, Lq, D) float32 += dS K
// (unscaled; the caller zeroes it before and multiplies by scale after)
template <bool kBf16, int D, int kWG, int BQ, bool kSplitN>
__global__ void __launch_bounds__(128 * kWG, 1)
    attention_backward_fused_wgmma_kernel(AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                          const uint16_t* gout, const float* lse, const float* dvec, uint16_t* gk,
                                          uint16_t* gv, float* dq_acc) {
#if TT_HAS_WGMMA
  using Tiles = BackwardFusedTiles<D, kWG, BQ>;
  constexpr int BK = Tiles::BK, kThreads = Tiles::kThreads;
  constexpr int DN = kSplitN ? D / kWG : D;  // dQ columns per warpgroup
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Ks = smem_base(smem_raw), Vs = Ks + Tiles::kKeyBytes, ST0 = Vs + Tiles::kKeyBytes;
  const uint32_t DSs = ST0 + 2 * Tiles::kStageBytes;
  const uint8_t* generic = smem_raw + (Ks - smem_u32(smem_raw));  // Ks as a generic pointer
  auto stage = [&](int s) { return ST0 + (s & 1) * Tiles::kStageBytes; };
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bhk = blockIdx.y, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const int64_t k0 = int64_t(blockIdx.x) * BK;
  load_tile<BK, D, kThreads>(Ks, k + p.st.k.row(b, hk, 0), k0, p.Lk, p.E, p.st.k.l, tid);
  load_tile<BK, D, kThreads>(Vs, v + p.st.v.row(b, hk, 0), k0, p.Lk, p.E, p.st.v.l, tid);
  const int64_t i_first = p.causal ? k0 / BQ * BQ : 0;
  const int per_head = int(p.Lq > i_first ? (p.Lq - i_first + BQ - 1) / BQ : 0);
  const int nsteps = int(group) * per_head;
  auto issue = [&](int step) {
    const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BQ;
    const int64_t bh = b * p.H + h;
    const uint32_t st = stage(step);
    load_tile<BQ, D, kThreads>(st, q + p.st.q.row(b, h, 0), i0, p.Lq, p.E, p.st.q.l, tid);
    load_tile<BQ, D, kThreads>(st + Tiles::kRowBytes, gout + p.st.gout.row(b, h, 0), i0, p.Lq, p.E, p.st.gout.l, tid);
    for (int i = tid; i < 2 * BQ; i += kThreads) {
      const int64_t row = i0 + i % BQ;
      const float* src = (i < BQ ? lse : dvec) + bh * p.Lq + (row < p.Lq ? row : 0);
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(st + 2 * Tiles::kRowBytes + 4 * i),
                   "l"(src), "r"(row < p.Lq ? 4 : 0));
    }
    cp_commit();
  };
  if (nsteps > 0) issue(0);
  else cp_commit();

  float dk[D / 2] = {}, dv[D / 2] = {};
  const float scale = float(p.scale), sl2 = scale * kLog2e;
  const int64_t wkey0 = k0 + 64 * wg, key_base = wkey0 + 16 * warp + g;
  for (int step = 0; step < nsteps; ++step) {
    if (step + 1 < nsteps) {
      issue(step + 1);
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    fence_async_smem();
    __syncthreads();
    const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BQ;
    // causal: every query of the step precedes every key of this warpgroup (uniform per warpgroup).
    // Such a step is still computed (the checked scores zero it): wgmma on divergent paths makes
    // ptxas serialize every wgmma of the kernel (C7520), and it is one step per block.
    const bool live = !(p.causal && i0 + BQ - 1 < wkey0);
    const uint32_t Qt = stage(step), Gt = Qt + Tiles::kRowBytes;
    uint32_t pa[BQ / 16][4], da[BQ / 16][4];
    {
      const float* lse_s = reinterpret_cast<const float*>(generic + (Gt + Tiles::kRowBytes - Ks));
      const float* d_s = lse_s + BQ;
      float st[BQ / 2], dpt[BQ / 2];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BQ, kBf16>::template ss<0, 0>(st, kmajor<BK>(Ks, 64 * wg, kk), kmajor<BQ>(Qt, 0, kk), kk > 0);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BQ, kBf16>::template ss<0, 0>(dpt, kmajor<BK>(Vs, 64 * wg, kk), kmajor<BQ>(Gt, 0, kk), kk > 0);
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
    // dS^T -> (key, query) swizzled rows: fragment slice kk, register j: key row +8 (j & 1), queries
    // 16 kk + 8 (j >> 1) + 2 t4 (+1) = chunk 2 kk + (j >> 1), bytes 4 t4 of it
    {
      const int krow = 64 * wg + 16 * warp + g;
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
    // the dS^T tile complete: both warpgroups' halves (kSplitN) or this one's rows
    if constexpr (kSplitN) __syncthreads();
    else asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");
    float dq[DN / 2];
    if constexpr (kSplitN) {
      // dQ[:, w D/2 ..] = dS (BQ x BK, MN-major: queries contiguous) K[:, w D/2 ..] (BK x D/2, MN-major)
      const uint32_t kcol = D == 128 ? Ks + wg * (BK * 128) : Ks + wg * 64;
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        Wgmma<DN, kBf16>::template ss<1, 1>(dq, mnmajor<BK>(DSs, kk), mnmajor<BK>(kcol, kk), kk > 0);
    } else {
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        Wgmma<DN, kBf16>::template ss<1, 1>(dq, mnmajor<BK>(DSs + 64 * wg * 128, kk),
                                            mnmajor<BK>(Ks + 64 * wg * 128, kk), kk > 0);
    }
    wg_commit();
    wg_wait<0>();
    pin(dq);
    pin(dv);
    pin(dk);
    pin(pa);
    pin(da);
    if (kSplitN || live) {
      // dq fragment: (query 16 warp + g + 8 r, column 8 j + 2 t4 (+1) of this warpgroup's share)
      float* acc = dq_acc + (b * p.H + h) * p.Lq * D + (kSplitN ? wg * DN : 0);
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
    __syncthreads();  // this stage and the dS^T tile are refilled by the next iteration
  }
  cp_wait<0>();
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
