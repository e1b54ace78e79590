// Entry points of the Hopper (sm_90a) attention kernels (attention_wgmma.cuh, forward, and
// attention_wgmma_backward_fused.cuh, the one-pass backward, their operands through TMA tensor
// maps; attention_wgmma_backward.cuh, the two-kernel backward of deterministic mode): float16/bfloat16,
// E = Ev <= 128 a multiple of 8, no mask, no dropout, positive scale, on a compute-capability 9.0
// device of a build that has sm_90a code (CMake defines TINYTORCH_CUDA_SM90A when
// CMAKE_CUDA_ARCHITECTURES names 90a). Everything else returns false: the mma.sync kernels run.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include "attention_wgmma.cuh"
#include "attention_wgmma_backward_fused.cuh"
#include "attention_mma.h"
#include "tinytorch/cuda/blas.h"
#include "tinytorch/cuda/block_reduce.cuh"
#include "../tma_map.h"

namespace tt::cuda {
namespace {

// The TMA map of operand t (B, heads, L, E) with boxes of 64 columns x `rows` rows (tma_map.h).
bool tensor_map(CUtensorMap* m, const AttentionParams& p, bool bf16, const Tensor& t, int64_t heads, int64_t L,
                const HeadStrides& st, int rows) {
  return tma_map_16bit(m, t.data_ptr(), bf16, p.B, heads, L, p.E, st.b, st.h, st.l, rows);
}

// The blocks of a persistent kernel: one per SM, fewer for fewer tiles.
unsigned persistent_blocks(int64_t tiles, int device) { return unsigned(std::min<int64_t>(tiles, sm_count(device))); }

// 128-key tiles, a ring of 2 K/V stages, persistent blocks, three consumer warpgroups (192 query
// rows) at D = 64 and two (128 rows) at D = 128, where registers allow no more (fastest on an H100
// in dev/attention_wgmma_dev.py's timings). False where the driver refuses a tensor map.
template <bool kBf16, int D>
bool launch_forward_wgmma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  constexpr int BC = 128, kStages = 2, kConsumers = D == 64 ? 3 : 2;
  using Tiles = wg::ForwardTiles<D, BC, kStages, kConsumers>;
  CUtensorMap tq, tk, tv;
  if (!tensor_map(&tq, p, kBf16, q, p.H, p.Lq, p.st.q, Tiles::BR) ||
      !tensor_map(&tk, p, kBf16, k, p.Hkv, p.Lk, p.st.k, BC) || !tensor_map(&tv, p, kBf16, v, p.Hkv, p.Lk, p.st.v, BC))
    return false;
  auto kernel = wg::attention_forward_wgmma_kernel<kBf16, D, BC, kStages, kConsumers>;
  mma::allow_smem(kernel, Tiles::kSmemBytes);
  Tensor counter = Tensor::empty(Shape{1}, DType::Int32, q.device());
  TT_CUDA_CHECK(cudaMemsetAsync(counter.data_ptr(), 0, sizeof(int32_t), stream));
  const int64_t tiles = (p.Lq + Tiles::BR - 1) / Tiles::BR * p.B * p.H;
  kernel<<<persistent_blocks(tiles, q.device().index), Tiles::kThreads, Tiles::kSmemBytes, stream>>>(
      tq, tk, tv, p, static_cast<uint16_t*>(out.data_ptr()), lse.data<float>(), counter.data<int32_t>());
  TT_CUDA_KERNEL_CHECK();
  return true;
}

// One pass (attention_wgmma_backward_fused.cuh): the preparations (D = rowsum(dO O) and lse in
// log2 units per query step, the float32 dQ accumulator and the tile counter zeroed), the kernel
// (persistent blocks) adding dQ tiles into the accumulator, then dQ scaled and stored. Query steps
// of 128 at D = 64 and of 64 at D = 128 (registers), as FlashAttention-3. False where the driver
// refuses a tensor map.
template <bool kBf16, int D>
bool launch_backward_fused(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                           const Tensor& v, const Tensor& out, const Tensor& lse, const Tensor& gq, const Tensor& gk,
                           const Tensor& gv, cudaStream_t stream) {
  constexpr int BQ = D == 64 ? 128 : 64, kStages = 2;
  using Tiles = wg::BackwardFusedTiles<D, BQ, kStages>;
  CUtensorMap tq, tg, tk, tv;
  if (!tensor_map(&tq, p, kBf16, q, p.H, p.Lq, p.st.q, Tiles::BQ) ||
      !tensor_map(&tg, p, kBf16, gout, p.H, p.Lq, p.st.gout, Tiles::BQ) ||
      !tensor_map(&tk, p, kBf16, k, p.Hkv, p.Lk, p.st.k, Tiles::BK) ||
      !tensor_map(&tv, p, kBf16, v, p.Hkv, p.Lk, p.st.v, Tiles::BK))
    return false;
  const int64_t rows = Tiles::acc_rows(p.Lq);
  Tensor acc = Tensor::empty(Shape{p.B * p.H * rows * D}, DType::Float32, q.device());
  Tensor stats = Tensor::empty(Shape{p.B * p.H * rows * 2}, DType::Float32, q.device());
  Tensor counter = Tensor::empty(Shape{1}, DType::Int32, q.device());
  auto u16 = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data_ptr()); };
  auto w16 = [](const Tensor& t) { return static_cast<uint16_t*>(t.data_ptr()); };
  const int64_t prep_threads = p.B * p.H * rows * (D / 8);
  wg::attention_backward_prepare<kBf16, D, BQ><<<unsigned((prep_threads + 255) / 256), 256, 0, stream>>>(
      p, u16(gout), u16(out), lse.data<float>(), stats.data<float>(), acc.data<float>(), rows,
      counter.data<int32_t>());
  TT_CUDA_KERNEL_CHECK();
  auto kernel = wg::attention_backward_fused_wgmma_kernel<kBf16, D, BQ, kStages>;
  mma::allow_smem(kernel, Tiles::kSmemBytes);
  const int64_t tiles = (p.Lk + Tiles::BK - 1) / Tiles::BK * p.B * p.Hkv;
  kernel<<<persistent_blocks(tiles, q.device().index), Tiles::kThreads, Tiles::kSmemBytes, stream>>>(
      tq, tk, tv, tg, p, stats.data<float>(), w16(gk), w16(gv), acc.data<float>(), counter.data<int32_t>());
  TT_CUDA_KERNEL_CHECK();
  const int64_t store_threads = p.B * p.H * p.Lq * (D / 8);
  wg::attention_dq_store<kBf16, D, Tiles::DQN><<<unsigned((store_threads + 255) / 256), 256, 0, stream>>>(
      p, acc.data<float>(), w16(gq), rows);
  TT_CUDA_KERNEL_CHECK();
  return true;
}

// Two kernels, no atomics (deterministic; the one-pass backward is faster, see
// attention_backward_wgmma_fused): dQ on the side stream beside dK/dV (as the mma backward: the two
// grids fill the GPU together)
template <bool kBf16, int D>
void launch_backward_wgmma(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                           const Tensor& v, const Tensor& lse, const Tensor& dvec, const Tensor& gq, const Tensor& gk,
                           const Tensor& gv, cudaStream_t stream) {
  constexpr int kWG = 2, QBC = 128, KBQ = 64;  // fastest on an H100 (B 4, H 16, T 4096, causal)
  using QTiles = wg::BackwardQTiles<D, kWG, QBC>;
  using KVTiles = wg::BackwardKVTiles<D, kWG, KBQ>;
  auto qk = wg::attention_backward_q_wgmma_kernel<kBf16, D, kWG, QBC>;
  auto kv = wg::attention_backward_kv_wgmma_kernel<kBf16, D, kWG, KBQ>;
  mma::allow_smem(qk, QTiles::kSmemBytes);
  mma::allow_smem(kv, KVTiles::kSmemBytes);
  auto u16 = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data_ptr()); };
  auto w16 = [](const Tensor& t) { return static_cast<uint16_t*>(t.data_ptr()); };
  AttentionSideStream& side = attention_side_stream(q.device().index);
  std::lock_guard<std::mutex> lock(side.mu);
  TT_CUDA_CHECK(cudaEventRecord(side.fork, stream));
  TT_CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.fork, 0));
  qk<<<dim3(unsigned((p.Lq + QTiles::BR - 1) / QTiles::BR), unsigned(p.B * p.H)), QTiles::kThreads,
       QTiles::kSmemBytes, side.stream>>>(p, u16(q), u16(k), u16(v), u16(gout), lse.data<float>(), dvec.data<float>(),
                                          w16(gq));
  TT_CUDA_KERNEL_CHECK();
  kv<<<dim3(unsigned((p.Lk + KVTiles::BK - 1) / KVTiles::BK), unsigned(p.B * p.Hkv)), KVTiles::kThreads,
       KVTiles::kSmemBytes, stream>>>(p, u16(q), u16(k), u16(v), u16(gout), lse.data<float>(), dvec.data<float>(),
                                      w16(gk), w16(gv));
  TT_CUDA_KERNEL_CHECK();
  TT_CUDA_CHECK(cudaEventRecord(side.join, side.stream));
  TT_CUDA_CHECK(cudaStreamWaitEvent(stream, side.join, 0));
}

// Whether this device runs the sm_90a kernels (cached per device); TINYTORCH_ATTENTION_WGMMA=0 turns them off.
bool wgmma_device(int device) {
#ifdef TINYTORCH_CUDA_SM90A
  const char* env = std::getenv("TINYTORCH_ATTENTION_WGMMA");
  if (env && std::strcmp(env, "0") == 0) return false;
  static std::atomic<int> cached[64] = {};  // 0 unknown, 1 yes, 2 no
  if (device < 0 || device >= 64) return false;
  if (!cached[device]) {
    int major = 0, minor = 0;
    TT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    TT_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    cached[device] = major == 9 && minor == 0 ? 1 : 2;
  }
  return cached[device] == 1;
#else
  (void)device;
  return false;
#endif
}

// The calls these kernels cover: see the top of the file.
bool covered(const AttentionParams& p, const Tensor& q, const Tensor& mask, std::initializer_list<const Tensor*> ts,
             std::initializer_list<HeadStrides> strides) {
  if (!attention_mma_head_dim(p, q) || mask.defined() || p.dropout_p > 0 || !(p.scale > 0) || p.Lq == 0 || p.Lk == 0)
    return false;
  if (!wgmma_device(q.device().index)) return false;
  for (const Tensor* t : ts)
    if (reinterpret_cast<uintptr_t>(t->data_ptr()) % 16 != 0) return false;
  for (const HeadStrides& s : strides)
    if (!rows_aligned(s)) return false;
  return true;
}

}  // namespace

bool attention_forward_wgmma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  if (!covered(p, q, mask, {&q, &k, &v, &out}, {p.st.q, p.st.k, p.st.v, p.st.out})) return false;
  const int D = attention_mma_head_dim(p, q);
  if (q.dtype() == DType::BFloat16)
    return (D == 64 ? launch_forward_wgmma<true, 64> : launch_forward_wgmma<true, 128>)(p, q, k, v, out, lse, stream);
  return (D == 64 ? launch_forward_wgmma<false, 64> : launch_forward_wgmma<false, 128>)(p, q, k, v, out, lse, stream);
}

bool attention_backward_wgmma_fused(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                                    const Tensor& v, const Tensor& mask, const Tensor& out, const Tensor& lse,
                                    const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream) {
  if (get_cudnn_deterministic() || !covered(p, q, mask, {&q, &k, &v, &gout, &out, &gq, &gk, &gv},
                                             {p.st.q, p.st.k, p.st.v, p.st.gout, p.st.out, p.st.gq, p.st.gk, p.st.gv}))
    return false;
  const int D = attention_mma_head_dim(p, q);
  if (q.dtype() == DType::BFloat16)
    return (D == 64 ? launch_backward_fused<true, 64> : launch_backward_fused<true, 128>)(p, gout, q, k, v, out, lse,
                                                                                          gq, gk, gv, stream);
  return (D == 64 ? launch_backward_fused<false, 64> : launch_backward_fused<false, 128>)(p, gout, q, k, v, out, lse,
                                                                                          gq, gk, gv, stream);
}

bool attention_backward_wgmma(const AttentionParams& p, const Tensor& gout, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& mask, const Tensor& lse, const Tensor& dvec,
                              const Tensor& gq, const Tensor& gk, const Tensor& gv, cudaStream_t stream) {
  if (!covered(p, q, mask, {&q, &k, &v, &gout, &gq, &gk, &gv},
               {p.st.q, p.st.k, p.st.v, p.st.gout, p.st.gq, p.st.gk, p.st.gv}))
    return false;
  const int D = attention_mma_head_dim(p, q);
  if (q.dtype() == DType::BFloat16)
    (D == 64 ? launch_backward_wgmma<true, 64> : launch_backward_wgmma<true, 128>)(p, gout, q, k, v, lse, dvec, gq, gk,
                                                                                   gv, stream);
  else
    (D == 64 ? launch_backward_wgmma<false, 64> : launch_backward_wgmma<false, 128>)(p, gout, q, k, v, lse, dvec, gq,
                                                                                     gk, gv, stream);
  return true;
}

}  // namespace tt::cuda
