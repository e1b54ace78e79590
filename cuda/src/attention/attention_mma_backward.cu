// Tensor-core FlashAttention-2 backward for float16/bfloat16 (float32 accumulation), in two
// kernels so that no gradient needs atomics (deterministic):
// - dK/dV: a block takes 64 WM keys (4 warps x 16 WM: WM = 2 for head dim 64, 1 for 128, which
//   would need twice the accumulator registers) of one (batch, kv head) and walks the query tiles
//   of 32 of every head of its group; per warp S^T = K Q^T and dP^T = V dO^T, then
//   P = exp2(S log2e - lse log2e), dS = P (dP - D), dV += P^T dO and dK += dS^T Q with P^T, dS^T
//   as A operands straight from the accumulators. Query tiles (Q, dO, lse, D) are double buffered.
// - dQ: a block takes 128 query rows (4 warps x 32) as the forward does and walks the key tiles
//   of 32: S = Q K^T, dP = dO V^T, dS, dQ += dS K. K/V tiles are double buffered; for head dim
//   64 the Q and dO fragments stay in registers.
// Each warp skips the causal steps where all its keys follow all the step's queries.
// D = rowsum(dO * O) comes from the caller (cuda/src/attention/attention.cu).
#include <array>
#include <mutex>
#include <type_traits>
#include "attention_mma.cuh"
#include "attention_mma.h"

namespace tt::cuda {
namespace {
using namespace mma;

// m16 key blocks per warp in the dK/dV kernel.
template <int D>
constexpr int kv_warp_blocks() { return D <= 64 ? 2 : 1; }
constexpr int kKvQueryRows = 32;  // query rows per dK/dV step

// grid (ceil(Lk / (64 WM)), B * Hkv); q, gout: (B, H, Lq, E), k, v: (B, Hkv, Lk, E); lse, dvec: (B, H, Lq)
// -> gk, gv: (B, Hkv, Lk, E)
template <bool kBf16, int D, bool kGeneral>
__global__ void __launch_bounds__(kThreads) attention_backward_kv_mma_kernel(
    AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v, const uint16_t* gout,
    const float* mask, const float* lse, const float* dvec, uint16_t* gk, uint16_t* gv) {
  constexpr int WM = kv_warp_blocks<D>(), BC = 4 * 16 * WM, BR = kKvQueryRows, LD = D + 8;
  constexpr int kStage = 2 * BR * LD + 2 * BR * 2;  // Q, dO rows, then lse and D as floats (2 halves each)
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t *Ks = smem, *Vs = Ks + BC * LD;
  uint16_t* stage[2] = {Vs + BC * LD, Vs + BC * LD + kStage};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bhk = blockIdx.y, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const int64_t k0 = int64_t(blockIdx.x) * BC;
  load_tile<BC, D>(Ks, k + p.st.k.row(b, hk, 0), k0, p.Lk, p.E, p.st.k.l);
  load_tile<BC, D>(Vs, v + p.st.v.row(b, hk, 0), k0, p.Lk, p.E, p.st.v.l);
  // the (head, query tile) steps of this block, in order
  const int64_t i_first = p.causal ? k0 / BR * BR : 0;
  const int per_head = int((p.Lq - i_first + BR - 1) / BR);
  const int nsteps = int(group) * (per_head > 0 ? per_head : 0);
  auto issue = [&](int step) {
    const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BR;
    const int64_t bh = b * p.H + h;
    uint16_t* st = stage[step & 1];
    load_tile<BR, D>(st, q + p.st.q.row(b, h, 0), i0, p.Lq, p.E, p.st.q.l);
    load_tile<BR, D>(st + BR * LD, gout + p.st.gout.row(b, h, 0), i0, p.Lq, p.E, p.st.gout.l);
    float* stats = reinterpret_cast<float*>(st + 2 * BR * LD);
    load_row_stats<BR>(stats, lse + bh * p.Lq, i0, p.Lq);
    load_row_stats<BR>(stats + BR, dvec + bh * p.Lq, i0, p.Lq);
    cp_commit();
  };
  if (nsteps > 0) issue(0);
  else cp_commit();

  float dk[WM][D / 8][4] = {}, dv[WM][D / 8][4] = {};
  const float scale = float(p.scale), sl2 = scale * kLog2e;
  const int64_t warp_key0 = k0 + warp * 16 * WM, key_base = warp_key0 + g;  // key of (m, r): key_base + 16 m + 8 r
  const bool plain = !kGeneral || (!mask && p.dropout_p <= 0);
  for (int step = 0; step < nsteps; ++step) {
    if (step + 1 < nsteps) {
      issue(step + 1);
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    const int64_t h = hk * group + step / per_head, i0 = i_first + int64_t(step % per_head) * BR;
    const int64_t bh = b * p.H + h;
    if (!(p.causal && i0 + BR - 1 < warp_key0)) {
      const uint16_t *Qs = stage[step & 1], *Gs = Qs + BR * LD;
      const float* lse_s = reinterpret_cast<const float*>(Gs + BR * LD);
      const float* d_s = lse_s + BR;
      float st[WM][BR / 8][4] = {}, dpt[WM][BR / 8][4] = {};  // S^T, dP^T: (16 WM keys of this warp, BR queries)
      gemm_abt<kBf16, WM, D, BR, LD>(st, nullptr, Ks, warp * 16 * WM, Qs, lane);
      gemm_abt<kBf16, WM, D, BR, LD>(dpt, nullptr, Vs, warp * 16 * WM, Gs, lane);
      // keys all valid, queries all valid and past every key of this warp: no checks (lse is
      // finite: key 0 or more takes part in every row when there is no mask)
      const bool inside = plain && warp_key0 + 16 * WM <= p.Lk && i0 + BR <= p.Lq &&
                          (!p.causal || warp_key0 + 16 * WM - 1 <= i0);
      // one uniform branch picks the instantiation (per-element checks would be if-converted
      // and paid by every tile)
      auto scores = [&](auto checks) {
#pragma unroll
        for (int nb = 0; nb < BR / 8; ++nb)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int qi = nb * 8 + t4 * 2 + (e & 1);
            const float L = lse_s[qi], L2 = L * kLog2e, Dq = d_s[qi];
#pragma unroll
            for (int m = 0; m < WM; ++m) {
              float pr, kd = 1.f;
              if constexpr (!decltype(checks)::value) {
                pr = fast_exp2(st[m][nb][e] * sl2 - L2);
              } else {
                const int64_t key = key_base + 16 * m + (e >> 1) * 8, row = i0 + qi;
                pr = 0.f;
                if (key < p.Lk && row < p.Lq && L != -INFINITY && !(p.causal && key > row)) {
                  float x = st[m][nb][e] * scale;
                  if (kGeneral && mask) x += mask_at(p, mask, b, h, row, key);
                  pr = fast_exp2(x * kLog2e - L2);
                  if (kGeneral && p.dropout_p > 0) kd = keep_scale(p, bh, row, key);
                }
              }
              dpt[m][nb][e] = pr * (dpt[m][nb][e] * kd - Dq);  // dS^T
              st[m][nb][e] = pr * kd;                         // dropped P^T
            }
          }
      };
      if (inside) scores(std::false_type{});
      else scores(std::true_type{});
      gemm_cb<kBf16, WM, BR, D, LD>(dv, st, Gs, lane);   // dV += P^T dO
      gemm_cb<kBf16, WM, BR, D, LD>(dk, dpt, Qs, lane);  // dK += dS^T Q
    }
    __syncthreads();  // this stage is refilled by the next iteration's prefetch
  }
  cp_wait<0>();  // (no step: the K/V loads are still in flight)
#pragma unroll
  for (int m = 0; m < WM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t key = key_base + 16 * m + r * 8;
      if (key >= p.Lk) continue;
#pragma unroll
      for (int d = 0; d < D / 8; ++d) {
        const int col = d * 8 + t4 * 2;
        if (col >= p.E) continue;
        *reinterpret_cast<uint32_t*>(gk + p.st.gk.row(b, hk, key) + col) =
            pack2<kBf16>(dk[m][d][2 * r] * scale, dk[m][d][2 * r + 1] * scale);
        *reinterpret_cast<uint32_t*>(gv + p.st.gv.row(b, hk, key) + col) =
            pack2<kBf16>(dv[m][d][2 * r], dv[m][d][2 * r + 1]);
      }
    }
}

constexpr int kQWarpBlocks = 2;                     // m16 query blocks per warp in the dQ kernel
constexpr int kQRows = 4 * 16 * kQWarpBlocks;       // query rows per dQ block
constexpr int kQKeys = 32;                          // keys per dQ tile

// grid (ceil(Lq / 128), B * H) -> gq: (B, H, Lq, E)
template <bool kBf16, int D, bool kGeneral>
__global__ void __launch_bounds__(kThreads) attention_backward_q_mma_kernel(
    AttentionParams p, const uint16_t* q, const uint16_t* k, const uint16_t* v, const uint16_t* gout,
    const float* mask, const float* lse, const float* dvec, uint16_t* gq) {
  constexpr int WM = kQWarpBlocks, BR = kQRows, BC = kQKeys, LD = D + 8;
  constexpr bool kRegs = D <= 64;  // Q and dO fragments in registers
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t *Qs = smem, *Gs = Qs + BR * LD;
  uint16_t* KV[2] = {Gs + BR * LD, Gs + BR * LD + 2 * BC * LD};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;
  const uint16_t *kb = k + p.st.k.row(b, hk, 0), *vb = v + p.st.v.row(b, hk, 0);
  load_tile<BR, D>(Qs, q + p.st.q.row(b, h, 0), q0, p.Lq, p.E, p.st.q.l);
  load_tile<BR, D>(Gs, gout + p.st.gout.row(b, h, 0), q0, p.Lq, p.E, p.st.gout.l);
  load_tile<BC, D>(KV[0], kb, 0, p.Lk, p.E, p.st.k.l);
  load_tile<BC, D>(KV[0] + BC * LD, vb, 0, p.Lk, p.E, p.st.v.l);
  cp_commit();
  const int64_t warp_row0 = q0 + warp * 16 * WM, row_base = warp_row0 + g;  // row of (m, r): row_base + 16 m + 8 r
  float L[WM][2], L2[WM][2], Dr[WM][2];
#pragma unroll
  for (int m = 0; m < WM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t row = row_base + 16 * m + r * 8;
      L[m][r] = row < p.Lq ? lse[bh * p.Lq + row] : -INFINITY;
      L2[m][r] = L[m][r] * kLog2e;
      Dr[m][r] = row < p.Lq ? dvec[bh * p.Lq + row] : 0.f;
    }
  uint32_t qf[WM][D / 16][4], gf[WM][D / 16][4];  // used (kept live) only when kRegs
  float dq[WM][D / 8][4] = {};
  const float scale = float(p.scale), sl2 = scale * kLog2e;
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int ntiles = int((kend + BC - 1) / BC);
  const bool plain = !kGeneral || (!mask && p.dropout_p <= 0);
  for (int t = 0; t < ntiles; ++t) {
    const int64_t k0 = int64_t(t) * BC;
    if (t + 1 < ntiles) {
      load_tile<BC, D>(KV[(t + 1) & 1], kb, k0 + BC, p.Lk, p.E, p.st.k.l);
      load_tile<BC, D>(KV[(t + 1) & 1] + BC * LD, vb, k0 + BC, p.Lk, p.E, p.st.v.l);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    if constexpr (kRegs) {
      if (t == 0) {
        load_a<WM, D, LD>(qf, Qs, warp * 16 * WM, lane);
        load_a<WM, D, LD>(gf, Gs, warp * 16 * WM, lane);
      }
    }
    if (!(p.causal && k0 > warp_row0 + 16 * WM - 1)) {
      const uint16_t *Ks = KV[t & 1], *Vs = Ks + BC * LD;
      float s[WM][BC / 8][4] = {}, dp[WM][BC / 8][4] = {};
      if constexpr (kRegs) {
        gemm_abt<kBf16, WM, D, BC, LD, true>(s, qf, nullptr, 0, Ks, lane);
        gemm_abt<kBf16, WM, D, BC, LD, true>(dp, gf, nullptr, 0, Vs, lane);
      } else {
        gemm_abt<kBf16, WM, D, BC, LD>(s, nullptr, Qs, warp * 16 * WM, Ks, lane);
        gemm_abt<kBf16, WM, D, BC, LD>(dp, nullptr, Gs, warp * 16 * WM, Vs, lane);
      }
      const bool inside = plain && k0 + BC <= p.Lk && warp_row0 + 16 * WM <= p.Lq &&
                          (!p.causal || k0 + BC - 1 <= warp_row0);
      auto scores = [&](auto checks) {
#pragma unroll
        for (int m = 0; m < WM; ++m)
#pragma unroll
          for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int r = e >> 1;
              float pr, kd = 1.f;
              if constexpr (!decltype(checks)::value) {
                pr = fast_exp2(s[m][nb][e] * sl2 - L2[m][r]);
              } else {
                const int64_t row = row_base + 16 * m + r * 8, col = k0 + nb * 8 + t4 * 2 + (e & 1);
                pr = 0.f;
                if (col < p.Lk && row < p.Lq && L[m][r] != -INFINITY && !(p.causal && col > row)) {
                  float x = s[m][nb][e] * scale;
                  if (kGeneral && mask) x += mask_at(p, mask, b, h, row, col);
                  pr = fast_exp2(x * kLog2e - L2[m][r]);
                  if (kGeneral && p.dropout_p > 0) kd = keep_scale(p, bh, row, col);
                }
              }
              s[m][nb][e] = pr * (dp[m][nb][e] * kd - Dr[m][r]);  // dS
            }
      };
      if (inside) scores(std::false_type{});
      else scores(std::true_type{});
      gemm_cb<kBf16, WM, BC, D, LD>(dq, s, Ks, lane);  // dQ += dS K
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < WM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t row = row_base + 16 * m + r * 8;
      if (row >= p.Lq) continue;
#pragma unroll
      for (int d = 0; d < D / 8; ++d) {
        const int col = d * 8 + t4 * 2;
        if (col < p.E)
          *reinterpret_cast<uint32_t*>(gq + p.st.gq.row(b, h, row) + col) =
              pack2<kBf16>(dq[m][d][2 * r] * scale, dq[m][d][2 * r + 1] * scale);
      }
    }
}

template <bool kBf16, int D>
void launch_backward(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& mask, const Tensor& lse, const Tensor& dvec, const Tensor& gq, const Tensor& gk,
                     const Tensor& gv, cudaStream_t stream) {
  auto u16 = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data_ptr()); };
  const float* mp = mask.defined() ? mask.data<float>() : nullptr;
  constexpr int BCK = 4 * 16 * kv_warp_blocks<D>(), BR = kKvQueryRows, LD = D + 8;
  const size_t kv_bytes = size_t(2 * BCK * LD + 2 * (2 * BR * LD + 4 * BR)) * sizeof(uint16_t);
  // the mask / dropout code (Philox) in its own instantiations, so that the common kernels keep their registers
  const bool general = mask.defined() || p.dropout_p > 0;
  auto kv = general ? attention_backward_kv_mma_kernel<kBf16, D, true> : attention_backward_kv_mma_kernel<kBf16, D, false>;
  allow_smem(kv, kv_bytes);
  const size_t q_bytes = size_t(2 * kQRows + 4 * kQKeys) * LD * sizeof(uint16_t);
  auto qk = general ? attention_backward_q_mma_kernel<kBf16, D, true> : attention_backward_q_mma_kernel<kBf16, D, false>;
  allow_smem(qk, q_bytes);
  AttentionSideStream& side = attention_side_stream(q.device().index);
  std::lock_guard<std::mutex> lock(side.mu);
  TT_CUDA_CHECK(cudaEventRecord(side.fork, stream));  // the side stream starts after everything before this call
  TT_CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.fork, 0));
  qk<<<dim3(unsigned((p.Lq + kQRows - 1) / kQRows), unsigned(p.B * p.H)), kThreads, q_bytes, side.stream>>>(
      p, u16(q), u16(k), u16(v), u16(gout), mp, lse.data<float>(), dvec.data<float>(),
      static_cast<uint16_t*>(gq.data_ptr()));
  TT_CUDA_KERNEL_CHECK();
  kv<<<dim3(unsigned((p.Lk + BCK - 1) / BCK), unsigned(p.B * p.Hkv)), kThreads, kv_bytes, stream>>>(
      p, u16(q), u16(k), u16(v), u16(gout), mp, lse.data<float>(), dvec.data<float>(),
      static_cast<uint16_t*>(gk.data_ptr()), static_cast<uint16_t*>(gv.data_ptr()));
  TT_CUDA_KERNEL_CHECK();
  TT_CUDA_CHECK(cudaEventRecord(side.join, side.stream));  // and the caller's stream waits for it
  TT_CUDA_CHECK(cudaStreamWaitEvent(stream, side.join, 0));
}

}  // namespace

AttentionSideStream& attention_side_stream(int device) {
  static std::array<AttentionSideStream, 64> all;
  TT_CHECK(device >= 0 && device < 64, "attention: device index ", device, " out of range");
  AttentionSideStream& s = all[size_t(device)];
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.stream) {
    TT_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    TT_CUDA_CHECK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
    TT_CUDA_CHECK(cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming));
  }
  return s;
}

bool attention_backward_mma(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                            const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream) {
  const int D = attention_mma_head_dim(p, q);
  auto aligned = [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; };
  if (!D || !aligned(q) || !aligned(k) || !aligned(v) || !aligned(gout) || !aligned(gq) || !aligned(gk) ||
      !aligned(gv))
    return false;
  for (const HeadStrides& s : {p.st.q, p.st.k, p.st.v, p.st.gout, p.st.gq, p.st.gk, p.st.gv})
    if (!rows_aligned(s)) return false;
  if (q.dtype() == DType::BFloat16)
    (D == 64 ? launch_backward<true, 64> : launch_backward<true, 128>)(p, gout, q, k, v, mask, lse, dvec, gq, gk, gv,
                                                                       stream);
  else
    (D == 64 ? launch_backward<false, 64> : launch_backward<false, 128>)(p, gout, q, k, v, mask, lse, dvec, gq, gk,
                                                                         gv, stream);
  return true;
}

}  // namespace tt::cuda
