// Fused recurrent layers: argument checks, contiguous operands, allocation and the time loop,
// one for every backend; the step kernels (cpu/rnn.cpp, cuda/src/rnn.cu) hold the cell math.
#include "tinytorch/ops/rnn.h"
#include "tinytorch/ops/elementwise.h"

namespace tt {

TT_DEFINE_KERNEL(rnn_prepare)
TT_DEFINE_KERNEL(rnn_forward_step)
TT_DEFINE_KERNEL(rnn_backward_step)
TT_DEFINE_KERNEL(rnn_backward_params)

namespace {

RnnMode parse_mode(const std::string& mode, const char* op) {
  if (mode == "LSTM") return RnnMode::LSTM;
  if (mode == "GRU") return RnnMode::GRU;
  if (mode == "RNN_TANH") return RnnMode::Tanh;
  if (mode == "RNN_RELU") return RnnMode::Relu;
  TT_CHECK_VALUE(false, op, ": mode must be LSTM, GRU, RNN_TANH or RNN_RELU, got ", mode);
  return RnnMode::Tanh;
}

// Checks shapes, dtypes and devices against x (T, B, I) and w_hh (G, H); returns H.
int64_t check_layer(RnnMode m, const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                    const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, const char* op) {
  TT_CHECK(x.dim() == 3 && w_ih.dim() == 2 && w_hh.dim() == 2, op, ": expected input (T, B, I), weight_ih (G, I), ",
           "weight_hh (G, H), got ", x.describe(), ", ", w_ih.describe(), ", ", w_hh.describe());
  if (x.device().is_cuda())
    TT_CHECK_TYPE(is_floating(x.dtype()), op, ": the fused CUDA kernels take float16, bfloat16, float32 or float64, got ",
                  x.describe());
  else
    TT_CHECK_TYPE(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, op,
                  ": the fused CPU kernels take float32 or float64, got ", x.describe());
  const int64_t H = w_hh.size(1), G = rnn_gates(m) * H, B = x.size(1);
  TT_CHECK(w_hh.size(0) == G && w_ih.size(0) == G && w_ih.size(1) == x.size(2), op, ": weight_ih ",
           w_ih.describe(), " and weight_hh ", w_hh.describe(), " do not fit input ", x.describe(), " with ",
           rnn_gates(m), " gates");
  TT_CHECK(b_ih.defined() == b_hh.defined(), op, ": bias_ih and bias_hh must both be given or both be None");
  std::vector<std::pair<const Tensor*, Shape>> rest{{&w_ih, w_ih.shape()}, {&w_hh, w_hh.shape()},
                                                    {&h0, {B, H}}};
  if (b_ih.defined()) rest.push_back({&b_ih, {G}}), rest.push_back({&b_hh, {G}});
  if (m == RnnMode::LSTM) rest.push_back({&c0, {B, H}});
  for (auto& [t, shape] : rest) {
    TT_CHECK(t->defined(), op, ": missing an initial state");
    TT_CHECK(t->shape() == shape, op, ": expected shape ", shape_str(shape), ", got ", t->describe());
    TT_CHECK_TYPE(t->dtype() == x.dtype(), op, ": expected every operand as input's dtype ", x.describe(), ", got ",
                  t->describe());
    TT_CHECK(t->device() == x.device(), op, ": expected every operand on input's device ", x.describe(), ", got ",
             t->describe());
  }
  return H;
}

Tensor contiguous_or_undefined(const Tensor& t) { return t.defined() ? t.contiguous() : t; }

Tensor zeros_like_shape(const Shape& s, const Tensor& like) { return full(s, 0.0, like.dtype(), like.device()); }

// The step walked s-th: t = s, or T-1-s when reversed.
int64_t step_time(int64_t s, int64_t T, bool reverse) { return reverse ? T - 1 - s : s; }

// The cell state step `prev` left (B, H): c0 before the first step (prev < 0), else saved[prev]'s
// c, rows S apart (LSTM; undefined otherwise).
Tensor cell_state(RnnMode m, const Tensor& c0, const Tensor& saved, int64_t prev, int64_t H) {
  if (m != RnnMode::LSTM) return Tensor();
  return prev < 0 ? c0 : saved.select(0, prev).narrow(1, 4 * H, H);
}

// x: (T, B, I) -> out: (T, B, H), saved: (T, B, S), h_n, c_n: (B, H); T, B, H > 0.
void forward_layer(const RnnForwardArgs& a) {
  const Device dev = a.x.device();
  const int64_t T = a.x.size(0), B = a.x.size(1), I = a.x.size(2), H = a.w_hh.size(1), G = a.w_hh.size(0);
  // xg: (T, B, G) = x (T*B, I) @ w_ih^T, the input projection of the whole sequence
  Tensor xg = Tensor::empty({T, B, G}, a.x.dtype(), dev);
  rnn_gemm(a.x, false, I, a.w_ih, true, I, xg, G, T * B, G, I, 0.0);
  RnnStepWeights w;
  rnn_prepare_kernel[dev](a.mode, false, a.w_hh, a.b_ih, a.b_hh, B, w);
  int64_t prev = -1;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = step_time(s, T, a.reverse);
    const Tensor h_prev = prev < 0 ? a.h0 : a.out.select(0, prev);
    RnnForwardStep st{xg.select(0, t), h_prev, cell_state(a.mode, a.c0, a.saved, prev, H), a.out.select(0, t),
                      a.saved.select(0, t)};
    rnn_forward_step_kernel[dev](a, w, st);
    prev = t;
  }
  Tensor h_n = a.h_n, c_n = a.c_n;  // handles onto the outputs
  h_n.copy_(a.out.select(0, prev));
  if (a.mode == RnnMode::LSTM) c_n.copy_(cell_state(a.mode, a.c0, a.saved, prev, H));
}

// Backpropagation through time: grad_out: (T, B, H) -> gx: (T, B, I), gh0, gc0: (B, H) and the
// parameter gradients; T, B, H > 0.
void backward_layer(const RnnBackwardArgs& a) {
  const Device dev = a.x.device();
  const int64_t T = a.x.size(0), B = a.x.size(1), I = a.x.size(2), H = a.w_hh.size(1), G = a.w_hh.size(0);
  // dhg: (T, B, G) gradients of the recurrent pre-activations; dxg those of the input ones
  // (the same tensor except for GRU, whose n gate sees r * (W_hn h + b_hn)).
  Tensor dhg = Tensor::empty({T, B, G}, a.x.dtype(), dev);
  Tensor dxg = a.mode == RnnMode::GRU ? Tensor::empty({T, B, G}, a.x.dtype(), dev) : dhg;
  RnnStepWeights w;
  rnn_prepare_kernel[dev](a.mode, true, a.w_hh, Tensor(), Tensor(), B, w);
  // gh0, gc0 carry the state gradients (B, H) from step to step and end as the initial state's
  Tensor dh = a.gh0, dc = a.gc0;
  dh.copy_(a.grad_h_n);
  if (a.mode == RnnMode::LSTM) dc.copy_(a.grad_c_n);
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = step_time(s, T, a.reverse), prev = s == 0 ? -1 : step_time(s - 1, T, a.reverse);
    const Tensor h_prev = prev < 0 ? a.h0 : a.out.select(0, prev);
    RnnBackwardStep st{a.saved.select(0, t), a.out.select(0, t), h_prev, cell_state(a.mode, a.c0, a.saved, prev, H),
                       a.grad_out.select(0, t), dh, dc, dhg.select(0, t), dxg.select(0, t)};
    rnn_backward_step_kernel[dev](a, w, st);
  }
  rnn_backward_params_kernel[dev](a, dhg, dxg);  // gw_hh, gb_ih, gb_hh
  // gw_ih (G, I) = dxg^T (G, T*B) @ x (T*B, I); gx (T*B, I) = dxg (T*B, G) @ w_ih (G, I)
  const int64_t N = T * B;
  rnn_gemm(dxg, true, G, a.x, false, I, a.gw_ih, I, G, I, N, 0.0);
  rnn_gemm(dxg, false, G, a.w_ih, false, I, a.gx, I, N, I, G, 0.0);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> rnn_layer_forward(const std::string& mode, const Tensor& x,
                                                             const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                                                             const Tensor& w_hh, const Tensor& b_ih,
                                                             const Tensor& b_hh, bool reverse) {
  const char* op = "rnn_layer_forward";
  RnnMode m = parse_mode(mode, op);
  const int64_t H = check_layer(m, x, h0, c0, w_ih, w_hh, b_ih, b_hh, op);
  const int64_t T = x.size(0), B = x.size(1);
  RnnForwardArgs a{m, reverse, x.contiguous(), h0.contiguous(), contiguous_or_undefined(c0), w_ih.contiguous(),
                   w_hh.contiguous(), contiguous_or_undefined(b_ih), contiguous_or_undefined(b_hh)};
  a.out = Tensor::empty({T, B, H}, x.dtype(), x.device());
  a.saved = Tensor::empty({T, B, rnn_saved(m) * H}, x.dtype(), x.device());
  a.h_n = Tensor::empty({B, H}, x.dtype(), x.device());
  if (m == RnnMode::LSTM) a.c_n = Tensor::empty({B, H}, x.dtype(), x.device());
  if (T == 0 || B * H == 0) {  // nothing to walk: the final state is the initial one
    if (B * H > 0) a.h_n.copy_(a.h0);
    if (m == RnnMode::LSTM && B * H > 0) a.c_n.copy_(a.c0);
    return {a.out, a.h_n, a.c_n, a.saved};
  }
  forward_layer(a);
  return {a.out, a.h_n, a.c_n, a.saved};
}

std::vector<Tensor> rnn_layer_backward(const std::string& mode, const Tensor& grad_out, const Tensor& grad_h_n,
                                       const Tensor& grad_c_n, const Tensor& x, const Tensor& h0, const Tensor& c0,
                                       const Tensor& w_ih, const Tensor& w_hh, bool has_bias, const Tensor& out,
                                       const Tensor& saved, bool reverse) {
  const char* op = "rnn_layer_backward";
  RnnMode m = parse_mode(mode, op);
  const int64_t H = check_layer(m, x, h0, c0, w_ih, w_hh, Tensor(), Tensor(), op);
  const int64_t T = x.size(0), B = x.size(1), G = w_hh.size(0);
  const Shape out_shape{T, B, H}, state{B, H};
  TT_CHECK(out.shape() == out_shape && saved.shape() == Shape({T, B, rnn_saved(m) * H}), op, ": out ",
           out.describe(), " and saved ", saved.describe(), " do not match the forward");
  auto grad_or_zeros = [&](const Tensor& g, const Shape& s, const char* what) {
    if (!g.defined()) return zeros_like_shape(s, x);
    TT_CHECK(g.shape() == s, op, ": ", what, " must have shape ", shape_str(s), ", got ", g.describe());
    return g.to(x.dtype()).contiguous();
  };
  RnnBackwardArgs a{m, reverse, grad_or_zeros(grad_out, out_shape, "grad_out"),
                    grad_or_zeros(grad_h_n, state, "grad_h_n"),
                    m == RnnMode::LSTM ? grad_or_zeros(grad_c_n, state, "grad_c_n") : Tensor(),
                    x.contiguous(), h0.contiguous(), contiguous_or_undefined(c0), w_ih.contiguous(),
                    w_hh.contiguous(), out.contiguous(), saved.contiguous()};
  a.gx = zeros_like_shape(x.shape(), x);
  a.gh0 = zeros_like_shape(state, x);
  if (m == RnnMode::LSTM) a.gc0 = zeros_like_shape(state, x);
  a.gw_ih = zeros_like_shape(w_ih.shape(), x);
  a.gw_hh = zeros_like_shape(w_hh.shape(), x);
  if (has_bias) a.gb_ih = zeros_like_shape({G}, x), a.gb_hh = zeros_like_shape({G}, x);
  if (T == 0 || B * H == 0) {  // the initial state is the final one
    if (B * H > 0) a.gh0.copy_(a.grad_h_n);
    if (m == RnnMode::LSTM && B * H > 0) a.gc0.copy_(a.grad_c_n);
  } else {
    backward_layer(a);
  }
  return {a.gx, a.gh0, a.gc0, a.gw_ih, a.gw_hh, a.gb_ih, a.gb_hh};
}

}  // namespace tt
