// The fused decode step: checks once at construction, then per step either the device's fused
// projection kernels (CUDA) or the eager layer's ops in the eager layer's order (so the same
// kernels give the same numbers), around the attention kernel.
#include "tinytorch/ops/decode.h"
#include <algorithm>
#include <string>
#include <tuple>
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/linalg.h"
#include "tinytorch/ops/norm.h"
#include "tinytorch/ops/quant.h"
#include "tinytorch/ops/shape.h"

namespace tt {

TT_DEFINE_KERNEL(decode_attention)
TT_DEFINE_KERNEL(decode_project)

namespace {

constexpr const char* kOp = "DecodeStack";

void check_float32(const Tensor& t, const Device& device, const std::string& what) {
  TT_CHECK_VALUE(t.defined(), kOp, ": ", what, " is undefined");
  TT_CHECK_TYPE(t.dtype() == DType::Float32, kOp, ": ", what, " must be float32, got ", t.describe());
  TT_CHECK_VALUE(t.device() == device, kOp, ": ", what, " ", t.describe(), " is not on ", device.str());
}

// The parts of a projection from `in` features to `out` in all; `what` names it in errors.
void check_projection(const std::vector<DecodeLinear>& parts, int64_t in, int64_t out, const Device& device,
                      const std::string& what) {
  TT_CHECK_VALUE(!parts.empty(), kOp, ": ", what, " has no parts");
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const DecodeLinear& p = parts[i];
    const std::string name = what + (parts.size() > 1 ? " part " + std::to_string(i) : std::string());
    TT_CHECK_VALUE(p.weight.defined(), kOp, ": ", name, " weight is undefined");
    TT_CHECK_VALUE(p.in_features == in, kOp, ": ", name, " takes ", p.in_features, " features, expected ", in);
    TT_CHECK_VALUE(p.weight.device() == device, kOp, ": ", name, " weight ", p.weight.describe(), " is not on ",
                   device.str());
    if (p.qtype >= 0) {
      TT_CHECK_TYPE(p.weight.dtype() == DType::UInt8, kOp, ": ", name, " packed weight must be uint8, got ",
                    p.weight.describe());
      const int64_t row = quant_row_bytes(p.qtype, p.in_features);
      TT_CHECK_VALUE(p.weight.numel() == p.out_features * row, kOp, ": ", name, " packed weight ",
                     p.weight.describe(), " should hold out_features=", p.out_features, " rows of ", row, " bytes");
    } else {
      check_float32(p.weight, device, name + " weight");
      TT_CHECK_VALUE(p.weight.dim() == 2 && p.weight.size(0) == p.out_features && p.weight.size(1) == in, kOp,
                     ": ", name, " weight ", p.weight.describe(), " should be (", p.out_features, ", ", in, ")");
    }
    if (p.bias.defined()) {
      check_float32(p.bias, device, name + " bias");
      TT_CHECK_VALUE(p.bias.dim() == 1 && p.bias.size(0) == p.out_features, kOp, ": ", name, " bias ",
                     p.bias.describe(), " should be (", p.out_features, ")");
    }
    total += p.out_features;
  }
  TT_CHECK_VALUE(out < 0 || total == out, kOp, ": ", what, " gives ", total, " features, expected ", out);
}

int64_t total_out(const std::vector<DecodeLinear>& parts) {
  int64_t total = 0;
  for (const DecodeLinear& p : parts) total += p.out_features;
  return total;
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b, OpScalars{1.0, 0.0}); }  // alpha 1

// x: (B, K) -> (B, N), as the eager layer computes it (models/init_control.py's Linear: one row
// as weight @ x, the matrix-vector path, then + bias).
Tensor apply(const DecodeLinear& p, const Tensor& x) {
  if (p.qtype >= 0) return quant_linear(x, p.weight, p.qtype, p.out_features, p.in_features, p.bias);
  if (x.size(0) != 1) return linear(x, p.weight, p.bias);
  Tensor y = matmul(p.weight, x.view({p.in_features})).view({1, p.out_features});
  return p.bias.defined() ? add(y, p.bias) : y;
}

// x: (B, K) -> (B, sum of the parts' N)
Tensor project(const Tensor& x, const std::vector<DecodeLinear>& parts) {
  if (parts.size() == 1) return apply(parts[0], x);
  std::vector<Tensor> outs;
  for (const DecodeLinear& p : parts) outs.push_back(apply(p, x));
  return cat(outs, 1);
}

// Whether the fused projection kernels take `parts` for `rows` sequences of `in` features: all
// packed or all dense (dense: rows of float4s), and the staged inputs fit in shared memory.
bool fusable(const std::vector<DecodeLinear>& parts, int64_t rows, int64_t in) {
  if (parts.size() > static_cast<size_t>(kDecodeMaxParts)) return false;
  const bool packed = parts[0].qtype >= 0;
  for (const DecodeLinear& p : parts) {
    if ((p.qtype >= 0) != packed) return false;
    if (!packed && (in % 4 != 0 || reinterpret_cast<uintptr_t>(p.weight.data<float>()) % 16 != 0)) return false;
  }
  const int64_t staged = (rows > 1 ? kDecodeFusedRows : 1) * (packed ? in / 32 * 33 : in) * 4;
  return rows <= kDecodeFusedRows && staged <= 200 * 1024;
}

}  // namespace

DecodeStack::DecodeStack(std::vector<DecodeLayer> layers, DecodeAttention attention, double eps)
    : layers_(std::move(layers)), attention_(attention), eps_(eps) {
  const DecodeAttention& a = attention_;
  TT_CHECK_VALUE(!layers_.empty(), kOp, ": no layers");
  TT_CHECK_VALUE(a.heads > 0 && a.kv_heads > 0 && a.heads % a.kv_heads == 0, kOp, ": ", a.heads,
                 " query heads do not split into groups of ", a.kv_heads, " key/value heads");
  TT_CHECK_VALUE(a.head_dim > 0 && a.head_dim % 2 == 0, kOp, ": head_dim must be even, got ", a.head_dim);
  const Tensor& first = layers_[0].input_norm;
  TT_CHECK_VALUE(first.defined() && first.dim() == 1, kOp, ": layer 0 input_norm should be (hidden)");
  const Device device = first.device();
  hidden_ = first.size(0);
  batch_ = layers_[0].keys.defined() ? layers_[0].keys.size(0) : 0;
  max_length_ = layers_[0].keys.defined() && layers_[0].keys.dim() == 4 ? layers_[0].keys.size(2) : 0;
  const int64_t D = a.head_dim, q = a.heads * D, kv = a.kv_heads * D;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const DecodeLayer& l = layers_[i];
    const std::string at = "layer " + std::to_string(i) + " ";
    for (const Tensor* norm : {&l.input_norm, &l.post_attention_norm}) {
      check_float32(*norm, device, at + "norm weight");
      TT_CHECK_VALUE(norm->dim() == 1 && norm->size(0) == hidden_, kOp, ": ", at, "norm weight ", norm->describe(),
                     " should be (", hidden_, ")");
    }
    for (const Tensor* cache : {&l.keys, &l.values}) {
      check_float32(*cache, device, at + "cache");
      TT_CHECK_VALUE(cache->is_contiguous() && cache->dim() == 4 && cache->size(0) == batch_ &&
                         cache->size(1) == a.kv_heads && cache->size(2) == max_length_ && cache->size(3) == D,
                     kOp, ": ", at, "cache ", cache->describe(), " should be contiguous (", batch_, ", ", a.kv_heads,
                     ", ", max_length_, ", ", D, ")");
    }
    TT_CHECK_VALUE(l.window >= 0, kOp, ": ", at, "window must be >= 0, got ", l.window);
    check_projection(l.qkv, hidden_, q + 2 * kv, device, at + "qkv");
    check_projection(l.o, q, hidden_, device, at + "o_proj");
    check_projection(l.gate_up, hidden_, -1, device, at + "gate_up");
    const int64_t inter = total_out(l.gate_up);
    TT_CHECK_VALUE(inter % 2 == 0, kOp, ": ", at, "gate_up gives an odd number of features, ", inter);
    check_projection(l.down, inter / 2, hidden_, device, at + "down_proj");
  }
  fused_ = decode_project_kernel.has(device.type);
  for (const DecodeLayer& l : layers_)
    fused_ = fused_ && fusable(l.qkv, batch_, hidden_) && fusable(l.o, batch_, q) &&
             fusable(l.gate_up, batch_, hidden_) && fusable(l.down, batch_, total_out(l.gate_up) / 2);
}

Tensor DecodeStack::step(const Tensor& x, int64_t pos, const Tensor& cos, const Tensor& sin) const {
  TT_CHECK_VALUE(pos >= 0 && pos < max_length_, kOp, ".step: position ", pos, " is outside the cache's ",
                 max_length_, " positions");
  return run(x, pos, Tensor(), cos, sin);
}

Tensor DecodeStack::step_at(const Tensor& x, const Tensor& position, const Tensor& cos, const Tensor& sin) const {
  const Device device = layers_[0].input_norm.device();
  TT_CHECK_VALUE(position.defined() && position.numel() == 1 && position.is_contiguous(), kOp,
                 ".step_at: position should be one int64, got ", position.defined() ? position.describe() : "none");
  TT_CHECK_TYPE(position.dtype() == DType::Int64, kOp, ".step_at: position must be int64, got ", position.describe());
  TT_CHECK_VALUE(position.device() == device, kOp, ".step_at: position ", position.describe(), " is not on ",
                 device.str());
  if (device.is_cpu()) return step(x, position.data<int64_t>()[0], cos, sin);
  return run(x, 0, position, cos, sin);
}

Tensor DecodeStack::run(const Tensor& x, int64_t pos, const Tensor& position, const Tensor& cos,
                        const Tensor& sin) const {
  const Device device = layers_[0].input_norm.device();
  check_float32(x, device, "x");
  TT_CHECK_VALUE(x.dim() == 2 && x.size(0) == batch_ && x.size(1) == hidden_, kOp, ".step: x ", x.describe(),
                 " should be (batch=", batch_, ", hidden=", hidden_, ")");
  for (const Tensor* t : {&cos, &sin}) {
    check_float32(*t, device, "rotary angles");
    TT_CHECK_VALUE(t->numel() == attention_.head_dim, kOp, ".step: rotary angles ", t->describe(),
                   " should hold head_dim=", attention_.head_dim, " values");
  }
  const Tensor c = cos.contiguous().view({attention_.head_dim}), s = sin.contiguous().view({attention_.head_dim});
  const int64_t q_width = attention_.heads * attention_.head_dim, width = q_width + 2 * attention_.kv_heads *
                                                                                 attention_.head_dim;
  const Shape norm_shape{hidden_};
  Tensor h = x.contiguous();
  for (size_t i = 0; i < layers_.size(); ++i) {
    const DecodeLayer& l = layers_[i];
    Tensor attn = Tensor::empty({batch_, q_width}, DType::Float32, device);
    if (fused_) {
      const Tensor none, out = i == 0 ? Tensor::empty({batch_, hidden_}, DType::Float32, device) : h;
      Tensor qkv = Tensor::empty({batch_, width}, DType::Float32, device);
      decode_project_kernel[device](h, l.input_norm, eps_, l.qkv, DecodeEpilogue::Store, none, qkv);
      decode_attention_kernel[device](qkv, l.keys, l.values, c, s, attention_, pos, position, l.window, attn);
      decode_project_kernel[device](attn, none, 0.0, l.o, DecodeEpilogue::Add, h, out);
      h = out;  // the layers after the first update it in place
      Tensor act = Tensor::empty({batch_, total_out(l.gate_up) / 2}, DType::Float32, device);
      decode_project_kernel[device](h, l.post_attention_norm, eps_, l.gate_up, DecodeEpilogue::SwiGLU, none, act);
      decode_project_kernel[device](act, none, 0.0, l.down, DecodeEpilogue::Add, h, h);
      continue;
    }
    Tensor qkv = project(std::get<0>(rms_norm(h, norm_shape, l.input_norm, eps_)), l.qkv).contiguous();
    decode_attention_kernel[device](qkv, l.keys, l.values, c, s, attention_, pos, position, l.window, attn);
    h = add(h, project(attn, l.o));
    Tensor gate_up = project(std::get<0>(rms_norm(h, norm_shape, l.post_attention_norm, eps_)), l.gate_up);
    const int64_t inter = gate_up.size(1) / 2;
    Tensor act = binary(BinaryOp::Mul, unary(UnaryOp::Silu, gate_up.narrow(1, 0, inter)),
                        gate_up.narrow(1, inter, inter));
    h = add(h, project(act, l.down));
  }
  return h;
}

}  // namespace tt
