// Dev harness for the Hopper attention kernels (cuda/src/attention_wgmma*.cuh), built alone by
// bench/attention_wgmma_dev.py with nvcc (seconds, instead of the project's build) and called
// through ctypes with torch's tensors. Each `cfg` is one tile configuration.
#include <cudaTypedefs.h>
#include <cstdio>
#include <initializer_list>
#include "../cuda/src/attention_wgmma_backward.cuh"
#include "attention_wgmma_ws.cuh"

using namespace tt;
using namespace tt::cuda::wg;

namespace {

AttentionParams params(long B, long H, long Hkv, long Lq, long Lk, long E, double scale, int causal) {
  AttentionParams p;
  p.B = B, p.H = H, p.Hkv = Hkv, p.Lq = Lq, p.Lk = Lk, p.E = E, p.Ev = E, p.scale = scale, p.causal = causal;
  return p;
}

// st: (b, h, l) strides of each operand, in the order given
void set_strides(std::initializer_list<HeadStrides*> operands, const long* st) {
  int i = 0;
  for (HeadStrides* s : operands) s->b = st[3 * i], s->h = st[3 * i + 1], s->l = st[3 * i + 2], ++i;
}

template <class Kernel>
void allow(Kernel kernel, size_t bytes) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
}

template <bool kBf16, int D, int BC>
int forward(const AttentionParams& p, const void* q, const void* k, const void* v, void* out, float* lse) {
  using Tiles = ForwardTiles<D, 2, BC>;
  auto kernel = attention_forward_wgmma_kernel<kBf16, D, 2, BC>;
  allow(kernel, Tiles::kSmemBytes);
  kernel<<<dim3(unsigned((p.Lq + Tiles::BR - 1) / Tiles::BR), unsigned(p.B * p.H)), Tiles::kThreads,
           Tiles::kSmemBytes>>>(p, (const uint16_t*)q, (const uint16_t*)k, (const uint16_t*)v, (uint16_t*)out, lse);
  return int(cudaGetLastError());
}

// TMA map of a (B, heads, L, E) 16-bit operand with rows `st` apart, boxes of (64 columns, rows).
CUtensorMap tma_map(const void* base, bool bf16, long B, long heads, long L, long E, const HeadStrides& st, int rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &status);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map;
  cuuint64_t dims[4] = {cuuint64_t(E), cuuint64_t(L), cuuint64_t(heads), cuuint64_t(B)};
  cuuint64_t strides[3] = {cuuint64_t(st.l) * 2, cuuint64_t(st.h) * 2, cuuint64_t(st.b) * 2};
  cuuint32_t box[4] = {64, cuuint32_t(rows), 1, 1}, unit[4] = {1, 1, 1, 1};
  CUresult r = encode(&map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                      const_cast<void*>(base), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::fprintf(stderr, "cuTensorMapEncodeTiled failed: %d\n", int(r));
  return map;
}

template <bool kBf16, int D, int BC, bool kOverlap>
int forward_ws(const AttentionParams& p, const void* q, const void* k, const void* v, void* out, float* lse) {
  constexpr int kStages = 2;
  using T = ws::Tiles<D, BC, kStages>;
  auto kernel = ws::attention_forward_ws_kernel<kBf16, D, BC, kStages, kOverlap>;
  allow(kernel, T::kSmemBytes);
  const CUtensorMap tq = tma_map(q, kBf16, p.B, p.H, p.Lq, p.E, p.st.q, T::BR);
  const CUtensorMap tk = tma_map(k, kBf16, p.B, p.Hkv, p.Lk, p.E, p.st.k, BC);
  const CUtensorMap tv = tma_map(v, kBf16, p.B, p.Hkv, p.Lk, p.E, p.st.v, BC);
  kernel<<<dim3(unsigned((p.Lq + T::BR - 1) / T::BR), unsigned(p.B * p.H)), T::kThreads, T::kSmemBytes>>>(
      tq, tk, tv, p, (uint16_t*)out, lse);
  return int(cudaGetLastError());
}

template <bool kBf16, int D, int QBC, int KBQ>
int backward(const AttentionParams& p, const void* q, const void* k, const void* v, const void* go, const float* lse,
             const float* dvec, void* gq, void* gk, void* gv) {
  using QT = BackwardQTiles<D, 2, QBC>;
  auto qk = attention_backward_q_wgmma_kernel<kBf16, D, 2, QBC>;
  allow(qk, QT::kSmemBytes);
  qk<<<dim3(unsigned((p.Lq + QT::BR - 1) / QT::BR), unsigned(p.B * p.H)), QT::kThreads, QT::kSmemBytes>>>(
      p, (const uint16_t*)q, (const uint16_t*)k, (const uint16_t*)v, (const uint16_t*)go, lse, dvec, (uint16_t*)gq);
  using KT = BackwardKVTiles<D, 2, KBQ>;
  auto kv = attention_backward_kv_wgmma_kernel<kBf16, D, 2, KBQ>;
  allow(kv, KT::kSmemBytes);
  kv<<<dim3(unsigned((p.Lk + KT::BK - 1) / KT::BK), unsigned(p.B * p.Hkv)), KT::kThreads, KT::kSmemBytes>>>(
      p, (const uint16_t*)q, (const uint16_t*)k, (const uint16_t*)v, (const uint16_t*)go, lse, dvec, (uint16_t*)gk,
      (uint16_t*)gv);
  return int(cudaGetLastError());
}

}  // namespace

// cfg 0: key tiles of 64 (D = 64) / 128 (D = 128), as attention_wgmma.cu; cfg 1: 128 for both;
// cfg 2: the warp-specialized TMA experiment (attention_wgmma_ws.cuh), key tiles as cfg 0; cfg 3:
// the same with the next tile's scores overlapping this tile's P V.
extern "C" int wg_forward(int cfg, int bf16, int D, const void* q, const void* k, const void* v, void* out, float* lse,
                          long B, long H, long Hkv, long Lq, long Lk, long E, double scale, int causal,
                          const long* st /* q, k, v, out: (b, h, l) each */) {
  AttentionParams p = params(B, H, Hkv, Lq, Lk, E, scale, causal);
  set_strides({&p.st.q, &p.st.k, &p.st.v, &p.st.out}, st);
#define TT_DEV_WS(OVERLAP)                                                                                   \
  if (D == 64) return bf16 ? forward_ws<true, 64, 64, OVERLAP>(p, q, k, v, out, lse)                          \
                           : forward_ws<false, 64, 64, OVERLAP>(p, q, k, v, out, lse);                        \
  return bf16 ? forward_ws<true, 128, 128, OVERLAP>(p, q, k, v, out, lse)                                     \
              : forward_ws<false, 128, 128, OVERLAP>(p, q, k, v, out, lse);
  if (cfg == 2) {
    TT_DEV_WS(false)
  }
  if (cfg == 3) {
    TT_DEV_WS(true)
  }
#undef TT_DEV_WS
  if (cfg == 0 && D == 64) return bf16 ? forward<true, 64, 64>(p, q, k, v, out, lse) : forward<false, 64, 64>(p, q, k, v, out, lse);
  if (D == 64) return bf16 ? forward<true, 64, 128>(p, q, k, v, out, lse) : forward<false, 64, 128>(p, q, k, v, out, lse);
  return bf16 ? forward<true, 128, 128>(p, q, k, v, out, lse) : forward<false, 128, 128>(p, q, k, v, out, lse);
}

// cfg 0: dQ key tiles of 128, dK/dV query steps of 64, as attention_wgmma.cu; cfg 1: dQ key tiles of 64.
extern "C" int wg_backward(int cfg, int bf16, int D, const void* q, const void* k, const void* v, const void* go,
                           const float* lse, const float* dvec, void* gq, void* gk, void* gv, long B, long H, long Hkv,
                           long Lq, long Lk, long E, double scale, int causal,
                           const long* st /* q, k, v, gout, gq, gk, gv */) {
  AttentionParams p = params(B, H, Hkv, Lq, Lk, E, scale, causal);
  set_strides({&p.st.q, &p.st.k, &p.st.v, &p.st.gout, &p.st.gq, &p.st.gk, &p.st.gv}, st);
#define TT_DEV_BACKWARD(QBC)                                                                                        \
  if (D == 64) return bf16 ? backward<true, 64, QBC, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv)                     \
                           : backward<false, 64, QBC, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv);                   \
  return bf16 ? backward<true, 128, QBC, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv)                                 \
              : backward<false, 128, QBC, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv);
  if (cfg == 0) {
    TT_DEV_BACKWARD(128)
  }
  TT_DEV_BACKWARD(64)
#undef TT_DEV_BACKWARD
}
