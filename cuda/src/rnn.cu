// CUDA step kernels of the fused recurrent layers, the structure of cpu/rnn.cpp (the time loop is
// ops/rnn.cpp's). Forward step: hg = h W_hh^T (one cuBLAS GEMM) and one pointwise kernel that
// forms the gates, the new state and what the backward needs. Backward step: one pointwise kernel
// gives the gate gradients, one GEMM carries dh to the previous step; after the walk, gw_hh and
// the bias gradients over the whole sequence. Storage is the input's dtype; gates are computed in
// opmath (float for float16/bfloat16/float32) and the GEMMs accumulate in float32
// (cuda/src/linalg.cu).
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/rnn.h"
#include "tinytorch/ops/elementwise.h"

namespace tt::cuda {
namespace {

template <class M>
__device__ __forceinline__ M sigmoid(M x) {
  return M(1) / (M(1) + exp(-x));
}

template <class T>
__device__ __forceinline__ opmath_t<T> ld(const T* p, int64_t i) {
  return static_cast<opmath_t<T>>(p[i]);
}

// b_ih[k] + b_hh[k] (0 without bias)
template <class T>
__device__ __forceinline__ opmath_t<T> bias2(const T* b_ih, const T* b_hh, int64_t k) {
  using M = opmath_t<T>;
  return b_ih ? ld(b_ih, k) + ld(b_hh, k) : M(0);
}

// Pointers of one forward step. Rows of the batch are contiguous in every operand except the
// previous cell state, which is c0 (stride H) at the first step and saved's c (stride 5H) after.
template <class T>
struct StepFwd {
  const T* xg;      // (B, G) this step's input projection (LSTM, Elman: plus h_prev W_hh^T)
  const T* hg;      // (B, G) h_prev W_hh^T (GRU, whose n gate needs it apart)
  const T* b_ih;    // (G,) or null
  const T* b_hh;    // (G,) or null
  const T* h_prev;  // (B, H)
  const T* c_prev;  // (B, H) rows c_stride apart (LSTM)
  int64_t c_stride;
  T* saved;  // (B, S)
  T* out;    // (B, H)
};

// LSTM gates i, f, g, o. xg: (B, 4H) pre-activations less the biases -> saved: (B, 5H) =
// i, f, g, o, c; out: (B, H) = h
template <class T>
__global__ void lstm_step_kernel(int64_t B, int64_t H, StepFwd<T> p) {
  using M = opmath_t<T>;
  const int64_t G = 4 * H;
  TT_GRID_STRIDE(idx, B * H) {
    const int64_t b = idx / H, j = idx - b * H;
    const T* xr = p.xg + b * G;
    const M ig = sigmoid(ld(xr, j) + bias2(p.b_ih, p.b_hh, j));
    const M fg = sigmoid(ld(xr, H + j) + bias2(p.b_ih, p.b_hh, H + j));
    const M gg = tanh(ld(xr, 2 * H + j) + bias2(p.b_ih, p.b_hh, 2 * H + j));
    const M og = sigmoid(ld(xr, 3 * H + j) + bias2(p.b_ih, p.b_hh, 3 * H + j));
    const M c = fg * ld(p.c_prev, b * p.c_stride + j) + ig * gg;
    T* sv = p.saved + b * 5 * H;
    sv[j] = T(ig), sv[H + j] = T(fg), sv[2 * H + j] = T(gg), sv[3 * H + j] = T(og), sv[4 * H + j] = T(c);
    p.out[idx] = T(og * tanh(c));
  }
}

// GRU gates r, z, n. xg, hg: (B, 3H) -> saved: (B, 4H) = r, z, n, W_hn h + b_hn; out: (B, H)
template <class T>
__global__ void gru_step_kernel(int64_t B, int64_t H, StepFwd<T> p) {
  using M = opmath_t<T>;
  const int64_t G = 3 * H;
  TT_GRID_STRIDE(idx, B * H) {
    const int64_t b = idx / H, j = idx - b * H;
    const T* xr = p.xg + b * G;
    const T* hr = p.hg + b * G;
    const M r = sigmoid(ld(xr, j) + ld(hr, j) + bias2(p.b_ih, p.b_hh, j));
    const M z = sigmoid(ld(xr, H + j) + ld(hr, H + j) + bias2(p.b_ih, p.b_hh, H + j));
    const M hn = ld(hr, 2 * H + j) + (p.b_hh ? ld(p.b_hh, 2 * H + j) : M(0));
    const M n = tanh(ld(xr, 2 * H + j) + (p.b_ih ? ld(p.b_ih, 2 * H + j) : M(0)) + r * hn);
    T* sv = p.saved + b * 4 * H;
    sv[j] = T(r), sv[H + j] = T(z), sv[2 * H + j] = T(n), sv[3 * H + j] = T(hn);
    p.out[idx] = T((M(1) - z) * n + z * ld(p.h_prev, idx));
  }
}

// Elman step. xg: (B, H) pre-activations less the biases -> out: (B, H) = tanh or relu (nothing
// saved)
template <class T>
__global__ void elman_step_kernel(int64_t B, int64_t H, bool relu, StepFwd<T> p) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(idx, B * H) {
    const int64_t j = idx % H;
    const M v = ld(p.xg, idx) + bias2(p.b_ih, p.b_hh, j);
    p.out[idx] = T(relu ? (v > M(0) ? v : M(0)) : tanh(v));
  }
}

// Pointers of one backward step; dh (B, H) holds the state gradient carried from step t+1 and
// leaves holding the part that does not pass through W_hh (GRU: dht * z; else unused, the GEMM
// overwrites it); dc (B, H) is carried in place.
template <class T>
struct StepBwd {
  const T* saved;   // (B, S) this step's
  const T* out;     // (B, H) this step's output (Elman)
  const T* h_prev;  // (B, H) the state this step read (GRU)
  const T* c_prev;  // (B, H) rows c_stride apart (LSTM)
  int64_t c_stride;
  const T* go;  // (B, H) grad of this step's output
  T* dh;        // (B, H)
  T* dc;        // (B, H) (LSTM)
  T* dhg;       // (B, G) gradient of the recurrent pre-activations
  T* dxg;       // (B, G) gradient of the input pre-activations (GRU; else dhg)
};

// saved: (B, 5H) i, f, g, o, c -> dhg: (B, 4H); dc updated in place
template <class T>
__global__ void lstm_step_backward_kernel(int64_t B, int64_t H, StepBwd<T> p) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(idx, B * H) {
    const int64_t b = idx / H, j = idx - b * H;
    const T* sv = p.saved + b * 5 * H;
    const M ig = ld(sv, j), fg = ld(sv, H + j), gg = ld(sv, 2 * H + j), og = ld(sv, 3 * H + j), c = ld(sv, 4 * H + j);
    const M dht = ld(p.dh, idx) + ld(p.go, idx), tc = tanh(c);
    const M dct = ld(p.dc, idx) + dht * og * (M(1) - tc * tc);
    T* dr = p.dhg + b * 4 * H;
    dr[j] = T(dct * gg * ig * (M(1) - ig));
    dr[H + j] = T(dct * ld(p.c_prev, b * p.c_stride + j) * fg * (M(1) - fg));
    dr[2 * H + j] = T(dct * ig * (M(1) - gg * gg));
    dr[3 * H + j] = T(dht * tc * og * (M(1) - og));
    p.dc[idx] = T(dct * fg);
  }
}

// saved: (B, 4H) r, z, n, hn -> dhg, dxg: (B, 3H) (they differ in the n gate: dxg's is dan, dhg's
// dan * r); dh = dht * z, the direct path h_prev -> z * h_prev
template <class T>
__global__ void gru_step_backward_kernel(int64_t B, int64_t H, StepBwd<T> p) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(idx, B * H) {
    const int64_t b = idx / H, j = idx - b * H;
    const T* sv = p.saved + b * 4 * H;
    const M r = ld(sv, j), z = ld(sv, H + j), n = ld(sv, 2 * H + j), hn = ld(sv, 3 * H + j);
    const M dht = ld(p.dh, idx) + ld(p.go, idx);
    const M dan = dht * (M(1) - z) * (M(1) - n * n);
    const M dar = dan * hn * r * (M(1) - r);
    const M daz = dht * (ld(p.h_prev, idx) - n) * z * (M(1) - z);
    T* dr = p.dhg + b * 3 * H;
    T* dx = p.dxg + b * 3 * H;
    dx[j] = dr[j] = T(dar);
    dx[H + j] = dr[H + j] = T(daz);
    dx[2 * H + j] = T(dan);
    dr[2 * H + j] = T(dan * r);
    p.dh[idx] = T(dht * z);
  }
}

// out: (B, H) the step's activation -> dhg: (B, H)
template <class T>
__global__ void elman_step_backward_kernel(int64_t B, int64_t H, bool relu, StepBwd<T> p) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(idx, B * H) {
    const M dht = ld(p.dh, idx) + ld(p.go, idx), h = ld(p.out, idx);
    p.dhg[idx] = T(relu ? (h > M(0) ? dht : M(0)) : dht * (M(1) - h * h));
  }
}

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Forward: work as hg (B, G) for GRU, whose n gate scales h W_hh^T by r; LSTM and Elman add it
// into xg in place. The step kernels read W_hh and the biases as given.
void cuda_rnn_prepare(RnnMode mode, bool backward, const Tensor& w_hh, const Tensor&, const Tensor&, int64_t B,
                      RnnStepWeights& w) {
  if (!backward && mode == RnnMode::GRU) w.work = Tensor::empty({B, w_hh.size(0)}, w_hh.dtype(), w_hh.device());
}

// xg: (B, G), h_prev: (B, H) -> out: (B, H), saved: (B, S)
template <class T>
void forward_step_typed(const RnnForwardArgs& a, const RnnStepWeights& w, const RnnForwardStep& s) {
  const RnnMode mode = a.mode;
  const int64_t B = a.x.size(1), H = a.w_hh.size(1), G = a.w_hh.size(0);
  const bool gru = mode == RnnMode::GRU;
  cudaStream_t stream = current_stream(a.x.device().index);
  // GRU: hg (B, G) = h_prev W_hh^T; LSTM, Elman: xg += h_prev W_hh^T (beta = 1)
  rnn_gemm(s.h_prev, false, H, a.w_hh, true, H, gru ? w.work : s.xg, G, B, G, H, gru ? 0.0 : 1.0);
  StepFwd<T> p{s.xg.data<T>(), gru ? w.work.data<T>() : nullptr, ptr_or_null<T>(a.b_ih), ptr_or_null<T>(a.b_hh),
               s.h_prev.data<T>(), nullptr, 0, rnn_saved(mode) ? s.saved.data<T>() : nullptr, s.out.data<T>()};
  if (mode == RnnMode::LSTM) {
    p.c_prev = s.c_prev.data<T>();
    p.c_stride = s.c_prev.stride(0);
    lstm_step_kernel<T><<<grid_for(B * H), kThreads, 0, stream>>>(B, H, p);
  } else if (gru) {
    gru_step_kernel<T><<<grid_for(B * H), kThreads, 0, stream>>>(B, H, p);
  } else {
    elman_step_kernel<T><<<grid_for(B * H), kThreads, 0, stream>>>(B, H, mode == RnnMode::Relu, p);
  }
  TT_CUDA_KERNEL_CHECK();
}

// saved: (B, S), grad_out, dh, dc: (B, H) -> dhg, dxg: (B, G); dh, dc: (B, H) into step t-1
template <class T>
void backward_step_typed(const RnnBackwardArgs& a, const RnnStepWeights&, const RnnBackwardStep& s) {
  const RnnMode mode = a.mode;
  const int64_t B = a.x.size(1), H = a.w_hh.size(1), G = a.w_hh.size(0);
  const bool gru = mode == RnnMode::GRU;
  cudaStream_t stream = current_stream(a.x.device().index);
  StepBwd<T> p{rnn_saved(mode) ? s.saved.data<T>() : nullptr, s.out.data<T>(), s.h_prev.data<T>(), nullptr, 0,
               s.grad_out.data<T>(), s.dh.data<T>(), nullptr, s.dhg.data<T>(), s.dxg.data<T>()};
  if (mode == RnnMode::LSTM) {
    p.c_prev = s.c_prev.data<T>();
    p.c_stride = s.c_prev.stride(0);
    p.dc = s.dc.data<T>();
    lstm_step_backward_kernel<T><<<grid_for(B * H), kThreads, 0, stream>>>(B, H, p);
  } else if (gru) {
    gru_step_backward_kernel<T><<<grid_for(B * H), kThreads, 0, stream>>>(B, H, p);
  } else {
    elman_step_backward_kernel<T><<<grid_for(B * H), kThreads, 0, stream>>>(B, H, mode == RnnMode::Relu, p);
  }
  TT_CUDA_KERNEL_CHECK();
  // dh (B, H) = dhg[t] (B, G) @ w_hh (G, H) (+ GRU's direct path, left in dh by the kernel)
  rnn_gemm(s.dhg, false, G, a.w_hh, false, H, s.dh, H, B, H, G, gru ? 1.0 : 0.0);
}

// dhg, dxg: (L, B, G) -> gw_hh: (G, H) = sum_t dhg[t]^T (G, B) @ h_prev[t] (B, H), where h_prev[t]
// is out[t -+ 1], or h0 at the first step walked: two GEMMs over the sequence, no copy of the
// states; gb_ih, gb_hh: (G,) column sums over the L*B rows, gb (1, G) = ones (1, N) @ d (N, G)
void cuda_rnn_backward_params(const RnnBackwardArgs& a, const Tensor& dhg, const Tensor& dxg) {
  DeviceGuard guard(a.x.device());
  const int64_t L = a.x.size(0), B = a.x.size(1), H = a.w_hh.size(1), G = a.w_hh.size(0), N = L * B;
  const int64_t first = a.reverse ? L - 1 : 0;
  rnn_gemm(dhg.select(0, first), true, G, a.h0, false, H, a.gw_hh, H, G, H, B, 0.0);
  if (L > 1) {
    // forward: dhg[1:] with out[:-1]; reverse: dhg[:-1] with out[1:]
    const Tensor d = dhg.narrow(0, a.reverse ? 0 : 1, L - 1), h = a.out.narrow(0, a.reverse ? 1 : 0, L - 1);
    rnn_gemm(d, true, G, h, false, H, a.gw_hh, H, G, H, (L - 1) * B, 1.0);
  }
  if (a.gb_ih.defined()) {
    Tensor ones = full({N}, 1.0, a.x.dtype(), a.x.device());
    rnn_gemm(ones, false, N, dxg, false, G, a.gb_ih, G, 1, G, N, 0.0);
    rnn_gemm(ones, false, N, dhg, false, G, a.gb_hh, G, 1, G, N, 0.0);
  }
}

void cuda_rnn_forward_step(const RnnForwardArgs& a, const RnnStepWeights& w, const RnnForwardStep& s) {
  DeviceGuard guard(a.x.device());
  TT_DISPATCH_FLOATING(a.x.dtype(), "rnn_layer_forward", [&] { forward_step_typed<scalar_t>(a, w, s); });
}

void cuda_rnn_backward_step(const RnnBackwardArgs& a, const RnnStepWeights& w, const RnnBackwardStep& s) {
  DeviceGuard guard(a.x.device());
  TT_DISPATCH_FLOATING(a.x.dtype(), "rnn_layer_backward", [&] { backward_step_typed<scalar_t>(a, w, s); });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, rnn_prepare, rnn_forward_step, rnn_backward_step, rnn_backward_params)

}  // namespace tt::cuda
