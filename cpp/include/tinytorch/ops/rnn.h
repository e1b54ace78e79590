#pragma once
// Fused RNN / LSTM / GRU layers (one layer, one direction) and their backpropagation through
// time. nn.LSTM/GRU/RNN stack layers and directions in Python (tinytorch/_ops/rnn.pyx).
#include <tuple>
#include <vector>
#include "tinytorch/kernels/rnn.h"

namespace tt {

// mode: "LSTM", "GRU", "RNN_TANH" or "RNN_RELU". x: (T, B, I); h0, c0: (B, H) (c0 LSTM only,
// undefined otherwise); w_ih: (G, I); w_hh: (G, H); biases (G,) or undefined.
// Returns (out (T, B, H), h_n (B, H), c_n (B, H) or undefined, saved (T, B, S)).
std::tuple<Tensor, Tensor, Tensor, Tensor> rnn_layer_forward(const std::string& mode, const Tensor& x,
                                                             const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                                                             const Tensor& w_hh, const Tensor& b_ih,
                                                             const Tensor& b_hh, bool reverse);
// Gradients may be undefined (no gradient flowed). Returns gx, gh0, gc0 (LSTM only), gw_ih,
// gw_hh, gb_ih, gb_hh (undefined without bias).
std::vector<Tensor> rnn_layer_backward(const std::string& mode, const Tensor& grad_out, const Tensor& grad_h_n,
                                       const Tensor& grad_c_n, const Tensor& x, const Tensor& h0, const Tensor& c0,
                                       const Tensor& w_ih, const Tensor& w_hh, bool has_bias, const Tensor& out,
                                       const Tensor& saved, bool reverse);

}  // namespace tt
