#pragma once
// Fused recurrent layers (one layer, one direction). The time loop is ops/rnn.cpp's, one for
// every backend: the input projection of the whole sequence as one GEMM, then per step one step
// kernel (the recurrent GEMM and the pointwise gate pass); the backward walks the steps in
// reverse, one step kernel each (the gate gradients and the GEMM that carries dh to the previous
// step), then the weight, bias and input gradients over the whole sequence. The cell math and the
// layout of the recurrent weights are the backend's (cpu/rnn.cpp, cuda/src/rnn.cu).
#include <cstdint>
#include "tinytorch/dispatch.h"
#include "tinytorch/kernels/linalg.h"
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

// c (m, n) = op(a) (m, k) @ op(b) (k, n) + beta * c on c's device; a, b, c are views whose data_ptr
// is the start, rows lda/ldb/ldc apart.
inline void rnn_gemm(const Tensor& a, bool ta, int64_t lda, const Tensor& b, bool tb, int64_t ldb, const Tensor& c,
                     int64_t ldc, int64_t m, int64_t n, int64_t k, double beta) {
  if (m == 0 || n == 0) return;
  GemmArgs g;
  g.a = a, g.b = b, g.c = c, g.trans_a = ta, g.trans_b = tb;
  g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc, g.beta = beta;
  gemm_kernel[c.device()](g);
}

// What a backend derives from a layer once, before the time loop, for its step kernels: its
// layout of W_hh, its form of the biases and a per-step scratch (any may stay undefined).
struct RnnStepWeights {
  Tensor w_hh, bias, work;
};

// One forward step t; prev is the step walked before it (h0, c0 at the first).
struct RnnForwardStep {
  Tensor xg;      // (B, G) x[t] W_ih^T (the backend may add h_prev W_hh^T in place)
  Tensor h_prev;  // (B, H) h0 or out[prev]
  Tensor c_prev;  // (B, H) rows c_prev.stride(0) apart: c0 or saved[prev]'s c (LSTM)
  Tensor out;     // (B, H) out[t], written
  Tensor saved;   // (B, S) saved[t], written
};

// One backward step t, walked from the last step to the first.
struct RnnBackwardStep {
  Tensor saved;     // (B, S) saved[t]
  Tensor out;       // (B, H) out[t]
  Tensor h_prev;    // (B, H) the state step t read
  Tensor c_prev;    // (B, H) rows c_prev.stride(0) apart (LSTM)
  Tensor grad_out;  // (B, H) grad_out[t]
  Tensor dh;        // (B, H) in: the state gradient from step t+1; out: the one into h_prev
  Tensor dc;        // (B, H) the cell-state gradient, likewise (LSTM)
  Tensor dhg;       // (B, G) written: gradient of the recurrent pre-activations
  Tensor dxg;       // (B, G) written: of the input ones (GRU; else the same tensor as dhg)
};

// w_hh: (G, H), b_ih/b_hh: (G,) or undefined; batch B; backward picks the backward's layout.
TT_DECLARE_KERNEL(rnn_prepare, RnnMode mode, bool backward, const Tensor& w_hh, const Tensor& b_ih,
                  const Tensor& b_hh, int64_t batch, RnnStepWeights& w)
TT_DECLARE_KERNEL(rnn_forward_step, const RnnForwardArgs& a, const RnnStepWeights& w, const RnnForwardStep& s)
TT_DECLARE_KERNEL(rnn_backward_step, const RnnBackwardArgs& a, const RnnStepWeights& w, const RnnBackwardStep& s)
// After the walk, from dhg, dxg: (T, B, G): gw_hh = sum_t dhg[t]^T h_prev[t] and the bias
// gradients (their column sums).
TT_DECLARE_KERNEL(rnn_backward_params, const RnnBackwardArgs& a, const Tensor& dhg, const Tensor& dxg)

}  // namespace tt
