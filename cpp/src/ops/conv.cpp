// conv2d forward/backward: argument checks, then im2col -> gemm (forward, grad_weight) and
// gemm -> col2im (grad_input) over chunks of the batch. 16-bit floats compute in float32.
// CPU: the threads split the batch, each with its own L2-sized col buffer, and the kernels
// they call run single-threaded inside (one parallel region per op, not two per chunk).
// GPU: the col buffer is laid out batch-inner, (C*K, items, L), so each conv group is one large
// GEMM over a whole chunk of items (n or k = items*L) rather than a batch of small ones.
#include "tinytorch/ops/conv.h"
#include <algorithm>
#include "conv_winograd.h"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/kernels/linalg.h"
#include "tinytorch/parallel.h"

namespace tt {

TT_DEFINE_KERNEL(im2col)
TT_DEFINE_KERNEL(col2im)
TT_DEFINE_KERNEL(conv2d_direct)
TT_DEFINE_KERNEL(conv2d_direct_backward)
TT_DEFINE_KERNEL(channel_sum)

namespace {

// Elements of im2col buffer allowed per chunk of the batch. CPU: 1 MiB of float32, so it stays
// in L2 between im2col and the GEMM. GPU: 512 MiB, so a chunk is a whole training batch of a
// small CNN (MNIST's conv2 at batch 512 needs 340 MiB).
constexpr int64_t kColBudgetCache = int64_t(1) << 18;
constexpr int64_t kColBudgetDevice = int64_t(128) << 20;
// CPU, small outputs (Ho*Wo < kBatchInnerL: ResNet's late layers, 1x1 to 11x11): per-item GEMMs
// with n = Ho*Wo are too thin to run well, so these take the batch-inner path as the GPU does,
// one GEMM with n = items*L threaded inside, over 8 MiB col chunks.
constexpr int64_t kBatchInnerL = 128;
constexpr int64_t kColBudgetBatchInner = int64_t(2) << 20;
// CPU grad_weight: items per partial sum. Fixed, so the sums (and the result) do not depend on
// the thread count: partials are summed over their items in order, then over groups in double.
constexpr int64_t kWeightGroup = 8;

struct ConvGeom {
  int64_t B, C, H, W, O, Cg, Og, Ho, Wo, K, groups;
  Conv2dParams p;
  bool unbatched, pointwise;  // pointwise: 1x1 kernel, stride 1, no padding -> col is x itself
  int64_t L() const { return Ho * Wo; }
};

// A 0-dim view whose data pointer is `t`'s plus `off` elements: a base pointer for gemm.
Tensor base_at(const Tensor& t, int64_t off) { return t.as_strided({}, {}, t.offset() + off); }

ConvGeom check_conv(const char* op, const Tensor& x, const Tensor& w, Pair stride, Pair padding, Pair dilation,
                    int64_t groups) {
  TT_CHECK(x.defined() && w.defined(), op, ": undefined tensor argument");
  check_same_device(op, x, w);
  TT_CHECK(x.dtype() == w.dtype(), op, ": Input type (", dtype_name(x.dtype()), ") and weight type (",
           dtype_name(w.dtype()), ") should be the same");
  if (!is_floating(x.dtype())) throw_unsupported_dtype(op, x.dtype());
  TT_CHECK(w.dim() == 4, op, ": weight must be 4-D (out_channels, in_channels/groups, kH, kW), got ", w.describe());
  TT_CHECK(x.dim() == 3 || x.dim() == 4, op, ": Expected 3D (unbatched) or 4D (batched) input to conv2d, but got ",
           "input of size: ", shape_str(x.shape()));
  TT_CHECK(groups > 0, op, ": non-positive groups is not supported, got ", groups);
  for (int i = 0; i < 2; ++i) {
    TT_CHECK(stride[i] > 0, op, ": non-positive stride is not supported, got ", stride[0], "x", stride[1]);
    TT_CHECK(dilation[i] > 0, op, ": dilation should be greater than zero, got ", dilation[0], "x", dilation[1]);
    TT_CHECK(padding[i] >= 0, op, ": negative padding is not supported, got ", padding[0], "x", padding[1]);
  }
  ConvGeom g{};
  g.unbatched = x.dim() == 3;
  int64_t o = g.unbatched ? 0 : 1;  // index of the channel dim
  g.B = g.unbatched ? 1 : x.size(0);
  g.C = x.size(o), g.H = x.size(o + 1), g.W = x.size(o + 2);
  g.O = w.size(0), g.Cg = w.size(1), g.groups = groups;
  g.p = Conv2dParams{w.size(2), w.size(3), stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]};
  TT_CHECK(g.C == g.Cg * groups, op, ": Given groups=", groups, ", weight of size ", shape_str(w.shape()),
           ", expected input", shape_str(x.shape()), " to have ", g.Cg * groups, " channels, but got ", g.C,
           " channels instead");
  TT_CHECK(g.O % groups == 0, op, ": Given groups=", groups, ", expected weight ", shape_str(w.shape()),
           " to be divisible by ", groups, " at dimension 0");
  g.Og = g.O / groups;
  int64_t eh = g.p.dh * (g.p.kh - 1) + 1, ew = g.p.dw * (g.p.kw - 1) + 1;
  TT_CHECK(g.H + 2 * g.p.ph >= eh && g.W + 2 * g.p.pw >= ew, op, ": Calculated padded input size per channel: (",
           g.H + 2 * g.p.ph, " x ", g.W + 2 * g.p.pw, "). Kernel size: (", eh, " x ", ew,
           "). Kernel size can't be greater than actual input size");
  // PyTorch runs empty batches and empty channel sets (its "empty" backend), not empty images
  TT_CHECK(g.B == 0 || g.C == 0 || (g.H > 0 && g.W > 0), op,
           ": Only zero batch or zero channel inputs are supported, but got input shape: ", shape_str(x.shape()));
  g.Ho = (g.H + 2 * g.p.ph - eh) / g.p.sh + 1;
  g.Wo = (g.W + 2 * g.p.pw - ew) / g.p.sw + 1;
  g.K = g.p.kh * g.p.kw;
  g.pointwise = g.K == 1 && g.p.sh == 1 && g.p.sw == 1 && g.p.ph == 0 && g.p.pw == 0;
  return g;
}

DType compute_dtype(DType d) { return d == DType::Float64 ? d : DType::Float32; }

// Whether the batch-inner path (one GEMM per chunk of items) runs: every GPU conv, small CPU ones.
bool batch_inner(const ConvGeom& g, Device dev) { return !dev.is_cpu() || g.L() < kBatchInnerL; }

int64_t chunk_items(const ConvGeom& g, Device dev) {
  int64_t per = std::max<int64_t>(1, g.C * g.K * g.L());
  int64_t budget = !dev.is_cpu() ? kColBudgetDevice : batch_inner(g, dev) ? kColBudgetBatchInner : kColBudgetCache;
  int64_t nb = std::clamp<int64_t>(budget / per, 1, std::max<int64_t>(g.B, 1));
  int64_t chunks = (std::max<int64_t>(g.B, 1) + nb - 1) / nb;
  return (std::max<int64_t>(g.B, 1) + chunks - 1) / chunks;  // equal chunks: 16 items as 8 + 8, not 14 + 2
}

// ---------------------------------------------------------------------------- batch-inner path (GPU, small CPU)
// colp: (C*K, nb, L), batch-inner. Items [0, cur) as the (cur, C*K, L) view im2col/col2im take.
Tensor items_of(const Tensor& colp, int64_t cur) { return colp.narrow(1, 0, cur).permute({1, 0, 2}); }

GemmArgs conv_gemm() {
  GemmArgs a;
  a.conv = true;  // TF32 per backends.cudnn.allow_tf32
  return a;
}

// x: (B, C, H, W), w: (O, Cg, kh, kw), bias: (O) or undefined -> out: (B, O, Ho, Wo)
void conv2d_forward_device(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Tensor& out) {
  Device dev = x.device();
  int64_t L = g.L(), CgK = g.Cg * g.K, nb = chunk_items(g, dev);
  Tensor colp = Tensor::empty({g.C * g.K, nb, L}, x.dtype(), dev);
  Tensor ot = Tensor::empty({g.O, nb, L}, x.dtype(), dev);  // GEMM output, channels outer
  for (int64_t b0 = 0; b0 < g.B; b0 += nb) {
    int64_t cur = std::min(nb, g.B - b0);
    im2col_kernel[dev](x.narrow(0, b0, cur), items_of(colp, cur), g.p, g.Ho, g.Wo);
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      // ot[group] (Og, cur*L) = w[group] (Og, CgK) @ colp[group] (CgK, cur*L)
      GemmArgs a = conv_gemm();
      a.a = base_at(w, gi * g.Og * CgK), a.b = base_at(colp, gi * CgK * nb * L), a.c = base_at(ot, gi * g.Og * nb * L);
      a.m = g.Og, a.n = cur * L, a.k = CgK, a.lda = CgK, a.ldb = nb * L, a.ldc = nb * L;
      gemm_kernel[dev](a);
    }
    // out[b0 : b0+cur] (cur, O, L) = ot (O, cur, L) permuted, plus the bias
    Tensor src = ot.narrow(1, 0, cur).permute({1, 0, 2}), dst = out.narrow(0, b0, cur).view({cur, g.O, L});
    if (bias.defined()) binary_kernel[dev](BinaryOp::Add, src, bias.view({1, g.O, 1}), dst, OpScalars{1.0, 0.0});  // alpha 1
    else copy_kernel[dev](src, dst);
  }
}

// go: (B, O, Ho, Wo) contiguous -> gx: (B, C, H, W) and/or gw: (O, Cg, kh, kw) where defined.
void conv2d_backward_device(const ConvGeom& g, const Tensor& go, const Tensor& x, const Tensor& w, const Tensor& gx,
                            const Tensor& gw) {
  Device dev = x.device();
  int64_t L = g.L(), CgK = g.Cg * g.K, nb = chunk_items(g, dev), BL = g.B * L;
  Tensor got = go.view({g.B, g.O, L}).permute({1, 0, 2}).contiguous();  // (O, B, L): a chunk is a column block
  Tensor colp = Tensor::empty({g.C * g.K, nb, L}, x.dtype(), dev);
  for (int64_t b0 = 0; b0 < g.B; b0 += nb) {
    int64_t cur = std::min(nb, g.B - b0);
    if (gw.defined()) {
      im2col_kernel[dev](x.narrow(0, b0, cur), items_of(colp, cur), g.p, g.Ho, g.Wo);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        // gw[group] (Og, CgK) (+)= got[group, chunk] (Og, cur*L) @ colp[group]^T (cur*L, CgK)
        GemmArgs a = conv_gemm();
        a.a = base_at(got, gi * g.Og * BL + b0 * L), a.b = base_at(colp, gi * CgK * nb * L);
        a.c = base_at(gw, gi * g.Og * CgK);
        a.trans_b = true;
        a.m = g.Og, a.n = CgK, a.k = cur * L, a.lda = BL, a.ldb = nb * L, a.ldc = CgK, a.beta = b0 > 0 ? 1.0 : 0.0;
        gemm_kernel[dev](a);
      }
    }
    if (gx.defined()) {
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        // colp[group] (CgK, cur*L) = w[group]^T (CgK, Og) @ got[group, chunk] (Og, cur*L)
        GemmArgs a = conv_gemm();
        a.a = base_at(w, gi * g.Og * CgK), a.b = base_at(got, gi * g.Og * BL + b0 * L);
        a.c = base_at(colp, gi * CgK * nb * L);
        a.trans_a = true;
        a.m = CgK, a.n = cur * L, a.k = g.Og, a.lda = CgK, a.ldb = BL, a.ldc = nb * L;
        gemm_kernel[dev](a);
      }
      col2im_kernel[dev](items_of(colp, cur), gx.narrow(0, b0, cur), g.p, g.Ho, g.Wo);
    }
  }
}

}  // namespace

Tensor conv2d(const Tensor& x_in, const Tensor& w_in, const Tensor& bias, Pair stride, Pair padding, Pair dilation,
              int64_t groups) {
  ConvGeom g = check_conv("conv2d", x_in, w_in, stride, padding, dilation, groups);
  DType cd = compute_dtype(x_in.dtype());
  Device dev = x_in.device();
  double beta = 0.0;
  if (bias.defined()) {
    check_same_device("conv2d", x_in, bias);
    TT_CHECK(bias.dim() == 1 && bias.size(0) == g.O, "conv2d: bias must be (out_channels,) = (", g.O, "), got ",
             bias.describe());
    TT_CHECK(bias.dtype() == x_in.dtype(), "conv2d: bias dtype ", dtype_name(bias.dtype()),
             " does not match input dtype ", dtype_name(x_in.dtype()));
    beta = 1.0;  // each chunk of out starts as the broadcast bias; the GEMMs accumulate onto it
  }
  int64_t L = g.L(), CgK = g.Cg * g.K;
  if (g.B > 0 && g.O > 0 && L > 0 && CgK > 0 && conv2d_direct_kernel.has(dev.type)) {
    // A backend's own convolution (cuDNN), in the input dtype, the bias added by it (fused where it can).
    Tensor out = Tensor::empty({g.B, g.O, g.Ho, g.Wo}, x_in.dtype(), dev);
    bool handled = false;
    conv2d_direct_kernel[dev]((g.unbatched ? x_in.unsqueeze(0) : x_in).contiguous(), w_in.contiguous(),
                              bias.defined() ? bias.contiguous() : bias, g.p, groups, out, handled);
    if (handled) return g.unbatched ? out.squeeze({0}) : out;
  }
  // x: (B, C, H, W), w: (O, Cg, kh, kw) -> out: (B, O, Ho, Wo)
  Tensor x = (g.unbatched ? x_in.unsqueeze(0) : x_in).to(cd).contiguous();
  Tensor w = w_in.to(cd).contiguous();
  Tensor out = Tensor::empty({g.B, g.O, g.Ho, g.Wo}, cd, dev);
  if (out.numel() > 0 && CgK == 0) {  // empty sums: out is the bias (or zero)
    if (bias.defined()) out.copy_(bias.view({1, g.O, 1, 1}));
    else fill_kernel[dev](out, 0.0);
  }
  if (out.numel() > 0 && CgK > 0 && winograd_applies(dev, cd, g.p, groups, g.C, g.O, g.Ho, g.Wo)) {
    conv2d_winograd_forward(x, w, g.p.ph, g.p.pw, out);
    if (bias.defined()) binary_kernel[dev](BinaryOp::Add, out, bias.to(cd).view({1, g.O, 1, 1}), out, OpScalars{1.0, 0.0});
  } else if (out.numel() > 0 && CgK > 0 && batch_inner(g, dev)) {
    conv2d_forward_device(g, x, w, bias.defined() ? bias.to(cd) : bias, out);
  } else if (out.numel() > 0 && CgK > 0) {
    int64_t nb = chunk_items(g, dev);
    parallel_for(0, g.B, 1, [&](int64_t i0, int64_t i1) {
      Tensor col = g.pointwise ? Tensor() : Tensor::empty({std::min(nb, i1 - i0), g.C * g.K, L}, cd, dev);
      for (int64_t b0 = i0; b0 < i1; b0 += nb) {
        int64_t cur = std::min(nb, i1 - b0);
        Tensor cb = g.pointwise ? x.narrow(0, b0, cur) : col.narrow(0, 0, cur);
        if (!g.pointwise) im2col_kernel[dev](x.narrow(0, b0, cur), cb, g.p, g.Ho, g.Wo);
        Tensor ob = out.narrow(0, b0, cur);
        if (beta != 0) ob.copy_(bias.view({1, g.O, 1, 1}));  // here, so it is in cache for the GEMM
        for (int64_t gi = 0; gi < groups; ++gi) {
          // out[b, group] (Og, L) = w[group] (Og, CgK) @ col[b, group] (CgK, L), batched over b.
          GemmArgs a;
          a.a = base_at(w, gi * g.Og * CgK), a.b = base_at(cb, gi * CgK * L), a.c = base_at(ob, gi * g.Og * L);
          a.m = g.Og, a.n = L, a.k = CgK, a.lda = CgK, a.ldb = L, a.ldc = L;
          a.batch = cur, a.stride_a = 0, a.stride_b = g.C * g.K * L, a.stride_c = g.O * L, a.beta = beta;
          if (g.Og > 0) gemm_kernel[dev](a);
        }
      }
    });
  }
  Tensor r = out.to(x_in.dtype());
  return g.unbatched ? r.squeeze({0}) : r;
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& grad_out, const Tensor& x_in, const Tensor& w_in,
                                                   Pair stride, Pair padding, Pair dilation, int64_t groups,
                                                   std::array<bool, 3> needs) {
  ConvGeom g = check_conv("conv2d_backward", x_in, w_in, stride, padding, dilation, groups);
  TT_CHECK(grad_out.defined(), "conv2d_backward: undefined grad_output");
  check_same_device("conv2d_backward", x_in, grad_out);
  Shape gshape = g.unbatched ? Shape{g.O, g.Ho, g.Wo} : Shape{g.B, g.O, g.Ho, g.Wo};
  TT_CHECK(grad_out.shape() == gshape, "conv2d_backward: grad_output ", grad_out.describe(), " should have shape ",
           shape_str(gshape));
  DType dt = x_in.dtype(), cd = compute_dtype(dt);
  Device dev = x_in.device();
  int64_t L = g.L(), CgK = g.Cg * g.K, CK = g.C * g.K;
  if (g.B > 0 && L > 0 && CgK > 0 && g.Og > 0 && (needs[0] || needs[1]) &&
      conv2d_direct_backward_kernel.has(dev.type)) {
    // A backend's own convolution (cuDNN), in the input dtype; the bias gradient as below.
    Tensor god = (g.unbatched ? grad_out.unsqueeze(0) : grad_out).contiguous();
    Tensor gxd = needs[0] ? Tensor::empty({g.B, g.C, g.H, g.W}, dt, dev) : Tensor();
    Tensor gwd = needs[1] ? Tensor::empty(w_in.shape(), dt, dev) : Tensor();
    bool handled = false;
    conv2d_direct_backward_kernel[dev](god, (g.unbatched ? x_in.unsqueeze(0) : x_in).contiguous(), w_in.contiguous(),
                                       g.p, groups, gxd, gwd, handled);
    if (handled) {
      Tensor gbd;
      if (needs[2]) {
        gbd = Tensor::empty({g.O}, dt, dev);
        channel_sum_kernel[dev](god.view({g.B, g.O, L}), gbd, false);
      }
      if (gxd.defined() && g.unbatched) gxd = gxd.squeeze({0});
      return {gxd, gwd, gbd};
    }
  }
  Tensor go = (g.unbatched ? grad_out.unsqueeze(0) : grad_out).to(cd).contiguous();  // (B, O, Ho, Wo)
  Tensor x = (g.unbatched ? x_in.unsqueeze(0) : x_in).to(cd).contiguous();
  Tensor w = w_in.to(cd).contiguous();
  Tensor gx, gw, gb;
  if (needs[2]) {
    gb = Tensor::empty({g.O}, cd, dev);
    channel_sum_kernel[dev](go.view({g.B, g.O, L}), gb, false);
  }
  bool work = g.B > 0 && L > 0 && CgK > 0 && g.Og > 0;
  int64_t nb = chunk_items(g, dev);
  if (needs[1]) {
    gw = Tensor::empty(w.shape(), cd, dev);
    if (!work) fill_kernel[dev](gw, 0.0);
  }
  bool inner = batch_inner(g, dev);
  bool wino_w = needs[1] && work && winograd_applies(dev, cd, g.p, groups, g.C, g.O, g.Ho, g.Wo);
  if (wino_w) conv2d_winograd_grad_weight(x, go, g.p.ph, g.p.pw, gw);
  if (needs[1] && !wino_w && work && !inner) {
    // part[grp] = sum over the items b of group grp, in order, of (per conv group)
    //   colA: col[b] (CgK, L) @ go[b]^T (L, Og) -> (CgK, Og)   (the gemm packs go's Og x L)
    //   else: go[b] (Og, L) @ col[b]^T (L, CgK) -> (Og, CgK)   (the gemm packs col's CgK x L)
    // The gemm transposes the smaller operand (conv1: CgK = 9 < Og = 32).
    bool colA = CgK >= g.Og;
    int64_t G = (g.B + kWeightGroup - 1) / kWeightGroup, nbw = std::min(nb, kWeightGroup);
    Tensor part = Tensor::empty({G, g.O * CgK, 1}, cd, dev);
    parallel_for(0, G, 1, [&](int64_t g0, int64_t g1) {
      Tensor col = g.pointwise ? Tensor() : Tensor::empty({nbw, CK, L}, cd, dev);
      for (int64_t grp = g0; grp < g1; ++grp) {
        int64_t e = std::min(g.B, (grp + 1) * kWeightGroup);
        for (int64_t b0 = grp * kWeightGroup; b0 < e; b0 += nbw) {
          int64_t cur = std::min(nbw, e - b0);
          Tensor cb = g.pointwise ? x.narrow(0, b0, cur) : col.narrow(0, 0, cur);
          if (!g.pointwise) im2col_kernel[dev](x.narrow(0, b0, cur), cb, g.p, g.Ho, g.Wo);
          for (int64_t i = 0; i < cur; ++i)
            for (int64_t gi = 0; gi < groups; ++gi) {
              Tensor c = base_at(cb, i * CK * L + gi * CgK * L), o = base_at(go, (b0 + i) * g.O * L + gi * g.Og * L);
              GemmArgs a;
              a.a = colA ? c : o, a.b = colA ? o : c, a.c = base_at(part, grp * g.O * CgK + gi * CgK * g.Og);
              a.trans_b = true;
              a.m = colA ? CgK : g.Og, a.n = colA ? g.Og : CgK, a.k = L, a.lda = L, a.ldb = L, a.ldc = a.n;
              a.beta = b0 + i == grp * kWeightGroup ? 0.0 : 1.0;
              gemm_kernel[dev](a);
            }
        }
      }
    });
    // gw[group] (Og, CgK) = (sum over groups of part)[group], transposed back when colA
    Tensor sum = Tensor::empty({groups, colA ? CgK : g.Og, colA ? g.Og : CgK}, cd, dev);
    channel_sum_kernel[dev](part, sum.view({g.O * CgK}), false);
    gw.view({groups, g.Og, CgK}).copy_(colA ? sum.transpose(1, 2) : sum);
  }
  if (needs[0]) {
    gx = Tensor::empty({g.B, g.C, g.H, g.W}, cd, dev);
    if (!work) fill_kernel[dev](gx, 0.0);
  }
  Conv2dParams pt = g.p;  // the input gradient as a convolution of go: padding 2 - p
  pt.ph = 2 - g.p.ph, pt.pw = 2 - g.p.pw;
  bool wino = needs[0] && work && g.p.ph <= 2 && g.p.pw <= 2 && winograd_applies(dev, cd, pt, groups, g.O, g.C, g.H, g.W);
  if (wino) conv2d_winograd_grad_input(go, w, g.p.ph, g.p.pw, gx);
  if (work && inner && ((needs[0] && !wino) || (needs[1] && !wino_w))) {
    conv2d_backward_device(g, go, x, w, needs[0] && !wino ? gx : Tensor(), needs[1] && !wino_w ? gw : Tensor());
  } else if (needs[0] && !wino && work && !inner) {
    parallel_for(0, g.B, 1, [&](int64_t i0, int64_t i1) {
      Tensor gcol = g.pointwise ? Tensor() : Tensor::empty({std::min(nb, i1 - i0), CK, L}, cd, dev);
      for (int64_t b0 = i0; b0 < i1; b0 += nb) {
        int64_t cur = std::min(nb, i1 - b0);
        Tensor cb = g.pointwise ? gx.narrow(0, b0, cur) : gcol.narrow(0, 0, cur);
        Tensor gob = go.narrow(0, b0, cur);
        for (int64_t gi = 0; gi < groups; ++gi) {
          // gcol[b, group] (CgK, L) = w[group]^T (CgK, Og) @ go[b, group] (Og, L)
          GemmArgs a;
          a.a = base_at(w, gi * g.Og * CgK), a.b = base_at(gob, gi * g.Og * L), a.c = base_at(cb, gi * CgK * L);
          a.trans_a = true;
          a.m = CgK, a.n = L, a.k = g.Og, a.lda = CgK, a.ldb = L, a.ldc = L;
          a.batch = cur, a.stride_a = 0, a.stride_b = g.O * L, a.stride_c = CK * L;
          gemm_kernel[dev](a);
        }
        if (!g.pointwise) col2im_kernel[dev](cb, gx.narrow(0, b0, cur), g.p, g.Ho, g.Wo);
      }
    });
  }
  if (gx.defined()) {
    gx = gx.to(dt);
    if (g.unbatched) gx = gx.squeeze({0});
  }
  if (gw.defined()) gw = gw.to(dt);
  if (gb.defined()) gb = gb.to(dt);
  return {gx, gw, gb};
}

}  // namespace tt
