#pragma once
// Hopper (sm_90a) FlashAttention-2 backward for float16/bfloat16, head dims 64 and 128, no mask or
// dropout, on warpgroup MMA (wgmma.cuh). Two kernels, so that no gradient needs atomics
// (deterministic); warpgroup w of a block owns rows 64w..64w+63 of every product:
// - dQ: a block takes 64 kWG query rows and walks the key tiles of BC: S = Q K^T and dP = dO V^T
//   (Q, dO, K, V all K-major), dS = P (dP - D), dQ += dS K (dS from registers, K read MN-major).
// - dK/dV: a block takes 64 kWG keys of one kv head and walks the query tiles of BQ of every head
//   of its group: S^T = K Q^T, dP^T = V dO^T, then dV += P^T dO and dK += dS^T Q (P^T, dS^T from
//   registers; dO, Q read MN-major).
// P = 2^(s scale log2e - lse log2e); D = rowsum(dO * O) comes from the caller. The next key (query)
// tile's cp.async loads run while this one is multiplied.
#include <type_traits>
#include "attention_wgmma.cuh"

namespace tt::cuda::wg {

template <int D, int kWG, int BC>
struct BackwardQTiles {
  static constexpr int BR = 64 * kWG, kThreads = 128 * kWG;
  static constexpr uint32_t kRowBytes = BR * D * 2, kTileBytes = BC * D * 2;
  static constexpr size_t kSmemBytes = 2 * kRowBytes + 4 * kTileBytes + 1024;  // Q, dO, 2 x (K, V)
};

// grid (ceil(Lq / BR), B * H); q, gout: (B, H, Lq, E), k, v: (B, Hkv, Lk, E); lse, dvec: (B, H, Lq) -> gq (B, H, Lq, E)
template <bool kBf16, int D, int kWG, int BC>
__global__ void __launch_bounds__(128 * kWG, 1)
    attention_backward_q_wgmma_kernel(AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                      const uint16_t* gout, const float* lse, const float* dvec, uint16_t* gq) {
#if TT_HAS_WGMMA
  using Tiles = BackwardQTiles<D, kWG, BC>;
  constexpr int BR = Tiles::BR, kThreads = Tiles::kThreads;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Qs = smem_base(smem_raw), Gs = Qs + Tiles::kRowBytes, KV0 = Gs + Tiles::kRowBytes;
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;  // the longest causal rows first
  const int64_t wrow0 = q0 + 64 * wg, row_base = wrow0 + 16 * warp + g;  // row of fragment half r: row_base + 8 r
  const uint16_t *kb = k + p.st.k.row(b, hk, 0), *vb = v + p.st.v.row(b, hk, 0);
  auto k_tile = [&](int t) { return KV0 + (t & 1) * 2 * Tiles::kTileBytes; };
  auto v_tile = [&](int t) { return KV0 + (t & 1) * 2 * Tiles::kTileBytes + Tiles::kTileBytes; };
  load_tile<BR, D, kThreads>(Qs, q + p.st.q.row(b, h, 0), q0, p.Lq, p.E, p.st.q.l, tid);
  load_tile<BR, D, kThreads>(Gs, gout + p.st.gout.row(b, h, 0), q0, p.Lq, p.E, p.st.gout.l, tid);
  load_tile<BC, D, kThreads>(k_tile(0), kb, 0, p.Lk, p.E, p.st.k.l, tid);
  load_tile<BC, D, kThreads>(v_tile(0), vb, 0, p.Lk, p.E, p.st.v.l, tid);
  cp_commit();
  float L2[2], Dr[2];  // lse in log2 units (-inf past Lq), D
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = row_base + 8 * r;
    L2[r] = row < p.Lq ? lse[bh * p.Lq + row] * kLog2e : -INFINITY;
    Dr[r] = row < p.Lq ? dvec[bh * p.Lq + row] : 0.f;
  }
  float dq[D / 2] = {};
  const float scale = float(p.scale), sl2 = scale * kLog2e;
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int ntiles = int((kend + BC - 1) / BC);
  for (int t = 0; t < ntiles; ++t) {
    const int64_t k0 = int64_t(t) * BC;
    if (t + 1 < ntiles) {  // prefetch the next K/V tile into the other buffer
      load_tile<BC, D, kThreads>(k_tile(t + 1), kb, k0 + BC, p.Lk, p.E, p.st.k.l, tid);
      load_tile<BC, D, kThreads>(v_tile(t + 1), vb, k0 + BC, p.Lk, p.E, p.st.v.l, tid);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    fence_async_smem();
    __syncthreads();
    if (!(p.causal && k0 > wrow0 + 63)) {  // else every key of the tile follows every row of this warpgroup
      float s[BC / 2], dp[BC / 2];
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BC, kBf16>::template ss<0, 0>(s, kmajor<BR>(Qs, 64 * wg, kk), kmajor<BC>(k_tile(t), 0, kk), kk > 0);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Wgmma<BC, kBf16>::template ss<0, 0>(dp, kmajor<BR>(Gs, 64 * wg, kk), kmajor<BC>(v_tile(t), 0, kk), kk > 0);
      wg_commit();
      wg_wait<0>();
      pin(s);
      pin(dp);
      // dS = P (dP - D); the bounds only where the tile needs them (one uniform branch: per
      // element they would be if-converted and paid by every tile)
      if (k0 + BC <= p.Lk && wrow0 + 64 <= p.Lq && (!p.causal || k0 + BC - 1 <= wrow0)) {
#pragma unroll
        for (int i = 0; i < BC / 2; ++i) {
          const int r = (i >> 1) & 1;
          s[i] = fast_exp2(fmaf(s[i], sl2, -L2[r])) * (dp[i] - Dr[r]);
        }
      } else {
        const int rel = int(row_base - k0), lim = int(p.Lk - k0 < BC ? p.Lk - k0 : BC);
#pragma unroll
        for (int i = 0; i < BC / 2; ++i) {
          const int r = (i >> 1) & 1, col = (i >> 2) * 8 + t4 * 2 + (i & 1);
          const bool on = col < lim && L2[r] != -INFINITY && !(p.causal && col > rel + 8 * r);
          s[i] = on ? fast_exp2(fmaf(s[i], sl2, -L2[r])) * (dp[i] - Dr[r]) : 0.f;
        }
      }
      uint32_t da[BC / 16][4];
      to_a<kBf16, BC>(da, s);
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BC / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dq, da[kk], mnmajor<BC>(k_tile(t), kk), 1);
      wg_commit();
      wg_wait<0>();
      pin(dq);
      pin(da);
    }
    __syncthreads();  // this buffer is refilled by the next iteration's prefetch
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = row_base + 8 * r;
    if (row >= p.Lq) continue;
    uint16_t* grow = gq + p.st.gq.row(b, h, row);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      const int col = j * 8 + t4 * 2;
      if (col < p.E)
        *reinterpret_cast<uint32_t*>(grow + col) = pack2<kBf16>(dq[4 * j + 2 * r] * scale, dq[4 * j + 2 * r + 1] * scale);
    }
  }
#endif
}

// A warpgroup's dK (scaled) and dV accumulators (64 keys x D, fragment rows key_base + 8 r) -> gk, gv.
template <bool kBf16, int D>
__device__ __forceinline__ void store_dk_dv(const AttentionParams& p, const float (&dk)[D / 2],
                                            const float (&dv)[D / 2], uint16_t* gk, uint16_t* gv, int64_t b,
                                            int64_t hk, int64_t key_base, int t4, float scale) {
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
}

template <int D, int kWG, int BQ>
struct BackwardKVTiles {
  static constexpr int BK = 64 * kWG, kThreads = 128 * kWG;
  static constexpr uint32_t kKeyBytes = BK * D * 2, kRowBytes = BQ * D * 2;
  static constexpr uint32_t kStageBytes = 2 * kRowBytes + 1024;  // Q, dO, then lse and D (BQ floats each)
  static constexpr size_t kSmemBytes = 2 * kKeyBytes + 2 * kStageBytes + 1024;
  static_assert(2 * BQ * 4 <= 1024, "row statistics fit their slot");
};

// grid (ceil(Lk / BK), B * Hkv) -> gk, gv: (B, Hkv, Lk, E)
template <bool kBf16, int D, int kWG, int BQ>
__global__ void __launch_bounds__(128 * kWG, 1)
    attention_backward_kv_wgmma_kernel(AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                       const uint16_t* gout, const float* lse, const float* dvec, uint16_t* gk,
                                       uint16_t* gv) {
#if TT_HAS_WGMMA
  using Tiles = BackwardKVTiles<D, kWG, BQ>;
  constexpr int BK = Tiles::BK, kThreads = Tiles::kThreads;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t Ks = smem_base(smem_raw), Vs = Ks + Tiles::kKeyBytes, ST0 = Vs + Tiles::kKeyBytes;
  const uint8_t* generic = smem_raw + (Ks - smem_u32(smem_raw));  // Ks as a generic pointer
  auto stage = [&](int s) { return ST0 + (s & 1) * Tiles::kStageBytes; };
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bhk = blockIdx.y, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const int64_t k0 = int64_t(blockIdx.x) * BK;
  load_tile<BK, D, kThreads>(Ks, k + p.st.k.row(b, hk, 0), k0, p.Lk, p.E, p.st.k.l, tid);
  load_tile<BK, D, kThreads>(Vs, v + p.st.v.row(b, hk, 0), k0, p.Lk, p.E, p.st.v.l, tid);
  // the (head, query tile) steps of this block, in order
  const int64_t i_first = p.causal ? k0 / BQ * BQ : 0;
  const int per_head = int(p.Lq > i_first ? (p.Lq - i_first + BQ - 1) / BQ : 0);
  const int nsteps = int(group) * per_head;
  auto issue = [&](int step) {
    const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BQ;
    const int64_t bh = b * p.H + h;
    const uint32_t st = stage(step);
    load_tile<BQ, D, kThreads>(st, q + p.st.q.row(b, h, 0), i0, p.Lq, p.E, p.st.q.l, tid);
    load_tile<BQ, D, kThreads>(st + Tiles::kRowBytes, gout + p.st.gout.row(b, h, 0), i0, p.Lq, p.E, p.st.gout.l, tid);
    for (int i = tid; i < 2 * BQ; i += kThreads) {  // lse then D, 4 bytes each (rows need not be 16-byte aligned)
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
  const int64_t wkey0 = k0 + 64 * wg, key_base = wkey0 + 16 * warp + g;  // key of fragment half r: key_base + 8 r
  for (int step = 0; step < nsteps; ++step) {
    if (step + 1 < nsteps) {
      issue(step + 1);
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    fence_async_smem();
    __syncthreads();
    const int64_t i0 = i_first + int64_t(step % per_head) * BQ;
    if (!(p.causal && i0 + BQ - 1 < wkey0)) {  // else every query of the step precedes every key of this warpgroup
      const uint32_t Qt = stage(step), Gt = Qt + Tiles::kRowBytes;
      const float* lse_s = reinterpret_cast<const float*>(generic + (Gt + Tiles::kRowBytes - Ks));
      const float* d_s = lse_s + BQ;
      float st[BQ / 2], dpt[BQ / 2];  // S^T, dP^T: (64 keys of this warpgroup, BQ queries)
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
      // element i: key key_base + 8 ((i >> 1) & 1), query i0 + qi; the bounds only where needed
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
          dpt[i] = pr * (dpt[i] - d_s[qi]);  // dS^T
          st[i] = pr;                        // P^T
        }
      };
      if (wkey0 + 64 <= p.Lk && i0 + BQ <= p.Lq && (!p.causal || wkey0 + 63 <= i0)) scores(std::false_type{});
      else scores(std::true_type{});
      uint32_t pa[BQ / 16][4], da[BQ / 16][4];
      to_a<kBf16, BQ>(pa, st);
      to_a<kBf16, BQ>(da, dpt);
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BQ / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dv, pa[kk], mnmajor<BQ>(Gt, kk), 1);
#pragma unroll
      for (int kk = 0; kk < BQ / 16; ++kk) Wgmma<D, kBf16>::template rs<1>(dk, da[kk], mnmajor<BQ>(Qt, kk), 1);
      wg_commit();
      wg_wait<0>();
      pin(dv);
      pin(dk);
      pin(pa);
      pin(da);
    }
    __syncthreads();  // this stage is refilled by the next iteration's prefetch
  }
  cp_wait<0>();  // (no step: the K/V loads are still in flight)
  store_dk_dv<kBf16, D>(p, dk, dv, gk, gv, b, hk, key_base, t4, scale);
#endif
}

}  // namespace tt::cuda::wg
