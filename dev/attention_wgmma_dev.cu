// Dev harness for the Hopper attention kernels (cuda/src/attention/attention_wgmma*.cuh), built alone by
// dev/attention_wgmma_dev.py with nvcc (seconds, instead of the project's build) and called
// through ctypes with torch's tensors. Each `cfg` is one tile configuration.
#include <cstdio>
#include <initializer_list>
#include "../cuda/src/attention/attention_wgmma_backward_fused.cuh"
#include "../cuda/src/tma_map.h"

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

// The persistent kernels' tile counter and the blocks of their grid (one per SM, fewer for fewer tiles).
int* tile_counter() {
  static int* counter = nullptr;
  if (!counter) cudaMalloc(&counter, sizeof(int));
  return counter;
}
unsigned persistent_blocks(long tiles) {
  static int sms = 0;
  if (!sms) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  return unsigned(tiles < sms ? tiles : sms);
}

template <class Kernel>
void allow(Kernel kernel, size_t bytes) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
}

CUtensorMap tma_map(const void* base, bool bf16, long B, long heads, long L, long E, const HeadStrides& st, int rows) {
  CUtensorMap map;
  if (!tt::cuda::tma_map_16bit(&map, base, bf16, B, heads, L, E, st.b, st.h, st.l, rows))
    std::fprintf(stderr, "cuTensorMapEncodeTiled refused the layout\n");
  return map;
}

// persistent: as many blocks as SMs take the tiles in turn (a zeroed counter); else one block per tile
template <bool kBf16, int D, int kStages, int kConsumers = 2>
int forward(const AttentionParams& p, const void* q, const void* k, const void* v, void* out, float* lse,
            bool persistent) {
  using T = ForwardTiles<D, 128, kStages, kConsumers>;
  auto kernel = attention_forward_wgmma_kernel<kBf16, D, 128, kStages, kConsumers>;
  const long tiles = (p.Lq + T::BR - 1) / T::BR * p.B * p.H;
  if (persistent) cudaMemsetAsync(tile_counter(), 0, sizeof(int));
  allow(kernel, T::kSmemBytes);
  const CUtensorMap tq = tma_map(q, kBf16, p.B, p.H, p.Lq, p.E, p.st.q, T::BR);
  const CUtensorMap tk = tma_map(k, kBf16, p.B, p.Hkv, p.Lk, p.E, p.st.k, 128);
  const CUtensorMap tv = tma_map(v, kBf16, p.B, p.Hkv, p.Lk, p.E, p.st.v, 128);
  kernel<<<persistent ? persistent_blocks(tiles) : unsigned(tiles), T::kThreads, T::kSmemBytes>>>(
      tq, tk, tv, p, (uint16_t*)out, lse, persistent ? tile_counter() : nullptr);
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

// out: the forward's output (in dvec's place); kernel = false: the preparations and dQ store alone;
// persistent: as many blocks as SMs take the tiles in turn, else one block per tile
template <bool kBf16, int D, int BQ>
int backward_fused(const AttentionParams& p, const void* q, const void* k, const void* v, const void* go,
                   const float* lse, const void* out, void* gq, void* gk, void* gv, float* dq_acc, float* stats,
                   bool kernel, bool persistent) {
  using T = BackwardFusedTiles<D, BQ, 2>;
  const long rows = T::acc_rows(p.Lq), threads = p.B * p.H * rows * (D / 8);
  attention_backward_prepare<kBf16, D, BQ><<<unsigned((threads + 255) / 256), 256>>>(
      p, (const uint16_t*)go, (const uint16_t*)out, lse, stats, dq_acc, rows, tile_counter());
  const long tiles = (p.Lk + T::BK - 1) / T::BK * p.B * p.Hkv;
  auto fused = attention_backward_fused_wgmma_kernel<kBf16, D, BQ, 2>;
  allow(fused, T::kSmemBytes);
  const CUtensorMap tq = tma_map(q, kBf16, p.B, p.H, p.Lq, p.E, p.st.q, T::BQ);
  const CUtensorMap tg = tma_map(go, kBf16, p.B, p.H, p.Lq, p.E, p.st.gout, T::BQ);
  const CUtensorMap tk = tma_map(k, kBf16, p.B, p.Hkv, p.Lk, p.E, p.st.k, T::BK);
  const CUtensorMap tv = tma_map(v, kBf16, p.B, p.Hkv, p.Lk, p.E, p.st.v, T::BK);
  if (kernel)
    fused<<<persistent ? persistent_blocks(tiles) : unsigned(tiles), T::kThreads, T::kSmemBytes>>>(
        tq, tk, tv, tg, p, stats, (uint16_t*)gk, (uint16_t*)gv, dq_acc, persistent ? tile_counter() : nullptr);
  const long stores = p.B * p.H * p.Lq * (D / 8);
  attention_dq_store<kBf16, D, T::DQN><<<unsigned((stores + 255) / 256), 256>>>(p, dq_acc, (uint16_t*)gq, rows);
  return int(cudaGetLastError());
}

}  // namespace

// cfg 0: as attention_wgmma.cu (key tiles of 128, 2 stages, persistent; three consumer warpgroups,
// 192-row tiles, at D = 64, else two); cfg 1: two consumers, 3 stages; cfg 2: two consumers, 3
// stages, one block per tile; cfg 3: two consumers, 2 stages.
extern "C" int wg_forward(int cfg, int bf16, int D, const void* q, const void* k, const void* v, void* out, float* lse,
                          long B, long H, long Hkv, long Lq, long Lk, long E, double scale, int causal,
                          const long* st /* q, k, v, out: (b, h, l) each */) {
  AttentionParams p = params(B, H, Hkv, Lq, Lk, E, scale, causal);
  set_strides({&p.st.q, &p.st.k, &p.st.v, &p.st.out}, st);
#define TT_DEV_FORWARD(STAGES, PERSISTENT)                                                     \
  if (D == 64) return bf16 ? forward<true, 64, STAGES>(p, q, k, v, out, lse, PERSISTENT)     \
                           : forward<false, 64, STAGES>(p, q, k, v, out, lse, PERSISTENT);   \
  return bf16 ? forward<true, 128, STAGES>(p, q, k, v, out, lse, PERSISTENT)                 \
              : forward<false, 128, STAGES>(p, q, k, v, out, lse, PERSISTENT);
  if (cfg == 1) {
    TT_DEV_FORWARD(3, true)
  }
  if (cfg == 2) {
    TT_DEV_FORWARD(3, false)
  }
  if (cfg == 3) {
    TT_DEV_FORWARD(2, true)
  }
  if (D == 64)  // the library's: three consumer warpgroups at D = 64
    return bf16 ? forward<true, 64, 2, 3>(p, q, k, v, out, lse, true) : forward<false, 64, 2, 3>(p, q, k, v, out, lse, true);
  TT_DEV_FORWARD(2, true)
#undef TT_DEV_FORWARD
}

// cfg 0: the two-kernel backward (dQ key tiles of 128, dK/dV query steps of 64), as the library
// runs it under deterministic mode; cfg 1: dQ key tiles of 64; cfg 2: the one-pass backward, as the
// library runs it otherwise (dQ tiles added into dq_acc, zeroed by the caller, in the kernel's layout:
// BackwardFusedTiles; stats: 2 acc_rows floats per (b, h); both from attention_backward_prepare,
// which reads out (passed in dvec's place); then attention_dq_store); cfg 3: the same with query steps of 128 at D = 64.
extern "C" int wg_backward(int cfg, int bf16, int D, const void* q, const void* k, const void* v, const void* go,
                           const float* lse, const float* dvec, void* gq, void* gk, void* gv, float* dq_acc, float* stats, long B,
                           long H, long Hkv, long Lq, long Lk, long E, double scale, int causal,
                           const long* st /* q, k, v, gout, gq, gk, gv, out */) {
  AttentionParams p = params(B, H, Hkv, Lq, Lk, E, scale, causal);
  set_strides({&p.st.q, &p.st.k, &p.st.v, &p.st.gout, &p.st.gq, &p.st.gk, &p.st.gv, &p.st.out}, st);
  const bool kernel = cfg < 10;  // cfg 12, 13: cfg 2, 3 without the main kernel (the overheads)
  cfg %= 10;
  const bool persistent = cfg < 4;  // cfg 4, 5: cfg 2, 3 with one block per tile
  if (cfg >= 4) cfg -= 2;
  if (cfg == 2 || cfg == 3) {  // cfg 3: query steps of 128 at D = 64
    if (D == 64 && cfg == 3) return bf16 ? backward_fused<true, 64, 128>(p, q, k, v, go, lse, dvec, gq, gk, gv, dq_acc, stats, kernel, persistent)
                                         : backward_fused<false, 64, 128>(p, q, k, v, go, lse, dvec, gq, gk, gv, dq_acc, stats, kernel, persistent);
    if (D == 64) return bf16 ? backward_fused<true, 64, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv, dq_acc, stats, kernel, persistent)
                            : backward_fused<false, 64, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv, dq_acc, stats, kernel, persistent);
    return bf16 ? backward_fused<true, 128, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv, dq_acc, stats, kernel, persistent)
                : backward_fused<false, 128, 64>(p, q, k, v, go, lse, dvec, gq, gk, gv, dq_acc, stats, kernel, persistent);
  }
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
