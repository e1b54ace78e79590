// conv2d's Winograd F(2x2, 3x3) path: per chunk of items, v = B^T d B of every input tile,
// m[e] = u[e] @ v[e] for the 16 entries e (one batched GEMM), out = A^T m A.
#include "conv_winograd.h"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include "tinytorch/kernels/conv.h"
#include "tinytorch/kernels/linalg.h"
#include "tinytorch/kernels/winograd.h"
#include "tinytorch/parallel.h"

namespace tt {

TT_DEFINE_KERNEL(winograd_input)
TT_DEFINE_KERNEL(winograd_weight)
TT_DEFINE_KERNEL(winograd_output)
TT_DEFINE_KERNEL(winograd_grad_output)
TT_DEFINE_KERNEL(winograd_weight_grad)

namespace {

// Floats of v and m per chunk of items (4 MiB): a chunk's transforms stay in L2/L3 for the GEMMs.
constexpr int64_t kWinogradBudget = int64_t(1) << 20;
// Floats between the 16 blocks of v and m beyond their size: 2 cache lines, so the 16 streams
// the transforms read and write don't share L1/L2 sets when a block is a multiple of 4 KiB.
constexpr int64_t kPad = 32;
// Outputs per plane below which the GEMM path is faster: ResNet's 4x4 layer has 4 tiles per item,
// too few to pay for transforming 512 x 512 weights (16/9 the weight's size) every call.
constexpr int64_t kMinOutputs = 64;

// Items per chunk: v and m (or z) within kWinogradBudget, equal chunks.
int64_t chunk_items(int64_t B, int64_t per_item) {
  int64_t nb = std::clamp<int64_t>(kWinogradBudget / std::max<int64_t>(1, per_item), 1, std::max<int64_t>(B, 1));
  int64_t chunks = (std::max<int64_t>(B, 1) + nb - 1) / nb;
  return (std::max<int64_t>(B, 1) + chunks - 1) / chunks;
}

// The batch in G chunks of nb items (a function of the shapes only, so are the sums), each with
// its own v: (16, C, T) and m: (16, O, T), T = items * tiles, the 16 blocks kPad floats more than
// their size apart.
struct Chunks {
  int64_t B, C, O, th, tw, tiles, nb, G, sv, sm;
  Chunks(int64_t B_, int64_t C_, int64_t O_, int64_t Ho, int64_t Wo)
      : B(B_), C(C_), O(O_), th((Ho + 1) / 2), tw((Wo + 1) / 2), tiles(th * tw),
        nb(chunk_items(B, 16 * (C + O) * tiles)), G((B + nb - 1) / nb), sv(C * nb * tiles + kPad),
        sm(O * nb * tiles + kPad) {}
  // f(ci, b0, cur, v, m) for each chunk ci of items [b0, b0 + cur). Each thread runs whole chunks
  // (transforms and GEMMs in its own core's caches; the kernels run single-threaded inside), or
  // with fewer chunks than threads the kernels split each one.
  template <class F>
  void run(Device dev, const F& f) const {
    auto chunks = [&](int64_t c0, int64_t c1) {
      Tensor vbuf = Tensor::empty({16 * sv}, DType::Float32, dev), mbuf = Tensor::empty({16 * sm}, DType::Float32, dev);
      for (int64_t ci = c0; ci < c1; ++ci) {
        int64_t b0 = ci * nb, cur = std::min(nb, B - b0), T = cur * tiles;
        f(ci, b0, cur, vbuf.as_strided({16, C, T}, {sv, T, 1}), mbuf.as_strided({16, O, T}, {sm, T, 1}));
      }
    };
    if (G >= get_num_threads()) parallel_for(0, G, 1, chunks);
    else chunks(0, G);
  }
};

bool winograd_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("TINYTORCH_CONV_WINOGRAD");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return on;
}

}  // namespace

bool winograd_applies(Device dev, DType compute, const Conv2dParams& p, int64_t groups, int64_t C, int64_t O,
                      int64_t Ho, int64_t Wo) {
  return dev.is_cpu() && compute == DType::Float32 && groups == 1 && p.kh == 3 && p.kw == 3 && p.sh == 1 &&
         p.sw == 1 && p.dh == 1 && p.dw == 1 && p.ph <= 2 && p.pw <= 2 && C >= 16 && O >= 16 && Ho >= 2 &&
         Wo >= 2 && Ho * Wo >= kMinOutputs && winograd_input_kernel.has(dev.type) && winograd_enabled();
}

void conv2d_winograd(const Tensor& x, const Tensor& u, int64_t ph, int64_t pw, const Tensor& out) {
  Device dev = x.device();
  // Chunks a function of the shapes only: OpenBLAS's sums (the AVX2 path) depend on the GEMM's n.
  const Chunks ch(x.size(0), x.size(1), out.size(1), out.size(2), out.size(3));
  ch.run(dev, [&](int64_t, int64_t b0, int64_t cur, const Tensor& v, const Tensor& m) {
    winograd_input_kernel[dev](x.narrow(0, b0, cur), v, ph, pw, ch.th, ch.tw);
    // m[e] (O, T) = u[e] (O, C) @ v[e] (C, T), for the 16 entries e
    const int64_t T = v.size(2);
    GemmArgs a;
    a.a = u, a.b = v, a.c = m;
    a.m = ch.O, a.n = T, a.k = ch.C, a.lda = ch.C, a.ldb = T, a.ldc = T;
    a.batch = 16, a.stride_a = ch.O * ch.C, a.stride_b = ch.sv, a.stride_c = ch.sm;
    gemm_kernel[dev](a);
    winograd_output_kernel[dev](m, out.narrow(0, b0, cur), ch.th, ch.tw);
  });
}

void conv2d_winograd_grad_weight(const Tensor& x, const Tensor& go, int64_t ph, int64_t pw, const Tensor& gw) {
  Device dev = x.device();
  const Chunks ch(x.size(0), x.size(1), go.size(1), go.size(2), go.size(3));
  const int64_t C = ch.C, O = ch.O;
  // One partial du per chunk, summed in chunk order: the sums don't depend on the thread count.
  Tensor part = Tensor::empty({ch.G, 16 * O * C, 1}, DType::Float32, dev);
  ch.run(dev, [&](int64_t ci, int64_t b0, int64_t cur, const Tensor& v, const Tensor& z) {
    winograd_input_kernel[dev](x.narrow(0, b0, cur), v, ph, pw, ch.th, ch.tw);
    winograd_grad_output_kernel[dev](go.narrow(0, b0, cur), z, ch.th, ch.tw);
    // part[ci][e] (O, C) = z[e] (O, T) @ v[e]^T (T, C), for the 16 entries e
    const int64_t T = v.size(2);
    GemmArgs a;
    a.a = z, a.b = v, a.c = part.narrow(0, ci, 1);
    a.trans_b = true;
    a.m = O, a.n = C, a.k = T, a.lda = T, a.ldb = T, a.ldc = C;
    a.batch = 16, a.stride_a = ch.sm, a.stride_b = ch.sv, a.stride_c = O * C;
    gemm_kernel[dev](a);
  });
  Tensor du = Tensor::empty({16, O, C}, DType::Float32, dev);
  channel_sum_kernel[dev](part, du.view({16 * O * C}), false);  // over the chunks, in order
  winograd_weight_grad_kernel[dev](du, gw);
}

void conv2d_winograd_forward(const Tensor& x, const Tensor& w, int64_t ph, int64_t pw, const Tensor& out) {
  Tensor u = Tensor::empty({16, w.size(0), w.size(1)}, DType::Float32, x.device());
  winograd_weight_kernel[x.device()](w, u, false);
  conv2d_winograd(x, u, ph, pw, out);
}

void conv2d_winograd_grad_input(const Tensor& go, const Tensor& w, int64_t ph, int64_t pw, const Tensor& gx) {
  // gx = conv2d(go, w^T rotated by 180 degrees, padding 2 - p): a stride-1 3x3 convolution again
  Tensor u = Tensor::empty({16, w.size(1), w.size(0)}, DType::Float32, go.device());
  winograd_weight_kernel[go.device()](w, u, true);
  conv2d_winograd(go, u, 2 - ph, 2 - pw, gx);
}

}  // namespace tt
