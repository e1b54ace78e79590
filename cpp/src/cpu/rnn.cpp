// CPU fused recurrent layers. Forward, per layer and direction: xg = x W_ih^T for the whole
// sequence (one GEMM), then per step hg = h W_hh^T (one GEMM) and one pointwise pass that forms
// the gates, the new state and what the backward needs. The backward walks the steps in reverse:
// one pointwise pass gives the gate gradients, one GEMM carries dh to the previous step; the
// weight and input gradients are then three GEMMs over the whole sequence.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")  // lets GCC if-convert fast_exp's compares (as norm.cpp)
#endif
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>
#include "fast_exp.h"
#include "tinytorch/kernels/linalg.h"
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

// c (m, n) = op(a) (m, k) @ op(b) (k, n) + beta * c; a, b, c are views whose data_ptr is the start.
void gemm(const Tensor& a, bool ta, int64_t lda, const Tensor& b, bool tb, int64_t ldb, const Tensor& c,
          int64_t ldc, int64_t m, int64_t n, int64_t k, double beta) {
  if (m == 0 || n == 0) return;
  GemmArgs g;
  g.a = a, g.b = b, g.c = c, g.trans_a = ta, g.trans_b = tb;
  g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc, g.beta = beta;
  gemm_kernel[DeviceType::CPU](g);
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
    gemm(h, false, H, wt.narrow(1, j, w), false, wt.size(1), hg.narrow(1, j, w), G, B, w, H, 0.0);
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

template <class T>
std::vector<T> bias_or_zeros(const Tensor& b, int64_t G) {
  std::vector<T> v(G, T(0));
  if (b.defined()) std::memcpy(v.data(), b.data<T>(), G * sizeof(T));
  return v;
}

template <class T>
void forward_typed(const RnnForwardArgs& a) {
  const RnnMode mode = a.mode;
  const int64_t L = a.x.size(0), B = a.x.size(1), I = a.x.size(2), H = a.w_hh.size(1), G = a.w_hh.size(0);
  const int64_t S = rnn_saved(mode) * H;
  // xg: (L, B, G) = x (L*B, I) @ w_ih^T
  Tensor xg = Tensor::empty({L, B, G}, a.x.dtype(), a.x.device());
  gemm(a.x, false, I, a.w_ih, true, I, xg, G, L * B, G, I, 0.0);
  Tensor hg = Tensor::empty({B, G}, a.x.dtype(), a.x.device());  // (B, G) = h W_hh^T per step
  Tensor w_hh_t = transposed_padded<T>(a.w_hh);                   // (H, G + kPad)
  const std::vector<T> bi = bias_or_zeros<T>(a.b_ih, G), bh = bias_or_zeros<T>(a.b_hh, G);
  std::vector<T> bsum(G);
  for (int64_t j = 0; j < G; ++j) bsum[j] = bi[j] + bh[j];
  T* out = a.out.data<T>();
  T* saved = a.saved.data<T>();
  const T* xgp = xg.data<T>();
  const T* hgp = hg.data<T>();
  int64_t prev = -1;
  for (int64_t s = 0; s < L; ++s) {
    const int64_t t = a.reverse ? L - 1 - s : s;
    Tensor h_prev = prev < 0 ? a.h0 : a.out.select(0, prev);
    recurrent_gemm(h_prev, w_hh_t, hg, B, H, G);
    const T* hp = h_prev.data<T>();
    const T* cp = mode != RnnMode::LSTM ? nullptr : prev < 0 ? a.c0.data<T>() : saved + prev * B * S + 4 * H;
    const int64_t cp_stride = prev < 0 ? H : S;
    parallel_for(0, B, row_grain(H), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const T* xr = xgp + (t * B + b) * G;
        const T* hr = hgp + b * G;
        T* o = out + (t * B + b) * H;
        T* sv = saved + (t * B + b) * S;
        if (mode == RnnMode::LSTM) {
          lstm_cell(H, xr, hr, bsum.data(), cp + b * cp_stride, sv, o);
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
    prev = t;
  }
  std::memcpy(a.h_n.data<T>(), out + prev * B * H, B * H * sizeof(T));
  if (mode == RnnMode::LSTM) {
    T* cn = a.c_n.data<T>();
    for (int64_t b = 0; b < B; ++b) std::memcpy(cn + b * H, saved + (prev * B + b) * S + 4 * H, H * sizeof(T));
  }
}

template <class T>
void backward_typed(const RnnBackwardArgs& a) {
  const RnnMode mode = a.mode;
  const int64_t L = a.x.size(0), B = a.x.size(1), I = a.x.size(2), H = a.w_hh.size(1), G = a.w_hh.size(0);
  const int64_t S = rnn_saved(mode) * H;
  const bool gru = mode == RnnMode::GRU;
  // dhg: (L, B, G) gradients of the recurrent pre-activations; dxg those of the input ones
  // (the same tensor except for GRU, whose n gate sees r * (W_hn h + b_hn)).
  Tensor dhg = Tensor::empty({L, B, G}, a.x.dtype(), a.x.device());
  Tensor dxg = gru ? Tensor::empty({L, B, G}, a.x.dtype(), a.x.device()) : dhg;
  Tensor hprev_all = Tensor::empty({L, B, H}, a.x.dtype(), a.x.device());  // the state each step read
  Tensor w_hh_p = padded<T>(a.w_hh);  // (G, H + kPad)
  Tensor dh = a.gh0;  // (B, H): the gradient flowing into the state, carried step to step
  dh.copy_(a.grad_h_n);
  T* dhp = dh.data<T>();
  T* dc = mode == RnnMode::LSTM ? a.gc0.data<T>() : nullptr;
  if (dc) std::memcpy(dc, a.grad_c_n.data<T>(), B * H * sizeof(T));
  const T* out = a.out.data<T>();
  const T* saved = a.saved.data<T>();
  const T* gout = a.grad_out.data<T>();
  T* dhgp = dhg.data<T>();
  T* dxgp = dxg.data<T>();
  for (int64_t s = L - 1; s >= 0; --s) {
    const int64_t t = a.reverse ? L - 1 - s : s;
    const int64_t prev = s == 0 ? -1 : (a.reverse ? t + 1 : t - 1);
    const T* hp = prev < 0 ? a.h0.data<T>() : out + prev * B * H;
    std::memcpy(hprev_all.data<T>() + t * B * H, hp, B * H * sizeof(T));
    const T* cp = mode != RnnMode::LSTM ? nullptr : prev < 0 ? a.c0.data<T>() : saved + prev * B * S + 4 * H;
    const int64_t cp_stride = prev < 0 ? H : S;
    parallel_for(0, B, row_grain(H), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t row = t * B + b;
        const T* sv = saved + row * S;
        const T* go = gout + row * H;
        T* dr = dhgp + row * G;
        T* dxr = dxgp + row * G;
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
          const T* h = out + row * H;
          for (int64_t j = 0; j < H; ++j) {
            const T dht = dhb[j] + go[j];
            dr[j] = mode == RnnMode::Tanh ? dht * (T(1) - h[j] * h[j]) : (h[j] > T(0) ? dht : T(0));
            dhb[j] = T(0);
          }
        }
      }
    });
    // dh (B, H) += dhg[t] (B, G) @ w_hh (G, H)
    gemm(dhg.select(0, t), false, G, w_hh_p, false, H + kPad, dh, H, B, H, G, 1.0);
  }
  // whole-sequence products: gw_hh = dhg^T hprev, gw_ih = dxg^T x, gx = dxg w_ih
  const int64_t N = L * B;
  gemm(dhg, true, G, hprev_all, false, H, a.gw_hh, H, G, H, N, 0.0);
  gemm(dxg, true, G, a.x, false, I, a.gw_ih, I, G, I, N, 0.0);
  gemm(dxg, false, G, a.w_ih, false, I, a.gx, I, N, I, G, 0.0);
  if (a.gb_ih.defined()) {  // column sums over the L*B rows
    T* gbi = a.gb_ih.data<T>();
    T* gbh = a.gb_hh.data<T>();
    for (int64_t r = 0; r < N; ++r)
      for (int64_t j = 0; j < G; ++j) gbi[j] += dxgp[r * G + j], gbh[j] += dhgp[r * G + j];
  }
}

void cpu_rnn_forward(const RnnForwardArgs& a) {
  if (a.x.dtype() == DType::Float64) forward_typed<double>(a);
  else forward_typed<float>(a);
}

void cpu_rnn_backward(const RnnBackwardArgs& a) {
  if (a.x.dtype() == DType::Float64) backward_typed<double>(a);
  else backward_typed<float>(a);
}

}  // namespace

TT_REGISTER_KERNEL(rnn_forward, CPU, cpu_rnn_forward)
TT_REGISTER_KERNEL(rnn_backward, CPU, cpu_rnn_backward)

}  // namespace tt::cpu
