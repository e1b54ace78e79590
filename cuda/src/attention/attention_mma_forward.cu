// Tensor-core FlashAttention-2 forward for float16/bfloat16 (float32 accumulation). A block takes
// 128 query rows (4 warps x 32: two m16 row blocks per warp, so every K/V fragment read from shared
// memory feeds two products) of one (batch, head) and walks the key tiles of 64 with an online
// softmax in log2 units (2^(s scale log2e - m scale log2e): one FFMA and ex2 per score); P stays
// in registers as the A operand of P V. For head dim 64 the Q fragments stay in registers too.
// K/V tiles are double buffered: the next tile's cp.async runs while this one is multiplied.
// Tiles wholly inside the keys, below the causal diagonal (per warp) and without mask or dropout
// skip the per-element checks; a warp whose rows all precede a causal tile skips it.
#include "attention_mma.cuh"
#include "attention_mma.h"

namespace tt::cuda {
namespace {
using namespace mma;

constexpr int WM = 2;                // m16 row blocks per warp
constexpr int BR = 4 * 16 * WM, BC = 64;  // query rows per block, keys per tile

// grid (ceil(Lq / 128), B * H); q: (B, H, Lq, E), k, v: (B, Hkv, Lk, E) -> out (B, H, Lq, E), lse (B, H, Lq)
template <bool kBf16, int D, bool kGeneral>
__global__ void __launch_bounds__(kThreads) attention_forward_mma_kernel(AttentionParams p, const uint16_t* q,
                                                                         const uint16_t* k, const uint16_t* v,
                                                                         const float* mask, uint16_t* out,
                                                                         float* lse) {
  constexpr int LD = D + 8;
  constexpr bool kQRegs = D <= 64;  // D = 128 would need 64 more registers per thread
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* Qs = smem;
  uint16_t* KV[2] = {Qs + BR * LD, Qs + (BR + 2 * BC) * LD};  // each: K (BC rows) then V (BC rows)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;  // the longest causal rows first
  const uint16_t *kb = k + p.st.k.row(b, hk, 0), *vb = v + p.st.v.row(b, hk, 0);
  load_tile<BR, D>(Qs, q + p.st.q.row(b, h, 0), q0, p.Lq, p.E, p.st.q.l);
  load_tile<BC, D>(KV[0], kb, 0, p.Lk, p.E, p.st.k.l);
  load_tile<BC, D>(KV[0] + BC * LD, vb, 0, p.Lk, p.E, p.st.v.l);
  cp_commit();

  uint32_t qf[WM][D / 16][4];  // used (kept live) only when kQRegs
  float o[WM][D / 8][4] = {};
  float m_r[WM][2], l_r[WM][2];
#pragma unroll
  for (int m = 0; m < WM; ++m) m_r[m][0] = m_r[m][1] = -INFINITY, l_r[m][0] = l_r[m][1] = 0.f;
  // scores stay unscaled until the exponent; the additive mask is brought to their units
  const float sl2 = float(p.scale) * kLog2e, inv_scale = 1.f / float(p.scale);
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int ntiles = int((kend + BC - 1) / BC);
  const int64_t warp_row0 = q0 + warp * 16 * WM, row_base = warp_row0 + g;  // row of (m, r): row_base + 16 m + 8 r
  const bool plain = !kGeneral || (!mask && p.dropout_p <= 0);
  for (int t = 0; t < ntiles; ++t) {
    const int64_t k0 = int64_t(t) * BC;
    if (t + 1 < ntiles) {  // prefetch the next tile into the other buffer
      load_tile<BC, D>(KV[(t + 1) & 1], kb, k0 + BC, p.Lk, p.E, p.st.k.l);
      load_tile<BC, D>(KV[(t + 1) & 1] + BC * LD, vb, k0 + BC, p.Lk, p.E, p.st.v.l);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    if constexpr (kQRegs) {
      if (t == 0) load_a<WM, D, LD>(qf, Qs, warp * 16 * WM, lane);
    }
    // causal: every key of this tile follows every row of this warp, so P = 0 (warp-uniform)
    if (!(p.causal && k0 > warp_row0 + 16 * WM - 1)) {
      const uint16_t *Ks = KV[t & 1], *Vs = Ks + BC * LD;
      float s[WM][BC / 8][4] = {};
      if constexpr (kQRegs) gemm_abt<kBf16, WM, D, BC, LD, true>(s, qf, nullptr, 0, Ks, lane);
      else gemm_abt<kBf16, WM, D, BC, LD>(s, nullptr, Qs, warp * 16 * WM, Ks, lane);
      // keys past Lk, (causal) after the row, or masked: one uniform branch around the whole tile,
      // so that interior tiles run none of it (checks inside the element loop get if-converted,
      // and every tile would pay for them)
      if (!(plain && k0 + BC <= p.Lk && (!p.causal || k0 + BC - 1 <= warp_row0))) {
#pragma unroll
        for (int m = 0; m < WM; ++m)
#pragma unroll
          for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int64_t row = row_base + 16 * m + (e >> 1) * 8, col = k0 + nb * 8 + t4 * 2 + (e & 1);
              if (col >= p.Lk || (p.causal && col > row)) s[m][nb][e] = -INFINITY;
              else if (kGeneral && mask && row < p.Lq) s[m][nb][e] += mask_at(p, mask, b, h, row, col) * inv_scale;
            }
      }
      // online softmax on the raw scores: P = 2^(s sl2 - m sl2), one FFMA and one MUFU each
      float mx[WM][2];
#pragma unroll
      for (int m = 0; m < WM; ++m) {
        mx[m][0] = m_r[m][0], mx[m][1] = m_r[m][1];
#pragma unroll
        for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
          for (int e = 0; e < 4; ++e) mx[m][e >> 1] = fmaxf(mx[m][e >> 1], s[m][nb][e]);
      }
      float corr[WM][2], neg_m[WM][2];
#pragma unroll
      for (int m = 0; m < WM; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          mx[m][r] = fmaxf(mx[m][r], __shfl_xor_sync(0xffffffffu, mx[m][r], 1));
          mx[m][r] = fmaxf(mx[m][r], __shfl_xor_sync(0xffffffffu, mx[m][r], 2));
          const float m_use = mx[m][r] == -INFINITY ? 0.f : mx[m][r];  // a row with no key yet: P = 0, no NaN
          corr[m][r] = fast_exp2((m_r[m][r] - m_use) * sl2);
          neg_m[m][r] = -m_use * sl2;
          m_r[m][r] = mx[m][r];
          l_r[m][r] *= corr[m][r];
        }
#pragma unroll
      for (int m = 0; m < WM; ++m)
#pragma unroll
        for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float pr = fast_exp2(fmaf(s[m][nb][e], sl2, neg_m[m][e >> 1]));
            l_r[m][e >> 1] += pr;
            s[m][nb][e] = pr;
          }
      if (kGeneral && p.dropout_p > 0) {
#pragma unroll
        for (int m = 0; m < WM; ++m)
#pragma unroll
          for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int64_t row = row_base + 16 * m + (e >> 1) * 8, col = k0 + nb * 8 + t4 * 2 + (e & 1);
              if (row < p.Lq && col < p.Lk) s[m][nb][e] *= keep_scale(p, bh, row, col);
            }
      }
#pragma unroll
      for (int m = 0; m < WM; ++m)
#pragma unroll
        for (int d = 0; d < D / 8; ++d) {
          o[m][d][0] *= corr[m][0], o[m][d][1] *= corr[m][0];
          o[m][d][2] *= corr[m][1], o[m][d][3] *= corr[m][1];
        }
      gemm_cb<kBf16, WM, BC, D, LD>(o, s, Vs, lane);
    }
    __syncthreads();  // this buffer is refilled by the next iteration's prefetch
  }
#pragma unroll
  for (int m = 0; m < WM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = l_r[m][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const int64_t row = row_base + 16 * m + r * 8;
      if (row >= p.Lq) continue;
      const float inv = l > 0 ? 1.f / l : 0.f;
      uint16_t* orow = out + p.st.out.row(b, h, row);
#pragma unroll
      for (int d = 0; d < D / 8; ++d) {
        const int col = d * 8 + t4 * 2;
        if (col < p.E)
          *reinterpret_cast<uint32_t*>(orow + col) = pack2<kBf16>(o[m][d][2 * r] * inv, o[m][d][2 * r + 1] * inv);
      }
      if (t4 == 0) lse[bh * p.Lq + row] = l > 0 ? m_r[m][r] * float(p.scale) + logf(l) : -INFINITY;
    }
}

template <bool kBf16, int D>
void launch_forward(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                    const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const size_t bytes = size_t(BR + 4 * BC) * (D + 8) * sizeof(uint16_t);
  // the mask / dropout code (Philox) in its own instantiation, so that the common kernel keeps its registers
  const bool general = mask.defined() || p.dropout_p > 0;
  auto kernel = general ? attention_forward_mma_kernel<kBf16, D, true> : attention_forward_mma_kernel<kBf16, D, false>;
  allow_smem(kernel, bytes);
  dim3 grid(unsigned((p.Lq + BR - 1) / BR), unsigned(p.B * p.H));
  auto u16 = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data_ptr()); };
  kernel<<<grid, kThreads, bytes, stream>>>(p, u16(q), u16(k), u16(v), mask.defined() ? mask.data<float>() : nullptr,
                                            static_cast<uint16_t*>(out.data_ptr()), lse.data<float>());
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace

int attention_mma_head_dim(const AttentionParams& p, const Tensor& q) {
  if (q.dtype() != DType::Float16 && q.dtype() != DType::BFloat16) return 0;
  if (p.E != p.Ev || p.E % 8 != 0 || p.E > 128) return 0;
  return p.E <= 64 ? 64 : 128;
}

bool attention_forward_mma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const int D = attention_mma_head_dim(p, q);
  auto aligned = [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; };
  // scores stay unscaled until the exponent, so the running max needs scale > 0
  if (!D || !(p.scale > 0) || !aligned(q) || !aligned(k) || !aligned(v) || !aligned(out)) return false;
  for (const HeadStrides& s : {p.st.q, p.st.k, p.st.v, p.st.out})
    if (!rows_aligned(s)) return false;
  if (q.dtype() == DType::BFloat16)
    (D == 64 ? launch_forward<true, 64> : launch_forward<true, 128>)(p, q, k, v, mask, out, lse, stream);
  else
    (D == 64 ? launch_forward<false, 64> : launch_forward<false, 128>)(p, q, k, v, mask, out, lse, stream);
  return true;
}

}  // namespace tt::cuda
