// Fused scaled-dot-product attention: argument checks, the additive float32 mask (bool masks
// become 0 / -inf), dropout counters reserved from the generator, allocation.
#include "tinytorch/ops/attention.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include "tinytorch/ops/elementwise.h"

namespace tt {

TT_DEFINE_KERNEL(attention_forward)
TT_DEFINE_KERNEL(attention_backward)
TT_DEFINE_KERNEL(attention_dropout_mask)

namespace {

constexpr int64_t kMaxHeadDim = 256;

// The kernels read (B, H, L, D) operands in place when D has unit stride (q, k, v transposed out
// of a (B, L, H, D) projection need no copy).
Tensor kernel_operand(const Tensor& t) { return t.shape()[3] <= 1 || t.stride(3) == 1 ? t : t.contiguous(); }

// A fresh (B, heads, L, D) tensor whose memory is laid out as `like`'s (dims ordered by stride, as
// PyTorch's empty_like): attention on q transposed out of a (B, L, H, D) projection returns an
// output (and takes gradients) whose transpose back is already contiguous.
Tensor empty_in_layout_of(const Tensor& like, const Shape& shape) {
  Shape order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  order.push_back(3);
  Shape physical(4), inverse(4);
  for (int64_t d = 0; d < 4; ++d) physical[d] = shape[order[d]], inverse[order[d]] = d;
  return Tensor::empty(physical, like.dtype(), like.device()).permute(inverse);
}

// The logsumexp is kept in the accumulation type: float32, float64 for float64 inputs.
DType lse_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

AttentionParams attention_params(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
                                 const char* op) {
  TT_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, op, ": expected 4-D query, key and value (B, H, L, E), got ",
           q.describe(), ", ", k.describe(), ", ", v.describe());
  TT_CHECK_TYPE(is_floating(q.dtype()) && q.dtype() == k.dtype() && q.dtype() == v.dtype(), op,
                ": expected query, key and value of one floating dtype, got ", q.describe(), ", ", k.describe(), ", ",
                v.describe());
  TT_CHECK(q.device() == k.device() && q.device() == v.device(), op,
           ": expected query, key and value on one device, got ", q.describe(), ", ", k.describe(), ", ",
           v.describe());
  AttentionParams p;
  p.B = q.size(0), p.H = q.size(1), p.Lq = q.size(2), p.E = q.size(3);
  p.Hkv = k.size(1), p.Lk = k.size(2), p.Ev = v.size(3);
  TT_CHECK(k.size(0) == p.B && v.size(0) == p.B && v.size(1) == p.Hkv && v.size(2) == p.Lk && k.size(3) == p.E, op,
           ": key ", shape_str(k.shape()), " and value ", shape_str(v.shape()), " do not match query ",
           shape_str(q.shape()));
  TT_CHECK(p.Hkv > 0 && p.H % p.Hkv == 0, op, ": the number of query heads (", p.H,
           ") must be a multiple of the key/value heads (", p.Hkv, ")");
  TT_CHECK(p.E <= kMaxHeadDim && p.Ev <= kMaxHeadDim, op, ": head dims up to ", kMaxHeadDim, " are supported, got ",
           p.E, " and ", p.Ev);
  TT_CHECK_VALUE(opt.dropout_p >= 0 && opt.dropout_p <= 1, op, ": dropout_p must be in [0, 1], got ", opt.dropout_p);
  p.scale = opt.scale ? *opt.scale : 1.0 / std::sqrt(double(p.E));
  p.causal = opt.is_causal;
  p.dropout_p = opt.dropout_p;
  return p;
}

// The mask as the accumulation type (float32; float64 for float64 q; bool: 0 where true, -inf
// where false) broadcast to (B, H, Lq, Lk); its strides go into p. Undefined stays undefined.
Tensor additive_mask(const Tensor& mask, const Tensor& q, AttentionParams& p, const char* op) {
  if (!mask.defined()) return mask;
  TT_CHECK(!p.causal, op, ": attn_mask and is_causal cannot both be set");
  TT_CHECK(mask.device() == q.device(), op, ": attn_mask ", mask.describe(), " must be on query's device ",
           q.describe());
  Shape target{p.B, p.H, p.Lq, p.Lk};
  TT_CHECK(mask.dim() <= 4 && broadcast_shapes(mask.shape(), target, op) == target, op, ": attn_mask ",
           shape_str(mask.shape()), " does not broadcast to (B, H, Lq, Lk) = ", shape_str(target));
  Tensor m;
  if (mask.dtype() == DType::Bool) {
    m = where(mask, full({}, 0.0, lse_dtype(q.dtype()), q.device()),
              full({}, -std::numeric_limits<double>::infinity(), lse_dtype(q.dtype()), q.device()));
  } else {
    TT_CHECK_TYPE(is_floating(mask.dtype()), op, ": attn_mask must be bool or floating, got ", mask.describe());
    m = mask.to(lse_dtype(q.dtype())).contiguous();
  }
  m = m.expand(target);
  for (int d = 0; d < 4; ++d) p.mask_stride[d] = m.stride(d);
  return m;
}

}  // namespace

std::tuple<Tensor, Tensor, uint64_t, uint64_t> scaled_dot_product_attention_forward(
    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const AttentionOptions& opt,
    Generator* gen) {
  const char* op = "scaled_dot_product_attention";
  AttentionParams p = attention_params(q, k, v, opt, op);
  Tensor m = additive_mask(mask, q, p, op);
  if (p.dropout_p > 0) {
    uint64_t n = uint64_t(p.B * p.H) * uint64_t(p.Lq) * uint64_t(p.Lk);
    p.philox = (gen ? *gen : default_generator(q.device())).reserve((n + 3) / 4);
  }
  Tensor out = empty_in_layout_of(q, {p.B, p.H, p.Lq, p.Ev});
  Tensor lse = Tensor::empty({p.B, p.H, p.Lq}, lse_dtype(q.dtype()), q.device());
  if (out.numel() > 0 && p.Lk > 0) {
    Tensor qo = kernel_operand(q), ko = kernel_operand(k), vo = kernel_operand(v);
    p.st.q = HeadStrides(qo), p.st.k = HeadStrides(ko), p.st.v = HeadStrides(vo), p.st.out = HeadStrides(out);
    attention_forward_kernel[q.device()](p, qo, ko, vo, m, out, lse);
  } else {  // no key: zeros, as a row whose keys are all masked
    if (out.numel() > 0) fill_(out, 0);
    if (lse.numel() > 0) fill_(lse, -std::numeric_limits<double>::infinity());
  }
  return {out, lse, p.philox.seed, p.philox.offset};
}

std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& out,
    const Tensor& lse, const AttentionOptions& opt, uint64_t seed, uint64_t offset) {
  const char* op = "scaled_dot_product_attention_backward";
  AttentionParams p = attention_params(q, k, v, opt, op);
  Tensor m = additive_mask(mask, q, p, op);
  p.philox = {seed, offset};
  Shape out_shape{p.B, p.H, p.Lq, p.Ev};
  TT_CHECK(grad_out.shape() == out_shape && out.shape() == out_shape, op, ": grad_out ", grad_out.describe(),
           " and out ", out.describe(), " must have shape ", shape_str(out_shape));
  TT_CHECK(lse.shape() == Shape({p.B, p.H, p.Lq}) && lse.dtype() == lse_dtype(q.dtype()), op, ": lse must be ",
           dtype_name(lse_dtype(q.dtype())), " (B, H, Lq), got ", lse.describe());
  TT_CHECK(grad_out.device() == q.device() && out.device() == q.device() && lse.device() == q.device(), op,
           ": grad_out, out and lse must be on query's device");
  Tensor gq = empty_in_layout_of(q, q.shape()), gk = empty_in_layout_of(k, k.shape());
  Tensor gv = empty_in_layout_of(v, v.shape());
  if (gq.numel() + gk.numel() + gv.numel() == 0) return {gq, gk, gv};
  if (p.Lq == 0 || p.Lk == 0) {  // no pair of positions takes part: every gradient is zero
    fill_(gq, 0), fill_(gk, 0), fill_(gv, 0);
    return {gq, gk, gv};
  }
  Tensor go = kernel_operand(grad_out.to(q.dtype())), qo = kernel_operand(q), ko = kernel_operand(k);
  Tensor vo = kernel_operand(v), oo = kernel_operand(out);
  p.st.q = HeadStrides(qo), p.st.k = HeadStrides(ko), p.st.v = HeadStrides(vo), p.st.out = HeadStrides(oo);
  p.st.gout = HeadStrides(go), p.st.gq = HeadStrides(gq), p.st.gk = HeadStrides(gk), p.st.gv = HeadStrides(gv);
  attention_backward_kernel[q.device()](p, go, qo, ko, vo, m, oo, lse.contiguous(), gq, gk, gv);
  return {gq, gk, gv};
}

Tensor attention_dropout_mask(const Shape& shape, double dropout_p, uint64_t seed, uint64_t offset, Device device) {
  TT_CHECK(shape.size() == 4, "attention_dropout_mask: expected a (B, H, Lq, Lk) shape, got ", shape_str(shape));
  AttentionParams p;
  p.B = shape[0], p.H = shape[1], p.Hkv = shape[1], p.Lq = shape[2], p.Lk = shape[3];
  p.dropout_p = dropout_p;
  p.philox = {seed, offset};
  Tensor keep = Tensor::empty(shape, DType::Bool, device);
  if (keep.numel() > 0) attention_dropout_mask_kernel[device](p, keep);
  return keep;
}

}  // namespace tt
