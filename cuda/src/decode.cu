// CUDA kernels of the fused decode step (kernels/decode.h): a decoder layer of one new token per
// sequence (up to kDecodeFusedRows sequences) as five launches, so a decode step is
// launch- and bandwidth-bound rather than a chain of ~25 small ops per layer.
//
// Projections: a warp per weight row (its dot products for every sequence), kRowWarps rows per
// block. Each block first stages its inputs, RMS-normalised where the projection follows a norm,
// in shared memory (the block recomputes the norm of a few K floats instead of a launch of its
// own), then streams its weight rows once: dense rows as float4s, packed llama.cpp rows as
// 32-value sub-blocks decoded by tinytorch/quant_math.h (one sub-block per lane, as quant.cu).
// Attention: a block per (query head, sequence) rotates q and the new k, writes k and v into
// the cache (the group's first head) and runs an online softmax over the cached positions, a
// warp per position stride, the warps' partial sums combined at the end.
#include <cuda_fp16.h>
#include <climits>
#include <cmath>
#include <utility>
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/common.h"
#include "tinytorch/kernels/decode.h"
#include "tinytorch/quant_math.h"

namespace tt::cuda {
namespace {

constexpr int kRowWarps = 4;    // weight rows per block, a warp each
constexpr int kAttnWarps = 8;   // cached positions attended to at once, a warp each
constexpr int kMaxHeadDim = 256;

// A projection's part as the kernel reads it: rows [first, first + rows) of the stacked output.
struct Part {
  const void* weight;
  const float* bias;  // or null
  int64_t rows, row_bytes;
  int qtype;  // < 0: dense float32 rows
};
struct Parts {
  Part part[kDecodeMaxParts];
  int count;
};

// The part holding stacked row n; n becomes its row within that part.
__device__ __forceinline__ const Part& locate(const Parts& ps, int64_t& n) {
  int i = 0;
  while (i + 1 < ps.count && n >= ps.part[i].rows) n -= ps.part[i++].rows;
  return ps.part[i];
}

// Staged inputs: dense rows as they are (read as float4s); packed rows as 32-value sub-blocks
// padded to 33 floats, so lanes reading value i of their own sub-block hit 32 different banks.
template <bool kPacked>
__device__ __forceinline__ int64_t staged_at(int64_t k) {
  return kPacked ? k / 32 * 33 + k % 32 : k;
}
template <bool kPacked>
__device__ __forceinline__ int64_t staged_stride(int64_t K) {
  return kPacked ? K / 32 * 33 : K;
}

// acc[r] += w . xs[r] over lane's float4s of a dense row w: (K); xs: (R, K) in shared memory.
template <int R>
__device__ __forceinline__ void dense_dot(const float* __restrict__ w, const float* xs, int64_t K, int lane,
                                          float (&acc)[R]) {
  const float4* w4 = reinterpret_cast<const float4*>(w);
#pragma unroll 4
  for (int64_t k = lane; k < K / 4; k += 32) {
    const float4 a = __ldg(w4 + k);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float4 b = reinterpret_cast<const float4*>(xs + r * K)[k];
      acc[r] += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
  }
}

// acc[r] += w . xs[r] over lane's sub-blocks of a packed row w; xs: (R, stride), padded.
template <class Fmt, int R>
__device__ __forceinline__ void packed_dot(const uint8_t* __restrict__ w, const float* xs, int64_t stride,
                                           int64_t K, int lane, float (&acc)[R]) {
  constexpr int kSub = Fmt::kValues / 32;  // 32-value sub-blocks per block
  for (int64_t s = lane; s < K / 32; s += 32) {
    const float* xsub = xs + s * 33;
    Fmt::for_each_value(w + (s / kSub) * Fmt::kBytes, static_cast<int>(s % kSub), [&](int i, float v) {
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] += v * xsub[r * stride + i];
    });
  }
}

template <int R>
__device__ __forceinline__ void packed_row(int qtype, const uint8_t* w, const float* xs, int64_t stride, int64_t K,
                                           int lane, float (&acc)[R]) {
  using quant::Format;
  using quant::QType;
  switch (static_cast<QType>(qtype)) {  // warp-uniform; the launcher knows every code
    case QType::Q4_0: packed_dot<Format<QType::Q4_0>, R>(w, xs, stride, K, lane, acc); break;
    case QType::Q4_1: packed_dot<Format<QType::Q4_1>, R>(w, xs, stride, K, lane, acc); break;
    case QType::Q8_0: packed_dot<Format<QType::Q8_0>, R>(w, xs, stride, K, lane, acc); break;
    case QType::Q4_K: packed_dot<Format<QType::Q4_K>, R>(w, xs, stride, K, lane, acc); break;
    case QType::Q6_K: packed_dot<Format<QType::Q6_K>, R>(w, xs, stride, K, lane, acc); break;
  }
}

// y[r] = stacked row n of the parts . xs[r] (+ its bias), in every lane.
template <bool kPacked, int R>
__device__ __forceinline__ void row_dot(const Parts& ps, int64_t n, const float* xs, int64_t K, int lane,
                                        float (&y)[R]) {
  const Part& p = locate(ps, n);
#pragma unroll
  for (int r = 0; r < R; ++r) y[r] = 0.f;
  if constexpr (kPacked)
    packed_row<R>(p.qtype, static_cast<const uint8_t*>(p.weight) + n * p.row_bytes, xs, staged_stride<true>(K), K,
                  lane, y);
  else
    dense_dot<R>(static_cast<const float*>(p.weight) + n * K, xs, K, lane, y);
  const float b = p.bias != nullptr ? p.bias[n] : 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) y[r] = warp_allreduce(y[r], AddOp{}) + b;
}

// x: (B, K), norm: (K) or null -> out: (B, N) as the epilogue says (kernels/decode.h); R >= B
// staged rows (those past B are zeros). residual and out may be one tensor: each element is read
// and written by the same lane.
template <bool kPacked, DecodeEpilogue E, int R>
__global__ void __launch_bounds__(kRowWarps * 32)
    project_kernel(const float* __restrict__ x, int64_t B, int64_t K, const float* __restrict__ norm, float eps,
                   Parts parts, int64_t N, const float* residual, float* out) {
  extern __shared__ float xs[];  // (R, stride)
  __shared__ float partial[kRowWarps];
  const int64_t stride = staged_stride<kPacked>(K);
  for (int r = 0; r < R; ++r) {
    float squares = 0.f;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      const float v = r < B ? x[r * K + k] : 0.f;
      xs[r * stride + staged_at<kPacked>(k)] = v;
      squares += v * v;
    }
    if (norm != nullptr) {  // y = x * rsqrt(mean(x^2) + eps) * weight, as rms_norm
      const float inv = rsqrtf(block_allreduce(squares, AddOp{}, partial) / static_cast<float>(K) + eps);
      for (int64_t k = threadIdx.x; k < K; k += blockDim.x) xs[r * stride + staged_at<kPacked>(k)] *= inv * norm[k];
    }
  }
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
  if (n >= N) return;
  if constexpr (E == DecodeEpilogue::SwiGLU) {
    float gate[R], up[R];
    row_dot<kPacked, R>(parts, n, xs, K, lane, gate);
    row_dot<kPacked, R>(parts, n + N, xs, K, lane, up);
    if (lane == 0)
      for (int r = 0; r < R && r < B; ++r) out[r * N + n] = gate[r] / (1.f + expf(-gate[r])) * up[r];
  } else {
    float y[R];
    row_dot<kPacked, R>(parts, n, xs, K, lane, y);
    if (lane == 0)
      for (int r = 0; r < R && r < B; ++r)
        out[r * N + n] = E == DecodeEpilogue::Add ? residual[r * N + n] + y[r] : y[r];
  }
}

template <bool kPacked, DecodeEpilogue E, int R>
void launch_project(const float* x, int64_t B, int64_t K, const float* norm, float eps, const Parts& parts, int64_t N,
                    const float* residual, float* out, cudaStream_t stream) {
  auto kernel = project_kernel<kPacked, E, R>;
  const size_t bytes = static_cast<size_t>(R * (kPacked ? K / 32 * 33 : K)) * sizeof(float);
  if (bytes > 48 * 1024)
    TT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  const unsigned blocks = static_cast<unsigned>((N + kRowWarps - 1) / kRowWarps);
  kernel<<<blocks, kRowWarps * 32, bytes, stream>>>(x, B, K, norm, eps, parts, N, residual, out);
  TT_CUDA_KERNEL_CHECK();
}

template <DecodeEpilogue E>
void launch_project_rows(bool packed, const float* x, int64_t B, int64_t K, const float* norm, float eps,
                         const Parts& parts, int64_t N, const float* residual, float* out, cudaStream_t stream) {
  if (packed) {
    if (B == 1) launch_project<true, E, 1>(x, B, K, norm, eps, parts, N, residual, out, stream);
    else launch_project<true, E, kDecodeFusedRows>(x, B, K, norm, eps, parts, N, residual, out, stream);
  } else {
    if (B == 1) launch_project<false, E, 1>(x, B, K, norm, eps, parts, N, residual, out, stream);
    else launch_project<false, E, kDecodeFusedRows>(x, B, K, norm, eps, parts, N, residual, out, stream);
  }
}

void cuda_decode_project(const Tensor& x, const Tensor& norm, double eps, const std::vector<DecodeLinear>& parts,
                         DecodeEpilogue epilogue, const Tensor& residual, const Tensor& out) {
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  const int64_t B = x.size(0), K = x.size(1);
  TT_CHECK(!parts.empty() && parts.size() <= static_cast<size_t>(kDecodeMaxParts) &&
               B <= kDecodeFusedRows,
           "decode_project: ", parts.size(), " parts for ", B, " sequences");
  Parts ps{};
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const DecodeLinear& p = parts[i];
    ps.part[i] = Part{p.weight.data_ptr(), p.bias.defined() ? p.bias.data<float>() : nullptr, p.out_features,
                      p.qtype >= 0 ? p.weight.numel() / p.out_features : K * 4, static_cast<int>(p.qtype)};
    total += p.out_features;
  }
  ps.count = static_cast<int>(parts.size());
  const int64_t N = epilogue == DecodeEpilogue::SwiGLU ? total / 2 : total;
  TT_CHECK((N + kRowWarps - 1) / kRowWarps <= INT32_MAX, "decode_project: too many rows ", N);
  const bool packed = parts[0].qtype >= 0;
  const float* n = norm.defined() ? norm.data<float>() : nullptr;
  const float* res = residual.defined() ? residual.data<float>() : nullptr;
  const float e = static_cast<float>(eps);
  const float* xp = x.data<float>();
  float* op = out.data<float>();
  switch (epilogue) {
    case DecodeEpilogue::Store:
      launch_project_rows<DecodeEpilogue::Store>(packed, xp, B, K, n, e, ps, N, res, op, stream);
      break;
    case DecodeEpilogue::Add:
      launch_project_rows<DecodeEpilogue::Add>(packed, xp, B, K, n, e, ps, N, res, op, stream);
      break;
    case DecodeEpilogue::SwiGLU:
      launch_project_rows<DecodeEpilogue::SwiGLU>(packed, xp, B, K, n, e, ps, N, res, op, stream);
      break;
  }
}

// qkv: (B, (H + 2 Hkv) D), keys/values: (B, Hkv, S, D), cos/sin: (D) -> out: (B, H D); a block per
// (query head, sequence); lane l holds dims l, l + 32, ... (kPerLane = ceil(D / 32) of them).
// The group's other heads write the new key in the same launch, so every block uses its own copy
// of it (k_new, v_new) for position pos and reads only earlier positions from the cache.
template <int kPerLane>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attention_kernel(const float* __restrict__ qkv, float* keys, float* values, const float* __restrict__ cos,
                     const float* __restrict__ sin, const int64_t* position, int64_t pos_host, int64_t window, int H,
                     int Hkv, int D, int64_t S, float scale, bool interleaved, float* __restrict__ out) {
  constexpr int kD = kPerLane * 32;
  __shared__ float raw_q[kD], raw_k[kD], q[kD], k_new[kD], v_new[kD];
  __shared__ float warp_max[kAttnWarps], warp_sum[kAttnWarps], warp_acc[kAttnWarps][kD];
  const int h = blockIdx.x, b = blockIdx.y, G = H / Hkv, g = h / G;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t pos = position != nullptr ? *position : pos_host;
  float* o = out + (static_cast<int64_t>(b) * H + h) * D;
  if (pos < 0 || pos >= S) {  // a replayed graph past its cache: NaNs, never a write outside it
    for (int i = threadIdx.x; i < D; i += blockDim.x) o[i] = __int_as_float(0x7fc00000);
    return;
  }
  const int64_t first = window > 0 ? max(static_cast<int64_t>(0), pos - window + 1) : 0;
  const float* row = qkv + static_cast<int64_t>(b) * (H + 2 * Hkv) * D;
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    raw_q[i] = row[h * D + i];
    raw_k[i] = row[(H + g) * D + i];
    v_new[i] = row[(H + Hkv + g) * D + i];
  }
  __syncthreads();
  const int half = D / 2;
  for (int i = threadIdx.x; i < D; i += blockDim.x) {  // x * cos + partner(x) * sin, as apply_rotary_pos_emb
    const int at = interleaved ? (i ^ 1) : (i < half ? i + half : i - half);
    const float sign = (interleaved ? (i % 2 == 0) : (i < half)) ? -1.f : 1.f;
    q[i] = raw_q[i] * cos[i] + sign * raw_q[at] * sin[i];
    k_new[i] = raw_k[i] * cos[i] + sign * raw_k[at] * sin[i];
  }
  __syncthreads();
  const int64_t base = (static_cast<int64_t>(b) * Hkv + g) * S;
  if (h % G == 0)
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
      keys[(base + pos) * D + i] = k_new[i];
      values[(base + pos) * D + i] = v_new[i];
    }
  float ql[kPerLane], acc[kPerLane];
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int d = lane + 32 * t;
    ql[t] = d < D ? q[d] : 0.f;
    acc[t] = 0.f;
  }
  float m = -INFINITY, l = 0.f;  // the warp's running max and sum of exp(score - m)
  for (int64_t j = first + warp; j <= pos; j += kAttnWarps) {
    const float* kr = j == pos ? k_new : keys + (base + j) * D;
    const float* vr = j == pos ? v_new : values + (base + j) * D;
    float s = 0.f;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t)
      if (lane + 32 * t < D) s += ql[t] * kr[lane + 32 * t];
    s = warp_allreduce(s, AddOp{}) * scale;
    const float mn = fmaxf(m, s), c = __expf(m - mn), p = __expf(s - mn);
    l = l * c + p;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t)
      if (lane + 32 * t < D) acc[t] = acc[t] * c + p * vr[lane + 32 * t];
    m = mn;
  }
  if (lane == 0) warp_max[warp] = m, warp_sum[warp] = l;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t)
    if (lane + 32 * t < D) warp_acc[warp][lane + 32 * t] = acc[t];
  __syncthreads();
  float M = -INFINITY, total = 0.f;
  for (int w = 0; w < kAttnWarps; ++w) M = fmaxf(M, warp_max[w]);
  for (int w = 0; w < kAttnWarps; ++w)
    if (warp_max[w] != -INFINITY) total += warp_sum[w] * __expf(warp_max[w] - M);
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    float v = 0.f;
    for (int w = 0; w < kAttnWarps; ++w)
      if (warp_max[w] != -INFINITY) v += warp_acc[w][i] * __expf(warp_max[w] - M);
    o[i] = v / total;
  }
}

template <int kPerLane>
void launch_attention(const Tensor& qkv, const Tensor& keys, const Tensor& values, const Tensor& cos,
                      const Tensor& sin, const DecodeAttention& a, int64_t pos, const int64_t* position,
                      int64_t window, const Tensor& out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.heads), static_cast<unsigned>(qkv.size(0)));
  attention_kernel<kPerLane><<<grid, kAttnWarps * 32, 0, stream>>>(
      qkv.data<float>(), keys.data<float>(), values.data<float>(), cos.data<float>(), sin.data<float>(), position,
      pos, window, static_cast<int>(a.heads), static_cast<int>(a.kv_heads), static_cast<int>(a.head_dim),
      keys.size(2), static_cast<float>(a.scale), a.interleaved, out.data<float>());
  TT_CUDA_KERNEL_CHECK();
}

template <int... kPerLane>
void launch_attention_for(int per_lane, std::integer_sequence<int, kPerLane...>, const Tensor& qkv,
                          const Tensor& keys, const Tensor& values, const Tensor& cos, const Tensor& sin,
                          const DecodeAttention& a, int64_t pos, const int64_t* position, int64_t window,
                          const Tensor& out, cudaStream_t stream) {
  ((per_lane == kPerLane + 1
        ? launch_attention<kPerLane + 1>(qkv, keys, values, cos, sin, a, pos, position, window, out, stream)
        : void()),
   ...);
}

void cuda_decode_attention(const Tensor& qkv, const Tensor& keys, const Tensor& values, const Tensor& cos,
                           const Tensor& sin, const DecodeAttention& a, int64_t pos, const Tensor& position,
                           int64_t window, const Tensor& out) {
  if (a.head_dim > kMaxHeadDim)
    throw NotImplementedError(str_cat("DecodeStack: CUDA decode attention takes head_dim up to ", kMaxHeadDim,
                                      ", got ", a.head_dim));
  TT_CHECK(keys.size(2) <= INT32_MAX && qkv.size(0) <= 65535 && a.heads <= INT32_MAX,
           "decode_attention: grid too large for ", qkv.describe());
  DeviceGuard guard(qkv.device());
  const int64_t* p = position.defined() ? position.data<int64_t>() : nullptr;
  launch_attention_for(static_cast<int>((a.head_dim + 31) / 32), std::make_integer_sequence<int, kMaxHeadDim / 32>{},
                       qkv, keys, values, cos, sin, a, pos, p, window, out, current_stream(qkv.device().index));
}

}  // namespace

TT_REGISTER_KERNEL(decode_attention, CUDA, cuda_decode_attention)
TT_REGISTER_KERNEL(decode_project, CUDA, cuda_decode_project)

}  // namespace tt::cuda
