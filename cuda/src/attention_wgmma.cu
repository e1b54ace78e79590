// Entry point of the Hopper (sm_90a) attention forward (attention_wgmma.cuh): float16/bfloat16,
// E = Ev <= 128 a multiple of 8, no mask, no dropout, positive scale, on a compute-capability 9.0
// device of a build that has sm_90a code (CMake defines TINYTORCH_CUDA_SM90A when
// CMAKE_CUDA_ARCHITECTURES names 90a). Everything else returns false: the mma.sync kernels run.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include "attention_wgmma.cuh"
#include "attention_mma.h"

namespace tt::cuda {
namespace {

// D = 64: 128 query rows x 64-key tiles; D = 128: 128 x 128 (fastest on an H100, bench/attention_bench.py)
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

}  // namespace

bool attention_forward_wgmma(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask, const Tensor& out, const Tensor& lse, cudaStream_t stream) {
  const int D = attention_mma_head_dim(p, q);
  if (!D || mask.defined() || p.dropout_p > 0 || !(p.scale > 0) || !wgmma_device(q.device().index)) return false;
  auto aligned = [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; };
  if (!aligned(q) || !aligned(k) || !aligned(v) || !aligned(out)) return false;
  for (const HeadStrides& s : {p.st.q, p.st.k, p.st.v, p.st.out})
    if (!rows_aligned(s)) return false;
  if (q.dtype() == DType::BFloat16)
    (D == 64 ? launch_forward_wgmma<true, 64> : launch_forward_wgmma<true, 128>)(p, q, k, v, out, lse, stream);
  else
    (D == 64 ? launch_forward_wgmma<false, 64> : launch_forward_wgmma<false, 128>)(p, q, k, v, out, lse, stream);
  return true;
}

}  // namespace tt::cuda
