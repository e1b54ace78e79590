// Tiled SIMT FlashAttention-2 for float32 (no tensor cores: float32 FMAs), forward and backward.
// A block of 128 threads (tx = tid % 16, ty = tid / 16) computes 64 x 64 score tiles; thread
// (ty, tx) owns the micro-tile rows ty + 8 i (i < 8) x columns tx + 16 j (j < 4) of every score
// tile, and rows ty + 8 i x head dims 64 g + 4 tx + c (c < 4) of every (rows, D) accumulator, so a
// row's 16 threads are one half warp (row reductions: 4 xor shuffles). Operands live in shared
// memory rows of D + 4 floats (D = 64 or 128, the head dim padded with zeros): the products read
// float4s along the contraction dim, conflict-free (the 16 B-operand rows of a half warp fall on
// distinct banks; A-operand rows are broadcast). Probabilities and dS are staged in shared
// memory (rows of 80 floats) as the A operand of the second product.
// - forward: a block owns 64 query rows, walks the key tiles of 64 with an online softmax in the
//   log2 domain (Q pre-scaled by scale * log2 e), O += P V.
// - backward, in two kernels so that no gradient needs atomics (deterministic): dK/dV per 64 keys
//   walking the query tiles of every head of its group (S^T = K Q^T, dV += P^T dO, dP^T = V dO^T,
//   dS^T = P^T (dP^T - D), dK += dS^T Q), and dQ per 64 query rows walking the key tiles
//   (S = Q K^T, dP = dO V^T, dS, dQ += dS K); the dQ grid runs on the side stream beside dK/dV.
// Causal tiles wholly above the diagonal are skipped; tiles inside every bound with no mask skip
// the per-element checks. Masks take their own instantiations (kMasked).
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include "attention_mma.h"
#include "attention_tiled.h"
#include "tinytorch/cuda/common.h"

namespace tt::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kTile = 64;           // query rows and keys per tile
constexpr int kLP = kTile + 16;     // staged P / dS row length: the two rows of a warp on disjoint banks
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Shared floats of an operand tile (kTile rows of D + 4) and of a staged P / dS tile.
template <int D>
constexpr int operand_floats() { return kTile * (D + 4); }
constexpr int staged_floats() { return kTile * kLP; }
// An operand tile's space that a staged tile reuses.
template <int D>
constexpr int kv_or_staged() { return operand_floats<D>() > staged_floats() ? operand_floats<D>() : staged_floats(); }

__device__ __forceinline__ float mask_at(const AttentionParams& p, const float* mask, int64_t b, int64_t h, int64_t i,
                                         int64_t j) {
  return mask[b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2] + j * p.mask_stride[3]];
}

// dst (kTile, D + 4) <- rows [r0, r0 + kTile) of src (n, E) (rows ld apart) times mul; rows >= n and
// dims >= E are zero (so padded dims add nothing to a product and padded rows are finite). vec:
// float4 loads (E, ld multiples of 4, src 16-byte aligned).
template <int D>
__device__ __forceinline__ void load_rows(float* dst, const float* src, int64_t r0, int64_t n, int64_t ld, int64_t E,
                                          float mul, bool vec) {
  if (vec) {
    for (int x = threadIdx.x; x < kTile * D / 4; x += kThreads) {
      const int r = x / (D / 4), d = x % (D / 4) * 4;
      float4 val = make_float4(0.f, 0.f, 0.f, 0.f);
      if (r0 + r < n && d < E) {
        val = *reinterpret_cast<const float4*>(src + (r0 + r) * ld + d);
        val = make_float4(val.x * mul, val.y * mul, val.z * mul, val.w * mul);
      }
      *reinterpret_cast<float4*>(dst + r * (D + 4) + d) = val;
    }
    return;
  }
  for (int x = threadIdx.x; x < kTile * D; x += kThreads) {
    const int r = x / D, d = x % D;
    float val = 0.f;
    if (r0 + r < n && d < E) val = src[(r0 + r) * ld + d] * mul;
    dst[r * (D + 4) + d] = val;
  }
}

// acc[i][j] += A[ty + 8 i, :K] . B[tx + 16 j, :K]: A rows lda apart, B rows ldb apart (both in shared memory).
template <int K, int LDA, int LDB>
__device__ __forceinline__ void gemm_nt(float (&acc)[8][4], const float* A, const float* B, int ty, int tx) {
#pragma unroll 1
  for (int kk = 0; kk < K; kk += 4) {
    float4 a[8], b[4];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = *reinterpret_cast<const float4*>(A + (ty + 8 * i) * LDA + kk);
#pragma unroll
    for (int j = 0; j < 4; ++j) b[j] = *reinterpret_cast<const float4*>(B + (tx + 16 * j) * LDB + kk);
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
        acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
        acc[i][j] = fmaf(a[i].z, b[j].z, acc[i][j]);
        acc[i][j] = fmaf(a[i].w, b[j].w, acc[i][j]);
      }
  }
}

// acc[i][4 g + c] += A[ty + 8 i, :kTile] . B[:kTile, 64 g + 4 tx + c]: A the staged (kTile, kLP)
// tile, B an operand tile (kTile, D + 4).
template <int D>
__device__ __forceinline__ void gemm_nn(float (&acc)[8][D / 16], const float* A, const float* B, int ty, int tx) {
  constexpr int G = D / 64;
#pragma unroll 1
  for (int kk = 0; kk < kTile; kk += 4) {
    float4 a[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = *reinterpret_cast<const float4*>(A + (ty + 8 * i) * kLP + kk);
#pragma unroll
    for (int s = 0; s < 4; ++s) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float4 b = *reinterpret_cast<const float4*>(B + (kk + s) * (D + 4) + 64 * g + 4 * tx);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float as = s == 0 ? a[i].x : s == 1 ? a[i].y : s == 2 ? a[i].z : a[i].w;
          acc[i][4 * g + 0] = fmaf(as, b.x, acc[i][4 * g + 0]);
          acc[i][4 * g + 1] = fmaf(as, b.y, acc[i][4 * g + 1]);
          acc[i][4 * g + 2] = fmaf(as, b.z, acc[i][4 * g + 2]);
          acc[i][4 * g + 3] = fmaf(as, b.w, acc[i][4 * g + 3]);
        }
      }
    }
  }
}

// dst rows r (< n) <- acc[i][:] * mul for the thread's rows r0 + ty + 8 i and dims 64 g + 4 tx + c (< E);
// vec: float4 stores (E and the strides multiples of 4, dst 16-byte aligned).
template <int D>
__device__ __forceinline__ void store_rows(float* dst, const HeadStrides& st, int64_t b, int64_t h, int64_t r0,
                                           int64_t n, int64_t E, const float (&acc)[8][D / 16], const float (&mul)[8],
                                           int ty, int tx, bool vec) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t r = r0 + ty + 8 * i;
    if (r >= n) continue;
    float* row = dst + st.row(b, h, r);
#pragma unroll
    for (int g = 0; g < D / 64; ++g) {
      const int d0 = 64 * g + 4 * tx;
      if (vec) {
        if (d0 < E)
          *reinterpret_cast<float4*>(row + d0) =
              make_float4(acc[i][4 * g] * mul[i], acc[i][4 * g + 1] * mul[i], acc[i][4 * g + 2] * mul[i],
                          acc[i][4 * g + 3] * mul[i]);
        continue;
      }
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (d0 + c < E) row[d0 + c] = acc[i][4 * g + c] * mul[i];
    }
  }
}

// grid (B * H, ceil(Lq / 64)); q: (B, H, Lq, E), k, v: (B, Hkv, Lk, E) -> out: (B, H, Lq, E), lse: (B, H, Lq)
template <int D, bool kMasked>
__global__ void __launch_bounds__(kThreads, D == 64 ? 4 : 1)
    attention_forward_tiled_kernel(AttentionParams p, const float* q, const float* k, const float* v, const float* mask,
                                   float* out, float* lse, bool vec) {
  constexpr int LD = D + 4;
  extern __shared__ __align__(16) float smem[];
  float *Qs = smem, *Ks = Qs + operand_floats<D>(), *Ps = Ks, *Vs = Ks + kv_or_staged<D>();  // P takes K's place
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t bh = blockIdx.x, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.y - 1 - blockIdx.y) * kTile;  // the longest causal rows start first
  load_rows<D>(Qs, q + p.st.q.row(b, h, 0), q0, p.Lq, p.st.q.l, p.E, float(p.scale) * kLog2e, vec);
  const float *kb = k + p.st.k.row(b, hk, 0), *vb = v + p.st.v.row(b, hk, 0);
  float o[8][D / 16] = {}, m[8], l[8] = {};
#pragma unroll
  for (int i = 0; i < 8; ++i) m[i] = -INFINITY;
  const int64_t kend = p.causal ? (q0 + kTile < p.Lk ? q0 + kTile : p.Lk) : p.Lk;
  for (int64_t k0 = 0; k0 < kend; k0 += kTile) {
    __syncthreads();  // the previous tile's P V is done with Ps and Vs
    load_rows<D>(Ks, kb, k0, p.Lk, p.st.k.l, p.E, 1.f, vec);
    load_rows<D>(Vs, vb, k0, p.Lk, p.st.v.l, p.E, 1.f, vec);
    __syncthreads();
    float s[8][4] = {};
    gemm_nt<D, LD, LD>(s, Qs, Ks, ty, tx);  // scores * scale * log2 e
    // rows past Lq need no check: their Q rows are zero and nothing of them is written
    const bool checks = kMasked || k0 + kTile > p.Lk || (p.causal && k0 + kTile - 1 > q0);
    if (checks) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t row = q0 + ty + 8 * i;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int64_t key = k0 + tx + 16 * j;
          if (key >= p.Lk || (p.causal && key > row)) s[i][j] = -INFINITY;
          else if (kMasked && row < p.Lq) s[i][j] += mask_at(p, mask, b, h, row, key) * kLog2e;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      float mx = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));
#pragma unroll
      for (int off = 1; off < 16; off *= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[i], mx);
      const float m_use = m_new == -INFINITY ? 0.f : m_new;  // every key so far masked: p = 0, no NaN
      const float corr = exp2f(m[i] - m_use);
      m[i] = m_new;
      l[i] *= corr;  // this thread's share of the row sum (summed over the half warp at the end)
#pragma unroll
      for (int c = 0; c < D / 16; ++c) o[i][c] *= corr;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[i][j] = exp2f(s[i][j] - m_use);
        l[i] += s[i][j];
      }
    }
    __syncthreads();  // every thread is done reading Ks: P takes its place
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) Ps[(ty + 8 * i) * kLP + tx + 16 * j] = s[i][j];
    __syncthreads();
    gemm_nn<D>(o, Ps, Vs, ty, tx);
  }
  float inv[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
#pragma unroll
    for (int off = 1; off < 16; off *= 2) l[i] += __shfl_xor_sync(0xffffffffu, l[i], off);
    inv[i] = l[i] > 0.f ? 1.f / l[i] : 0.f;
    const int64_t row = q0 + ty + 8 * i;
    if (tx == 0 && row < p.Lq) lse[bh * p.Lq + row] = l[i] > 0.f ? m[i] * kLn2 + logf(l[i]) : -INFINITY;
  }
  store_rows<D>(out, p.st.out, b, h, q0, p.Lq, p.E, o, inv, ty, tx, vec);
}

// grid (B * Hkv, ceil(Lk / 64)); q, gout: (B, H, Lq, E), k, v: (B, Hkv, Lk, E); lse, dvec: (B, H, Lq)
// -> gk, gv: (B, Hkv, Lk, E)
template <int D, bool kMasked>
__global__ void __launch_bounds__(kThreads) attention_backward_kv_tiled_kernel(
    AttentionParams p, const float* q, const float* k, const float* v, const float* gout, const float* mask,
    const float* lse, const float* dvec, float* gk, float* gv, bool vec) {
  constexpr int LD = D + 4;
  extern __shared__ __align__(16) float smem[];
  float *Ks = smem, *Vs = Ks + operand_floats<D>(), *Qs = Vs + operand_floats<D>(), *Gs = Qs + operand_floats<D>();
  float *Ss = Gs + operand_floats<D>(), *Ls = Ss + staged_floats(), *Ds = Ls + kTile;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t bhk = blockIdx.x, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const int64_t k0 = int64_t(blockIdx.y) * kTile;  // the keys with the most causal rows start first
  load_rows<D>(Ks, k + p.st.k.row(b, hk, 0), k0, p.Lk, p.st.k.l, p.E, float(p.scale) * kLog2e, vec);
  load_rows<D>(Vs, v + p.st.v.row(b, hk, 0), k0, p.Lk, p.st.v.l, p.E, 1.f, vec);
  float dk[8][D / 16] = {}, dv[8][D / 16] = {};
  for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    const int64_t bh = b * p.H + h;
    // causal: rows before k0 see none of these keys
    for (int64_t i0 = p.causal ? k0 : 0; i0 < p.Lq; i0 += kTile) {
      __syncthreads();  // the previous step is done with Qs, Gs, Ss, Ls, Ds
      load_rows<D>(Qs, q + p.st.q.row(b, h, 0), i0, p.Lq, p.st.q.l, p.E, 1.f, vec);
      load_rows<D>(Gs, gout + p.st.gout.row(b, h, 0), i0, p.Lq, p.st.gout.l, p.E, 1.f, vec);
      for (int r = threadIdx.x; r < kTile; r += kThreads) {
        const bool ok = i0 + r < p.Lq;
        Ls[r] = ok ? lse[bh * p.Lq + i0 + r] * kLog2e : -INFINITY;  // -inf: no key takes part, or no row
        Ds[r] = ok ? dvec[bh * p.Lq + i0 + r] : 0.f;
      }
      __syncthreads();
      float st[8][4] = {};
      gemm_nt<D, LD, LD>(st, Ks, Qs, ty, tx);  // S^T * log2 e: keys x query rows
      // every row here sums into dK/dV, so rows past Lq need the checks too
      const bool checks = kMasked || k0 + kTile > p.Lk || i0 + kTile > p.Lq || (p.causal && k0 + kTile - 1 > i0);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t key = k0 + ty + 8 * i;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int qi = tx + 16 * j;
          const float L2 = Ls[qi];
          float pr;
          if (!checks) {
            pr = exp2f(st[i][j] - L2);
          } else {
            const int64_t row = i0 + qi;
            pr = 0.f;
            if (key < p.Lk && L2 != -INFINITY && !(p.causal && key > row)) {
              float x = st[i][j];
              if (kMasked) x += mask_at(p, mask, b, h, row, key) * kLog2e;
              pr = exp2f(x - L2);
            }
          }
          Ss[(ty + 8 * i) * kLP + qi] = pr;  // P^T
        }
      }
      __syncthreads();
      gemm_nn<D>(dv, Ss, Gs, ty, tx);  // dV += P^T dO
      float dpt[8][4] = {};
      gemm_nt<D, LD, LD>(dpt, Vs, Gs, ty, tx);  // dP^T = V dO^T
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)  // dS^T = P^T (dP^T - D), P^T read back from this thread's own entries
          dpt[i][j] = Ss[(ty + 8 * i) * kLP + tx + 16 * j] * (dpt[i][j] - Ds[tx + 16 * j]);
      __syncthreads();  // every thread is done reading P^T
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) Ss[(ty + 8 * i) * kLP + tx + 16 * j] = dpt[i][j];
      __syncthreads();
      gemm_nn<D>(dk, Ss, Qs, ty, tx);  // dK += dS^T Q
    }
  }
  float one[8], scale[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) one[i] = 1.f, scale[i] = float(p.scale);
  store_rows<D>(gk, p.st.gk, b, hk, k0, p.Lk, p.E, dk, scale, ty, tx, vec);
  store_rows<D>(gv, p.st.gv, b, hk, k0, p.Lk, p.E, dv, one, ty, tx, vec);
}

// grid (B * H, ceil(Lq / 64)) -> gq: (B, H, Lq, E)
template <int D, bool kMasked>
__global__ void __launch_bounds__(kThreads, D == 64 ? 3 : 1) attention_backward_q_tiled_kernel(
    AttentionParams p, const float* q, const float* k, const float* v, const float* gout, const float* mask,
    const float* lse, const float* dvec, float* gq, bool vec) {
  constexpr int LD = D + 4;
  extern __shared__ __align__(16) float smem[];
  float *Qs = smem, *Gs = Qs + operand_floats<D>(), *Ks = Gs + operand_floats<D>(), *Vs = Ks + operand_floats<D>();
  float* Ss = Vs;  // dS takes V's place once dP is computed
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t bh = blockIdx.x, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const int64_t q0 = int64_t(gridDim.y - 1 - blockIdx.y) * kTile;  // the longest causal rows start first
  load_rows<D>(Qs, q + p.st.q.row(b, h, 0), q0, p.Lq, p.st.q.l, p.E, float(p.scale) * kLog2e, vec);
  load_rows<D>(Gs, gout + p.st.gout.row(b, h, 0), q0, p.Lq, p.st.gout.l, p.E, 1.f, vec);
  const float *kb = k + p.st.k.row(b, hk, 0), *vb = v + p.st.v.row(b, hk, 0);
  // L2 = lse * log2 e (-inf: no key takes part); rows past Lq get 0 and zero Q / dO rows, so their
  // unchecked dS is 0 (and never written)
  float L2[8], Dr[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = q0 + ty + 8 * i;
    L2[i] = row < p.Lq ? lse[bh * p.Lq + row] * kLog2e : 0.f;
    Dr[i] = row < p.Lq ? dvec[bh * p.Lq + row] : 0.f;
  }
  float dq[8][D / 16] = {};
  const int64_t kend = p.causal ? (q0 + kTile < p.Lk ? q0 + kTile : p.Lk) : p.Lk;
  for (int64_t k0 = 0; k0 < kend; k0 += kTile) {
    __syncthreads();  // the previous tile's dS K is done with Ss (Vs) and Ks
    load_rows<D>(Ks, kb, k0, p.Lk, p.st.k.l, p.E, 1.f, vec);
    load_rows<D>(Vs, vb, k0, p.Lk, p.st.v.l, p.E, 1.f, vec);
    __syncthreads();
    float s[8][4] = {}, dp[8][4] = {};
    gemm_nt<D, LD, LD>(s, Qs, Ks, ty, tx);   // S * log2 e
    gemm_nt<D, LD, LD>(dp, Gs, Vs, ty, tx);  // dP = dO V^T
    // without a mask every row up to Lq has key 0, so its lse is finite
    const bool checks = kMasked || k0 + kTile > p.Lk || (p.causal && k0 + kTile - 1 > q0);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int64_t row = q0 + ty + 8 * i;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float pr;
        if (!checks) {
          pr = exp2f(s[i][j] - L2[i]);
        } else {
          const int64_t key = k0 + tx + 16 * j;
          pr = 0.f;
          if (key < p.Lk && row < p.Lq && L2[i] != -INFINITY && !(p.causal && key > row)) {
            float x = s[i][j];
            if (kMasked) x += mask_at(p, mask, b, h, row, key) * kLog2e;
            pr = exp2f(x - L2[i]);
          }
        }
        s[i][j] = pr * (dp[i][j] - Dr[i]);  // dS
      }
    }
    __syncthreads();  // every thread is done reading Vs
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) Ss[(ty + 8 * i) * kLP + tx + 16 * j] = s[i][j];
    __syncthreads();
    gemm_nn<D>(dq, Ss, Ks, ty, tx);  // dQ += dS K
  }
  float scale[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) scale[i] = float(p.scale);
  store_rows<D>(gq, p.st.gq, b, h, q0, p.Lq, p.E, dq, scale, ty, tx, vec);
}

template <class Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    TT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// The padded head dim (64 or 128) for this call, 0 where the tiled kernels don't apply.
int tiled_head_dim(const AttentionParams& p, const Tensor& q, const Tensor& mask) {
  if (q.dtype() != DType::Float32 || (mask.defined() && mask.dtype() != DType::Float32)) return 0;
  if (p.E != p.Ev || p.E < 1 || p.E > 128 || p.dropout_p > 0) return 0;
  if (p.H % p.Hkv != 0 || p.Lq < 1 || p.Lk < 1) return 0;  // empty: the plain kernels
  if (p.B * p.H > INT32_MAX || (p.Lq + kTile - 1) / kTile > 65535 || (p.Lk + kTile - 1) / kTile > 65535) return 0;
  return p.E <= 64 ? 64 : 128;
}

unsigned tiles(int64_t n) { return unsigned((n + kTile - 1) / kTile); }

// Whether every row of these operands can be read / written as float4s.
bool rows_vec4(const AttentionParams& p, std::initializer_list<const Tensor*> ts,
               std::initializer_list<const HeadStrides*> sts) {
  if (p.E % 4 != 0) return false;
  for (const Tensor* t : ts)
    if (reinterpret_cast<uintptr_t>(t->data_ptr()) % 16 != 0) return false;
  for (const HeadStrides* s : sts)
    if (s->b % 4 != 0 || s->h % 4 != 0 || s->l % 4 != 0) return false;
  return true;
}

template <int D>
void launch_forward(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                    const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const size_t bytes = size_t(2 * operand_floats<D>() + kv_or_staged<D>()) * sizeof(float);
  auto kernel = mask.defined() ? attention_forward_tiled_kernel<D, true> : attention_forward_tiled_kernel<D, false>;
  allow_smem(kernel, bytes);
  kernel<<<dim3(unsigned(p.B * p.H), tiles(p.Lq)), kThreads, bytes, stream>>>(
      p, q.data<float>(), k.data<float>(), v.data<float>(), mask.defined() ? mask.data<float>() : nullptr,
      out.data<float>(), lse.data<float>(),
      rows_vec4(p, {&q, &k, &v, &out}, {&p.st.q, &p.st.k, &p.st.v, &p.st.out}));
  TT_CUDA_KERNEL_CHECK();
}

template <int D>
void launch_backward(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& mask, const Tensor& lse, const Tensor& dvec, const Tensor& gq, const Tensor& gk,
                     const Tensor& gv, cudaStream_t stream) {
  const float* mp = mask.defined() ? mask.data<float>() : nullptr;
  const bool vec = rows_vec4(p, {&gout, &q, &k, &v, &gq, &gk, &gv},
                             {&p.st.gout, &p.st.q, &p.st.k, &p.st.v, &p.st.gq, &p.st.gk, &p.st.gv});
  const size_t kv_bytes = size_t(4 * operand_floats<D>() + staged_floats() + 2 * kTile) * sizeof(float);
  auto kv = mask.defined() ? attention_backward_kv_tiled_kernel<D, true> : attention_backward_kv_tiled_kernel<D, false>;
  allow_smem(kv, kv_bytes);
  const size_t q_bytes = size_t(3 * operand_floats<D>() + kv_or_staged<D>()) * sizeof(float);
  auto qk = mask.defined() ? attention_backward_q_tiled_kernel<D, true> : attention_backward_q_tiled_kernel<D, false>;
  allow_smem(qk, q_bytes);
  AttentionSideStream& side = attention_side_stream(q.device().index);
  std::lock_guard<std::mutex> lock(side.mu);
  TT_CUDA_CHECK(cudaEventRecord(side.fork, stream));  // the side stream starts after everything before this call
  TT_CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.fork, 0));
  qk<<<dim3(unsigned(p.B * p.H), tiles(p.Lq)), kThreads, q_bytes, side.stream>>>(
      p, q.data<float>(), k.data<float>(), v.data<float>(), gout.data<float>(), mp, lse.data<float>(),
      dvec.data<float>(), gq.data<float>(), vec);
  TT_CUDA_KERNEL_CHECK();
  kv<<<dim3(unsigned(p.B * p.Hkv), tiles(p.Lk)), kThreads, kv_bytes, stream>>>(
      p, q.data<float>(), k.data<float>(), v.data<float>(), gout.data<float>(), mp, lse.data<float>(),
      dvec.data<float>(), gk.data<float>(), gv.data<float>(), vec);
  TT_CUDA_KERNEL_CHECK();
  TT_CUDA_CHECK(cudaEventRecord(side.join, side.stream));  // and the caller's stream waits for it
  TT_CUDA_CHECK(cudaStreamWaitEvent(stream, side.join, 0));
}

}  // namespace

bool attention_forward_tiled(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const int D = tiled_head_dim(p, q, mask);
  if (!D) return false;
  (D == 64 ? launch_forward<64> : launch_forward<128>)(p, q, k, v, mask, out, lse, stream);
  return true;
}

bool attention_backward_tiled(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                              const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream) {
  const int D = tiled_head_dim(p, q, mask);
  if (!D) return false;
  (D == 64 ? launch_backward<64> : launch_backward<128>)(p, gout, q, k, v, mask, lse, dvec, gq, gk, gv, stream);
  return true;
}

}  // namespace tt::cuda
