// CUDA fused attention: the entry points, which try the tensor-core kernels (attention_wgmma.cu,
// attention_mma_*.cu) first, then the tiled float32 kernels (attention_tiled.cu), and plain
// kernels for every floating dtype and head dim up to 256 (float64, and what the other kernels
// don't cover). The plain kernels give a warp one row: one query row (forward, dQ) or one key row
// (dK/dV); its 32 lanes score 32 keys (or queries) at a time with an online softmax, and own the
// head dims of the accumulators. No (Lq, Lk) matrix.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include "attention_mma.h"
#include "attention_tiled.h"
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/common.h"
#include "tinytorch/cuda/graph.h"
#include "tinytorch/kernels/attention.h"

namespace tt::cuda {
namespace {

constexpr int kRowsPerBlock = 4;     // warps per block, one row each
constexpr int kMaxDimPerLane = 8;    // head dims up to 32 * 8 = 256

template <class M>
__device__ __forceinline__ M mask_at(const AttentionParams& p, const M* mask, int64_t b, int64_t h, int64_t i,
                                     int64_t j) {
  return mask[b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2] + j * p.mask_stride[3]];
}

template <class M>
__device__ __forceinline__ M keep_scale(const AttentionParams& p, int64_t bh, int64_t i, int64_t j) {
  if (p.dropout_p <= 0) return M(1);
  if (p.dropout_p >= 1) return M(0);
  return attention_keep(p, bh, i, j) ? M(1.0 / (1.0 - p.dropout_p)) : M(0);
}

// dot(x[0..n), y[0..n)) with x in shared memory (accumulation type) and y in global memory.
template <class T, class M>
__device__ __forceinline__ M dot(const M* x, const T* y, int64_t n) {
  M acc = 0;
  for (int64_t e = 0; e < n; ++e) acc += x[e] * M(y[e]);
  return acc;
}

// q: (B, H, Lq, E), k: (B, Hkv, Lk, E), v: (B, Hkv, Lk, Ev) -> out: (B, H, Lq, Ev), lse: (B, H, Lq)
template <class T, class M>
__global__ void __launch_bounds__(kRowsPerBlock * 32)
    attention_forward_rows(AttentionParams p, const T* q, const T* k, const T* v, const M* mask, T* out, M* lse) {
  __shared__ M qsh[kRowsPerBlock][256];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + warp;
  if (row >= p.B * p.H * p.Lq) return;
  const int64_t bh = row / p.Lq, i = row % p.Lq, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const T* qrow = q + p.st.q.row(b, h, i);
  for (int64_t e = lane; e < p.E; e += 32) qsh[warp][e] = M(qrow[e]) * M(p.scale);
  __syncwarp();
  M o[kMaxDimPerLane] = {};
  M m = -INFINITY, l = 0;
  const int64_t jend = p.causal ? (i + 1 < p.Lk ? i + 1 : p.Lk) : p.Lk;
  for (int64_t j0 = 0; j0 < jend; j0 += 32) {
    const int64_t j = j0 + lane;
    M s = -INFINITY;
    if (j < jend) {
      s = dot(qsh[warp], k + p.st.k.row(b, hk, j), p.E);
      if (mask) s += mask_at(p, mask, b, h, i, j);
    }
    const M mx = warp_allreduce(s, NanMaxOp()), m_new = m > mx ? m : mx;
    if (m_new == -INFINITY) continue;  // every key so far masked
    const M corr = exp(m - m_new);
    M pj = exp(s - m_new);
    l = l * corr + warp_allreduce(pj, AddOp());
    m = m_new;
    if (j < jend) pj *= keep_scale<M>(p, bh, i, j);
#pragma unroll
    for (int t = 0; t < kMaxDimPerLane; ++t) o[t] *= corr;
    const int64_t n = jend - j0 < 32 ? jend - j0 : 32;
    for (int64_t jj = 0; jj < n; ++jj) {
      const M pb = __shfl_sync(0xffffffffu, pj, int(jj));
      const T* vrow = v + p.st.v.row(b, hk, j0 + jj);
#pragma unroll
      for (int t = 0; t < kMaxDimPerLane; ++t)
        if (lane + 32 * t < p.Ev) o[t] += pb * M(vrow[lane + 32 * t]);
    }
  }
  const M inv = l > 0 ? M(1) / l : M(0);
#pragma unroll
  for (int t = 0; t < kMaxDimPerLane; ++t)
    if (lane + 32 * t < p.Ev) out[p.st.out.row(b, h, i) + lane + 32 * t] = T(o[t] * inv);
  if (lane == 0) lse[row] = l > 0 ? m + log(l) : M(-INFINITY);
}

// gout, out: (B, H, Lq, Ev) -> dvec: (B, H, Lq) = sum(gout * out) over Ev (float32; float64 for float64)
template <class T, class M>
__global__ void attention_rowdot(AttentionParams p, const T* gout, const T* out, M* dvec) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.B * p.H * p.Lq) return;
  const int64_t bh = row / p.Lq, i = row % p.Lq, b = bh / p.H, h = bh % p.H;
  const T *grow = gout + p.st.gout.row(b, h, i), *orow = out + p.st.out.row(b, h, i);
  M acc = 0;
  for (int64_t e = lane; e < p.Ev; e += 32) acc += M(grow[e]) * M(orow[e]);
  acc = warp_allreduce(acc, AddOp());
  if (lane == 0) dvec[row] = acc;
}

// One warp per key row (b, kv head, j): dK, dV over the query rows of the kv head's group.
template <class T, class M>
__global__ void __launch_bounds__(kRowsPerBlock * 32)
    attention_backward_kv_rows(AttentionParams p, const T* q, const T* k, const T* v, const T* gout, const M* mask,
                               const M* lse, const M* dvec, T* gk, T* gv) {
  __shared__ M ksh[kRowsPerBlock][256], vsh[kRowsPerBlock][256];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t krow = int64_t(blockIdx.x) * kRowsPerBlock + warp;
  if (krow >= p.B * p.Hkv * p.Lk) return;
  const int64_t bhk = krow / p.Lk, j = krow % p.Lk, b = bhk / p.Hkv, hk = bhk % p.Hkv, group = p.H / p.Hkv;
  const T *kin = k + p.st.k.row(b, hk, j), *vin = v + p.st.v.row(b, hk, j);
  for (int64_t e = lane; e < p.E; e += 32) ksh[warp][e] = M(kin[e]);
  for (int64_t e = lane; e < p.Ev; e += 32) vsh[warp][e] = M(vin[e]);
  __syncwarp();
  M dk[kMaxDimPerLane] = {}, dv[kMaxDimPerLane] = {};
  for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    const int64_t bh = b * p.H + h;
    for (int64_t i0 = p.causal ? j : 0; i0 < p.Lq; i0 += 32) {
      const int64_t i = i0 + lane;
      M pd = 0, ds = 0;
      if (i < p.Lq && lse[bh * p.Lq + i] != M(-INFINITY)) {
        M s = dot(ksh[warp], q + p.st.q.row(b, h, i), p.E) * M(p.scale);
        if (mask) s += mask_at(p, mask, b, h, i, j);
        const M prob = exp(s - lse[bh * p.Lq + i]), kd = keep_scale<M>(p, bh, i, j);
        const M dp = dot(vsh[warp], gout + p.st.gout.row(b, h, i), p.Ev);
        pd = prob * kd;
        ds = prob * (dp * kd - dvec[bh * p.Lq + i]);
      }
      const int64_t n = p.Lq - i0 < 32 ? p.Lq - i0 : 32;
      for (int64_t ii = 0; ii < n; ++ii) {
        const M pb = __shfl_sync(0xffffffffu, pd, int(ii)), sb = __shfl_sync(0xffffffffu, ds, int(ii));
        const T *qrow = q + p.st.q.row(b, h, i0 + ii), *grow = gout + p.st.gout.row(b, h, i0 + ii);
#pragma unroll
        for (int t = 0; t < kMaxDimPerLane; ++t) {
          if (lane + 32 * t < p.Ev) dv[t] += pb * M(grow[lane + 32 * t]);
          if (lane + 32 * t < p.E) dk[t] += sb * M(qrow[lane + 32 * t]);
        }
      }
    }
  }
#pragma unroll
  for (int t = 0; t < kMaxDimPerLane; ++t) {
    if (lane + 32 * t < p.E) gk[p.st.gk.row(b, hk, j) + lane + 32 * t] = T(dk[t] * M(p.scale));
    if (lane + 32 * t < p.Ev) gv[p.st.gv.row(b, hk, j) + lane + 32 * t] = T(dv[t]);
  }
}

// One warp per query row: dQ over the key rows.
template <class T, class M>
__global__ void __launch_bounds__(kRowsPerBlock * 32)
    attention_backward_q_rows(AttentionParams p, const T* q, const T* k, const T* v, const T* gout, const M* mask,
                              const M* lse, const M* dvec, T* gq) {
  __shared__ M qsh[kRowsPerBlock][256], gsh[kRowsPerBlock][256];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + warp;
  if (row >= p.B * p.H * p.Lq) return;
  const int64_t bh = row / p.Lq, i = row % p.Lq, b = bh / p.H, h = bh % p.H, hk = h / (p.H / p.Hkv);
  const T *qin = q + p.st.q.row(b, h, i), *gin = gout + p.st.gout.row(b, h, i);
  for (int64_t e = lane; e < p.E; e += 32) qsh[warp][e] = M(qin[e]);
  for (int64_t e = lane; e < p.Ev; e += 32) gsh[warp][e] = M(gin[e]);
  __syncwarp();
  M dq[kMaxDimPerLane] = {};
  const M L = lse[row], D = dvec[row];
  const int64_t jend = L == M(-INFINITY) ? 0 : p.causal ? (i + 1 < p.Lk ? i + 1 : p.Lk) : p.Lk;
  for (int64_t j0 = 0; j0 < jend; j0 += 32) {
    const int64_t j = j0 + lane;
    M ds = 0;
    if (j < jend) {
      M s = dot(qsh[warp], k + p.st.k.row(b, hk, j), p.E) * M(p.scale);
      if (mask) s += mask_at(p, mask, b, h, i, j);
      const M prob = exp(s - L), dp = dot(gsh[warp], v + p.st.v.row(b, hk, j), p.Ev);
      ds = prob * (dp * keep_scale<M>(p, bh, i, j) - D);
    }
    const int64_t n = jend - j0 < 32 ? jend - j0 : 32;
    for (int64_t jj = 0; jj < n; ++jj) {
      const M sb = __shfl_sync(0xffffffffu, ds, int(jj));
      const T* krow = k + p.st.k.row(b, hk, j0 + jj);
#pragma unroll
      for (int t = 0; t < kMaxDimPerLane; ++t)
        if (lane + 32 * t < p.E) dq[t] += sb * M(krow[lane + 32 * t]);
    }
  }
#pragma unroll
  for (int t = 0; t < kMaxDimPerLane; ++t)
    if (lane + 32 * t < p.E) gq[p.st.gq.row(b, h, i) + lane + 32 * t] = T(dq[t] * M(p.scale));
}

// keep: (B*H*Lq*Lk) bool
__global__ void attention_keep_kernel(AttentionParams p, bool* keep, int64_t n) {
  for (int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; x < n; x += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = x % p.Lk, r = x / p.Lk;
    keep[x] = attention_keep(p, r / p.Lq, r % p.Lq, j);
  }
}

unsigned row_blocks(int64_t rows) { return unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

// TINYTORCH_ATTENTION_PLAIN=1 skips the tensor-core and tiled kernels (to compare with the plain ones).
bool plain_only() {
  const char* s = std::getenv("TINYTORCH_ATTENTION_PLAIN");
  return s && std::strcmp(s, "0") != 0 && *s;
}

void cuda_attention_forward(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& mask, const Tensor& out, const Tensor& lse) {
  DeviceGuard guard(q.device());
  if (p.dropout_p > 0)
    check_not_capturing(q.device().index, "scaled_dot_product_attention with dropout_p > 0",
                        "the fused kernels draw from a Philox offset fixed at capture, so every replay would "
                        "repeat the same dropout pattern");

  cudaStream_t stream = current_stream(q.device().index);
  if (!plain_only() && (attention_forward_wgmma(p, q, k, v, mask, out, lse, stream) ||
                        attention_forward_mma(p, q, k, v, mask, out, lse, stream) ||
                        attention_forward_tiled(p, q, k, v, mask, out, lse, stream)))
    return;
  TT_DISPATCH_FLOATING(q.dtype(), "scaled_dot_product_attention", [&] {
    using M = opmath_t<scalar_t>;
    attention_forward_rows<scalar_t, M><<<row_blocks(p.B * p.H * p.Lq), kRowsPerBlock * 32, 0, stream>>>(
        p, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), mask.defined() ? mask.data<M>() : nullptr,
        out.data<scalar_t>(), lse.data<M>());
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_attention_backward(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                             const Tensor& v, const Tensor& mask, const Tensor& out, const Tensor& lse,
                             const Tensor& gq, const Tensor& gk, const Tensor& gv) {
  DeviceGuard guard(q.device());
  if (p.dropout_p > 0)
    check_not_capturing(q.device().index, "scaled_dot_product_attention with dropout_p > 0",
                        "the fused kernels draw from a Philox offset fixed at capture, so every replay would "
                        "repeat the same dropout pattern");

  cudaStream_t stream = current_stream(q.device().index);
  if (!plain_only() && attention_backward_wgmma_fused(p, gout, q, k, v, mask, out, lse, gq, gk, gv, stream)) return;
  const int64_t rows = p.B * p.H * p.Lq;
  Tensor dvec = Tensor::empty({rows}, lse.dtype(), q.device());
  TT_DISPATCH_FLOATING(q.dtype(), "scaled_dot_product_attention_backward", [&] {
    using M = opmath_t<scalar_t>;
    attention_rowdot<scalar_t, M><<<unsigned((rows * 32 + 255) / 256), 256, 0, stream>>>(
        p, gout.data<scalar_t>(), out.data<scalar_t>(), dvec.data<M>());
    TT_CUDA_KERNEL_CHECK();
  });
  if (!plain_only() && (attention_backward_wgmma(p, gout, q, k, v, mask, lse, dvec, gq, gk, gv, stream) ||
                        attention_backward_mma(p, gout, q, k, v, mask, lse, dvec, gq, gk, gv, stream)))
    return;
  if (!plain_only() && attention_backward_tiled(p, gout, q, k, v, mask, lse, dvec, gq, gk, gv, stream)) return;
  TT_DISPATCH_FLOATING(q.dtype(), "scaled_dot_product_attention_backward", [&] {
    using M = opmath_t<scalar_t>;
    const M* mp = mask.defined() ? mask.data<M>() : nullptr;
    attention_backward_kv_rows<scalar_t, M><<<row_blocks(p.B * p.Hkv * p.Lk), kRowsPerBlock * 32, 0, stream>>>(
        p, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), gout.data<scalar_t>(), mp, lse.data<M>(),
        dvec.data<M>(), gk.data<scalar_t>(), gv.data<scalar_t>());
    TT_CUDA_KERNEL_CHECK();
    attention_backward_q_rows<scalar_t, M><<<row_blocks(rows), kRowsPerBlock * 32, 0, stream>>>(
        p, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), gout.data<scalar_t>(), mp, lse.data<M>(),
        dvec.data<M>(), gq.data<scalar_t>());
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_attention_dropout_mask(const AttentionParams& p, const Tensor& keep) {
  DeviceGuard guard(keep.device());
  if (p.dropout_p > 0)
    check_not_capturing(keep.device().index, "scaled_dot_product_attention with dropout_p > 0",
                        "the fused kernels draw from a Philox offset fixed at capture, so every replay would "
                        "repeat the same dropout pattern");

  cudaStream_t stream = current_stream(keep.device().index);
  attention_keep_kernel<<<grid_for(keep.numel()), 256, 0, stream>>>(p, keep.data<bool>(), keep.numel());
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace

TT_REGISTER_KERNEL(attention_forward, CUDA, cuda_attention_forward)
TT_REGISTER_KERNEL(attention_backward, CUDA, cuda_attention_backward)
TT_REGISTER_KERNEL(attention_dropout_mask, CUDA, cuda_attention_dropout_mask)

}  // namespace tt::cuda
