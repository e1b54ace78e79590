#pragma once
// Fused recurrent layers (one layer, one direction): the input projection of the whole sequence
// as one GEMM, then per step the recurrent GEMM and one pointwise gate kernel; the backward runs
// backpropagation through time with the same structure. ops/rnn.h checks and allocates.
#include <cstdint>
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

enum class RnnMode : int { Tanh = 0, Relu = 1, LSTM = 2, GRU = 3 };

// Gate rows per hidden unit (G = gates * H) and saved activations per step (S = saved * H).
inline int64_t rnn_gates(RnnMode m) { return m == RnnMode::LSTM ? 4 : m == RnnMode::GRU ? 3 : 1; }
// LSTM: i, f, g, o, c; GRU: r, z, n, W_hn h + b_hn; RNN: none (the output is the activation).
inline int64_t rnn_saved(RnnMode m) { return m == RnnMode::LSTM ? 5 : m == RnnMode::GRU ? 4 : 0; }

// All tensors contiguous, one float dtype. x: (T, B, I), w_ih: (G, I), w_hh: (G, H), b_ih/b_hh:
// (G,) or undefined, h0/c0: (B, H) (c0 LSTM only). Outputs: out (T, B, H) in time order, saved
// (T, B, S), h_n/c_n (B, H). reverse walks t = T-1 ... 0.
struct RnnForwardArgs {
  RnnMode mode;
  bool reverse;
  Tensor x, h0, c0, w_ih, w_hh, b_ih, b_hh;
  Tensor out, saved, h_n, c_n;
};

// grad_out: (T, B, H), grad_h_n/grad_c_n: (B, H) (zeros where no gradient flowed). Outputs
// gx (T, B, I), gh0, gc0 (B, H), gw_ih (G, I), gw_hh (G, H), gb_ih, gb_hh (G,) (undefined
// without bias).
struct RnnBackwardArgs {
  RnnMode mode;
  bool reverse;
  Tensor grad_out, grad_h_n, grad_c_n;
  Tensor x, h0, c0, w_ih, w_hh, out, saved;
  Tensor gx, gh0, gc0, gw_ih, gw_hh, gb_ih, gb_hh;
};

TT_DECLARE_KERNEL(rnn_forward, const RnnForwardArgs& a)
TT_DECLARE_KERNEL(rnn_backward, const RnnBackwardArgs& a)

}  // namespace tt
