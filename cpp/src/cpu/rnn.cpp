// CPU step kernels of the fused recurrent layers (the time loop is ops/rnn.cpp's). Forward step:
// hg = h W_hh^T (one GEMM) and one pointwise pass that forms the gates, the new state and what the
// backward needs. Backward step: one pointwise pass gives the gate gradients, one GEMM carries dh
// to the previous step; after the walk, gw_hh and the bias gradients over the whole sequence.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")  // lets GCC if-convert fast_exp's compares (as norm.cpp)
#endif
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include "fast_exp.h"
#include "tinytorch/kernels/rnn.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// float uses the vectorizable exp (the gates dominate the pointwise cost); double uses libm.
template <class T>
inline T sigmoid(T x) {
  if constexpr (std::is_same_v<T, float>) return 1.0f / (1.0f + fast_exp(-x));
  else return T(1) / (T(1) + std::exp(-x));
}
template <class T>
inline T tanh_(T x) {
  if constexpr (std::is_same_v<T, float>) return 2.0f / (1.0f + fast_exp(-2.0f * x)) - 1.0f;
  else return std::tanh(x);
}

// Weights the per-step GEMMs read in place get rows padded by kPad elements: a row stride of a
// power of two (2048 floats = 8 KiB) maps every row of a B panel to the same L1 sets, which made
// the step GEMM several times slower than with packed operands.
constexpr int64_t kPad = 16;

// (C, R + kPad) holding src (R, C)^T in its first R columns; blocked so both sides stay in cache.
template <class T>
Tensor transposed_padded(const Tensor& src) {
  const int64_t R = src.size(0), C = src.size(1), ld = R + kPad;
  Tensor dst = Tensor::empty({C, ld}, src.dtype(), src.device());
  const T* s = src.data<T>();
  T* d = dst.data<T>();
  constexpr int64_t kBlock = 32;
  for (int64_t i0 = 0; i0 < R; i0 += kBlock)
    for (int64_t j0 = 0; j0 < C; j0 += kBlock)
      for (int64_t i = i0; i < std::min(R, i0 + kBlock); ++i)
        for (int64_t j = j0; j < std::min(C, j0 + kBlock); ++j) d[j * ld + i] = s[i * C + j];
  return dst;
}

// (R, C + kPad) holding src (R, C) in its first C columns.
template <class T>
Tensor padded(const Tensor& src) {
  const int64_t R = src.size(0), C = src.size(1);
  Tensor dst = Tensor::empty({R, C + kPad}, src.dtype(), src.device());
  for (int64_t i = 0; i < R; ++i) std::memcpy(dst.data<T>() + i * (C + kPad), src.data<T>() + i * C, C * sizeof(T));
  return dst;
}

// The recurrent product hg (B, G) = h (B, H) @ w_hh^T with w_hh^T stored as wt (H, G + kPad):
// the GEMM reads a non-transposed B of up to 1024 columns in place (no packing per step); in
// chunks of 512 columns a B panel's rows stay in L2 across the row blocks of h (measured: 2x
// faster per LSTM step than 1024 at H = 512, B = 20).
void recurrent_gemm(const Tensor& h, const Tensor& wt, const Tensor& hg, int64_t B, int64_t H, int64_t G) {
  constexpr int64_t kChunk = 512;
  for (int64_t j = 0; j < G; j += kChunk) {
    const int64_t w = std::min(kChunk, G - j);
    rnn_gemm(h, false, H, wt.narrow(1, j, w), false, wt.size(1), hg.narrow(1, j, w), G, B, w, H, 0.0);
  }
}

// Rows of the batch per task: the pointwise passes are short, so split only large ones.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(H, 1)); }

// One batch row of the LSTM step: gates i, f, g, o from xr + hr + bias (each (4H,)); writes
// saved = i, f, g, o, c (5H,) and h (H,). Restrict pointers let the loop vectorize.
template <class T>
void lstm_cell(int64_t H, const T* __restrict xr, const T* __restrict hr, const T* __restrict bias,
               const T* __restrict c_prev, T* __restrict sv, T* __restrict h) {
  for (int64_t j = 0; j < H; ++j) {
    const T ig = sigmoid(xr[j] + hr[j] + bias[j]);
    const T fg = sigmoid(xr[H + j] + hr[H + j] + bias[H + j]);
    const T gg = tanh_(xr[2 * H + j] + hr[2 * H + j] + bias[2 * H + j]);
    const T og = sigmoid(xr[3 * H + j] + hr[3 * H + j] + bias[3 * H + j]);
    const T c = fg * c_prev[j] + ig * gg;
    sv[j] = ig, sv[H + j] = fg, sv[2 * H + j] = gg, sv[3 * H + j] = og, sv[4 * H + j] = c;
    h[j] = og * tanh_(c);
  }
}

// Its backward for one row: dh (H,) and dc (H,) flow in (dh already holds grad_out's part);
// writes the gate pre-activation gradients dg (4H,), the new dc, and zeroes dh for the GEMM.
template <class T>
void lstm_cell_backward(int64_t H, const T* __restrict sv, const T* __restrict c_prev, const T* __restrict go,
                        T* __restrict dh, T* __restrict dc, T* __restrict dg) {
  for (int64_t j = 0; j < H; ++j) {
    const T ig = sv[j], fg = sv[H + j], gg = sv[2 * H + j], og = sv[3 * H + j], c = sv[4 * H + j];
    const T dht = dh[j] + go[j], tc = tanh_(c);
    const T dct = dc[j] + dht * og * (T(1) - tc * tc);
    dg[j] = dct * gg * ig * (T(1) - ig);
    dg[H + j] = dct * c_prev[j] * fg * (T(1) - fg);
    dg[2 * H + j] = dct * ig * (T(1) - gg * gg);
    dg[3 * H + j] = dht * tc * og * (T(1) - og);
    dc[j] = dct * fg;
    dh[j] = T(0);
  }
}

// Forward: w_hh as (H, G + kPad) W_hh^T, bias as (3, G) rows b_ih, b_hh and their sum (zeros
// without bias), work as hg (B, G). Backward: w_hh as (G, H + kPad).
template <class T>
void prepare_typed(bool backward, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, int64_t B,
                   RnnStepWeights& w) {
  const int64_t G = w_hh.size(0);
  if (backward) {
    w.w_hh = padded<T>(w_hh);
    return;
  }
  w.w_hh = transposed_padded<T>(w_hh);
  w.bias = Tensor::empty({3, G}, w_hh.dtype(), w_hh.device());
  T* bi = w.bias.data<T>();
  T* bh = bi + G;
  T* bsum = bh + G;
  if (b_ih.defined()) {
    std::memcpy(bi, b_ih.data<T>(), G * sizeof(T));
    std::memcpy(bh, b_hh.data<T>(), G * sizeof(T));
  } else {
    std::fill(bi, bi + 2 * G, T(0));
  }
  for (int64_t j = 0; j < G; ++j) bsum[j] = bi[j] + bh[j];
  w.work = Tensor::empty({B, G}, w_hh.dtype(), w_hh.device());
}

// xg: (B, G), h_prev: (B, H) -> out: (B, H), saved: (B, S)
template <class T>
void forward_step_typed(const RnnForwardArgs& a, const RnnStepWeights& w, const RnnForwardStep& s) {
  const RnnMode mode = a.mode;
  const int64_t B = a.x.size(1), H = a.w_hh.size(1), G = a.w_hh.size(0), S = rnn_saved(mode) * H;
  recurrent_gemm(s.h_prev, w.w_hh, w.work, B, H, G);  // hg (B, G) = h_prev W_hh^T
  const T* bi = w.bias.data<T>();
  const T* bh = bi + G;
  const T* bsum = bh + G;
  const T* xgp = s.xg.data<T>();
  const T* hgp = w.work.data<T>();
  const T* hp = s.h_prev.data<T>();
  const T* cp = mode == RnnMode::LSTM ? s.c_prev.data<T>() : nullptr;
  const int64_t cp_stride = mode == RnnMode::LSTM ? s.c_prev.stride(0) : 0;
  T* out = s.out.data<T>();
  T* saved = s.saved.data<T>();
  parallel_for(0, B, row_grain(H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const T* xr = xgp + b * G;
      const T* hr = hgp + b * G;
      T* o = out + b * H;
      T* sv = saved + b * S;
      if (mode == RnnMode::LSTM) {
        lstm_cell(H, xr, hr, bsum, cp + b * cp_stride, sv, o);
      } else if (mode == RnnMode::GRU) {  // gates r, z, n; saved r, z, n, W_hn h + b_hn
        const T* h_p = hp + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const T r = sigmoid(xr[j] + hr[j] + bsum[j]);
          const T z = sigmoid(xr[H + j] + hr[H + j] + bsum[H + j]);
          const T hn = hr[2 * H + j] + bh[2 * H + j];
          const T n = tanh_(xr[2 * H + j] + bi[2 * H + j] + r * hn);
          sv[j] = r, sv[H + j] = z, sv[2 * H + j] = n, sv[3 * H + j] = hn;
          o[j] = (T(1) - z) * n + z * h_p[j];
        }
      } else {
        for (int64_t j = 0; j < H; ++j) {
          const T v = xr[j] + hr[j] + bsum[j];
          o[j] = mode == RnnMode::Tanh ? tanh_(v) : (v > T(0) ? v : T(0));
        }
      }
    }
  });
}

// saved: (B, S), grad_out, dh, dc: (B, H) -> dhg, dxg: (B, G); dh, dc: (B, H) into step t-1
template <class T>
void backward_step_typed(const RnnBackwardArgs& a, const RnnStepWeights& w, const RnnBackwardStep& s) {
  const RnnMode mode = a.mode;
  const int64_t B = a.x.size(1), H = a.w_hh.size(1), G = a.w_hh.size(0), S = rnn_saved(mode) * H;
  const bool gru = mode == RnnMode::GRU;
  const T* saved = s.saved.data<T>();
  const T* out = s.out.data<T>();
  const T* hp = s.h_prev.data<T>();
  const T* cp = mode == RnnMode::LSTM ? s.c_prev.data<T>() : nullptr;
  const int64_t cp_stride = mode == RnnMode::LSTM ? s.c_prev.stride(0) : 0;
  const T* gout = s.grad_out.data<T>();
  T* dhp = s.dh.data<T>();
  T* dc = mode == RnnMode::LSTM ? s.dc.data<T>() : nullptr;
  T* dhgp = s.dhg.data<T>();
  T* dxgp = s.dxg.data<T>();
  parallel_for(0, B, row_grain(H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const T* sv = saved + b * S;
      const T* go = gout + b * H;
      T* dr = dhgp + b * G;
      T* dxr = dxgp + b * G;
      T* dhb = dhp + b * H;
      if (mode == RnnMode::LSTM) {
        lstm_cell_backward(H, sv, cp + b * cp_stride, go, dhb, dc + b * H, dr);
      } else if (gru) {
        const T* h_p = hp + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const T r = sv[j], z = sv[H + j], n = sv[2 * H + j], hn = sv[3 * H + j];
          const T dht = dhb[j] + go[j];
          const T dan = dht * (T(1) - z) * (T(1) - n * n);
          const T dar = dan * hn * r * (T(1) - r);
          const T daz = dht * (h_p[j] - n) * z * (T(1) - z);
          dxr[j] = dr[j] = dar;
          dxr[H + j] = dr[H + j] = daz;
          dxr[2 * H + j] = dan;
          dr[2 * H + j] = dan * r;
          dhb[j] = dht * z;  // the direct path h_prev -> z * h_prev
        }
      } else {
        const T* h = out + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const T dht = dhb[j] + go[j];
          dr[j] = mode == RnnMode::Tanh ? dht * (T(1) - h[j] * h[j]) : (h[j] > T(0) ? dht : T(0));
          dhb[j] = T(0);
        }
      }
    }
  });
  // dh (B, H) += dhg[t] (B, G) @ w_hh (G, H)
  rnn_gemm(s.dhg, false, G, w.w_hh, false, H + kPad, s.dh, H, B, H, G, 1.0);
}

// dhg, dxg: (L, B, G) -> gw_hh: (G, H), gb_ih, gb_hh: (G,)
template <class T>
void backward_params_typed(const RnnBackwardArgs& a, const Tensor& dhg, const Tensor& dxg) {
  const int64_t L = a.x.size(0), B = a.x.size(1), H = a.w_hh.size(1), G = a.w_hh.size(0), N = L * B;
  // hprev: (L, B, H) the state each step read: h0 at the first step walked, else out[t -+ 1]
  Tensor hprev = Tensor::empty({L, B, H}, a.x.dtype(), a.x.device());
  hprev.select(0, a.reverse ? L - 1 : 0).copy_(a.h0);
  if (L > 1) hprev.narrow(0, a.reverse ? 0 : 1, L - 1).copy_(a.out.narrow(0, a.reverse ? 1 : 0, L - 1));
  rnn_gemm(dhg, true, G, hprev, false, H, a.gw_hh, H, G, H, N, 0.0);  // gw_hh = dhg^T hprev
  if (a.gb_ih.defined()) {  // column sums over the L*B rows
    const T* dhgp = dhg.data<T>();
    const T* dxgp = dxg.data<T>();
    T* gbi = a.gb_ih.data<T>();
    T* gbh = a.gb_hh.data<T>();
    for (int64_t r = 0; r < N; ++r)
      for (int64_t j = 0; j < G; ++j) gbi[j] += dxgp[r * G + j], gbh[j] += dhgp[r * G + j];
  }
}

void cpu_rnn_prepare(RnnMode, bool backward, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, int64_t B,
                     RnnStepWeights& w) {
  if (w_hh.dtype() == DType::Float64) prepare_typed<double>(backward, w_hh, b_ih, b_hh, B, w);
  else prepare_typed<float>(backward, w_hh, b_ih, b_hh, B, w);
}

void cpu_rnn_forward_step(const RnnForwardArgs& a, const RnnStepWeights& w, const RnnForwardStep& s) {
  if (a.x.dtype() == DType::Float64) forward_step_typed<double>(a, w, s);
  else forward_step_typed<float>(a, w, s);
}

void cpu_rnn_backward_step(const RnnBackwardArgs& a, const RnnStepWeights& w, const RnnBackwardStep& s) {
  if (a.x.dtype() == DType::Float64) backward_step_typed<double>(a, w, s);
  else backward_step_typed<float>(a, w, s);
}

void cpu_rnn_backward_params(const RnnBackwardArgs& a, const Tensor& dhg, const Tensor& dxg) {
  if (a.x.dtype() == DType::Float64) backward_params_typed<double>(a, dhg, dxg);
  else backward_params_typed<float>(a, dhg, dxg);
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, rnn_prepare, rnn_forward_step, rnn_backward_step, rnn_backward_params)

}  // namespace tt::cpu
