// Tensor-core FlashAttention-2 forward for float16/bfloat16 (float32 accumulation). A block takes
// 64 query rows (4 warps x 16) of one (batch, head) and walks the key tiles of 64 with an online
// softmax in log2 units; P stays in registers as the A operand of P V. K/V tiles are double
// buffered: the next tile's cp.async runs while this one is multiplied. Tiles wholly inside the
// keys, below the causal diagonal and without mask or dropout skip the per-element checks.
#include "attention_mma.cuh"
#include "attention_mma.h"

namespace tt::cuda {
namespace {
using namespace mma;

constexpr int BR = 64, BC = 64;

// grid (ceil(Lq / 64), B * H); q: (B, H, Lq, E), k, v: (B, Hkv, Lk, E) -> out (B, H, Lq, E), lse (B, H, Lq)
template <bool kBf16, int D>
__global__ void __launch_bounds__(kThreads) attention_forward_mma_kernel(AttentionParams p, const uint16_t* q,
                                                                         const uint16_t* k, const uint16_t* v,
                                                                         const float* mask, uint16_t* out,
                                                                         float* lse) {
  constexpr int LD = D + 8;
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* Qs = smem;
  uint16_t* KV[2] = {Qs + BR * LD, Qs + (BR + 2 * BC) * LD};  // each: K (BC rows) then V (BC rows)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t bh = blockIdx.y, b = bh / p.H, h = bh % p.H, bhk = b * p.Hkv + h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.x - 1 - blockIdx.x) * BR;  // the longest causal rows first
  const uint16_t *kb = k + bhk * p.Lk * p.E, *vb = v + bhk * p.Lk * p.E;
  load_tile<BR, D>(Qs, q + bh * p.Lq * p.E, q0, p.Lq, p.E);
  load_tile<BC, D>(KV[0], kb, 0, p.Lk, p.E);
  load_tile<BC, D>(KV[0] + BC * LD, vb, 0, p.Lk, p.E);
  cp_commit();

  float o[D / 8][4] = {};
  float m_r[2] = {-INFINITY, -INFINITY}, l_r[2] = {0.f, 0.f};
  const float sl2 = float(p.scale) * kLog2e;
  const int64_t kend = p.causal ? (q0 + BR < p.Lk ? q0 + BR : p.Lk) : p.Lk;
  const int ntiles = int((kend + BC - 1) / BC);
  const int64_t row_base = q0 + warp * 16 + g;
  const bool plain = !mask && p.dropout_p <= 0;
  for (int t = 0; t < ntiles; ++t) {
    const int64_t k0 = int64_t(t) * BC;
    if (t + 1 < ntiles) {  // prefetch the next tile into the other buffer
      load_tile<BC, D>(KV[(t + 1) & 1], kb, k0 + BC, p.Lk, p.E);
      load_tile<BC, D>(KV[(t + 1) & 1] + BC * LD, vb, k0 + BC, p.Lk, p.E);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    const uint16_t *Ks = KV[t & 1], *Vs = Ks + BC * LD;
    float s[BC / 8][4] = {};
    gemm_abt<kBf16, D, BC, LD>(s, Qs, warp * 16, Ks, lane);
    // scores in log2 units; the checks only where the tile needs them
    const bool inside = plain && k0 + BC <= p.Lk && (!p.causal || k0 + BC - 1 <= q0);
    float mx[2] = {m_r[0], m_r[1]};
#pragma unroll
    for (int nb = 0; nb < BC / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[nb][e] * sl2;
        if (!inside) {
          const int64_t row = row_base + (e >> 1) * 8, col = k0 + nb * 8 + t4 * 2 + (e & 1);
          if (col >= p.Lk || (p.causal && col > row)) x = -INFINITY;
          else if (mask && row < p.Lq) x += mask_at(p, mask, b, h, row, col) * kLog2e;
        }
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
    gemm_cb<kBf16, BC, D, LD>(o, s, Vs, lane);
    __syncthreads();  // this buffer is refilled by the next iteration's prefetch
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

template <bool kBf16, int D>
void launch_forward(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                    const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const size_t bytes = size_t(BR + 4 * BC) * (D + 8) * sizeof(uint16_t);
  auto kernel = attention_forward_mma_kernel<kBf16, D>;
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
  if (!D || !aligned(q) || !aligned(k) || !aligned(v) || !aligned(out)) return false;
  if (q.dtype() == DType::BFloat16)
    (D == 64 ? launch_forward<true, 64> : launch_forward<true, 128>)(p, q, k, v, mask, out, lse, stream);
  else
    (D == 64 ? launch_forward<false, 64> : launch_forward<false, 128>)(p, q, k, v, mask, out, lse, stream);
  return true;
}

}  // namespace tt::cuda
