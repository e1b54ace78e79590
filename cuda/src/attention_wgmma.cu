// Entry points of the Hopper (sm_90a) attention kernels (attention_wgmma.cuh, forward;
// attention_wgmma_backward.cuh, backward): float16/bfloat16,
// E = Ev <= 128 a multiple of 8, no mask, no dropout, positive scale, on a compute-capability 9.0
// device of a build that has sm_90a code (CMake defines TINYTORCH_CUDA_SM90A when
// CMAKE_CUDA_ARCHITECTURES names 90a). Everything else returns false: the mma.sync kernels run.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include "attention_wgmma.cuh"
#include "attention_wgmma_backward.cuh"
#include "attention_mma.h"

namespace tt::cuda {
namespace {

// D = 64: 128 query rows x 64-key tiles; D = 128: 128 x 128 (fastest on an H100 in
// bench/attention_wgmma_dev.py's timings)
template <int D>
constexpr int key_tile() { return D == 64 ? 64 : 128; }

template <bool kBf16, int D>
void launch_forward_wgmma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                          const Tensor& lse, cudaStream_t stream) {
  constexpr int kWG = 2, BC = key_tile<D>();
  using Tiles = wg::ForwardTiles<D, kWG, BC>;
  auto kernel = wg::attention_forward_wgmma_kernel<kBf16, D, kWG, BC>;
  mma::allow_smem(kernel, Tiles::kSmemBytes);
  dim3 grid(unsigned((p.Lq + Tiles::BR - 1) / Tiles::BR), unsigned(p.B * p.H));
  auto u16 = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data_ptr()); };
  kernel<<<grid, Tiles::kThreads, Tiles::kSmemBytes, stream>>>(p, u16(q), u16(k), u16(v),
                                                               static_cast<uint16_t*>(out.data_ptr()), lse.data<float>());
  TT_CUDA_KERNEL_CHECK();
}

// dQ on the side stream beside dK/dV (as the mma backward: the two grids fill the GPU together)
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
    (D == 64 ? launch_forward_wgmma<true, 64> : launch_forward_wgmma<true, 128>)(p, q, k, v, out, lse, stream);
  else
    (D == 64 ? launch_forward_wgmma<false, 64> : launch_forward_wgmma<false, 128>)(p, q, k, v, out, lse, stream);
  return true;
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
