// CPU nll_loss and fused cross_entropy (log_softmax + nll + label smoothing), with backwards.
// Layout: input (N, C, S), class c of sample (n, s) at (n*C + c)*S + s; target (N, S).
// The per-sample formulas are tinytorch/loss_math.h's (as on CUDA); rows (S == 1) of float,
// half and bfloat16 logits take float row helpers whose exp (fast_exp) vectorizes.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")  // lets GCC if-convert fast_exp's compares (as attention.cpp)
#endif
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>
#include "fast_exp.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES
#include "tinytorch/kernels/loss.h"
#include "tinytorch/loss_math.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

using loss::class_weight;
using loss::grad_scale;

// ---- float rows: 16 partial maxima / sums, so the loops vectorize.

// max of x[0, n), NaNs skipped as loss::lse's comparison skips them.
TT_SIMD_CLONES float chunk_max(const float* x, int64_t n, float m) {
  float acc[16];
  for (int k = 0; k < 16; ++k) acc[k] = m;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] = acc[k] < x[i + k] ? x[i + k] : acc[k];
  for (; i < n; ++i) acc[0] = acc[0] < x[i] ? x[i] : acc[0];
  for (int k = 1; k < 16; ++k) acc[0] = acc[0] < acc[k] ? acc[k] : acc[0];
  return acc[0];
}
// sum of exp(x - m) over x[0, n).
TT_SIMD_CLONES float chunk_exp_sum(const float* x, int64_t n, float m) {
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += fast_exp(x[i + k] - m);
  for (; i < n; ++i) acc[0] += fast_exp(x[i] - m);
  for (int k = 1; k < 16; ++k) acc[0] += acc[k];
  return acc[0];
}
// g[i] = scale * exp(x[i] - l_se).
TT_SIMD_CLONES void chunk_scaled_softmax(const float* x, int64_t n, float l_se, float scale, float* g) {
  for (int64_t i = 0; i < n; ++i) g[i] = scale * fast_exp(x[i] - l_se);
}

// A row of T read as float chunks: float rows in place, 16-bit ones converted kChunk at a time.
template <class T>
struct FloatRow {
  static constexpr int64_t kChunk = 512;
  static constexpr bool kUsed = std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  const T* x;
  float buf[std::is_same_v<T, float> ? 1 : kChunk];
  // f(chunk, offset, n) over the row's C values in order.
  template <class F>
  void each(int64_t C, const F& f) {
    for (int64_t c = 0; c < C; c += kChunk) {
      const int64_t n = std::min(kChunk, C - c);
      if constexpr (std::is_same_v<T, float>) {
        f(x + c, c, n);
      } else {
        for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(x[c + i]);
        f(static_cast<const float*>(buf), c, n);
      }
    }
  }
};

// loss::lse of a float row (the same non-finite cases), with fast_exp.
template <class T>
double row_lse(const T* x, int64_t C) {
  FloatRow<T> row{x, {}};
  float m = -std::numeric_limits<float>::infinity();
  row.each(C, [&](const float* v, int64_t, int64_t n) { m = chunk_max(v, n, m); });
  if (std::isinf(m)) return m > 0 ? static_cast<double>(NAN) : static_cast<double>(m);
  float s = 0;
  row.each(C, [&](const float* v, int64_t, int64_t n) { s += chunk_exp_sum(v, n, m); });
  return static_cast<double>(m) + std::log(static_cast<double>(s));
}

inline void check_target(int64_t t, int64_t C, int64_t ignore) {
  TT_CHECK_INDEX(t == ignore || (t >= 0 && t < C), "Target ", t, " is out of bounds (number of classes ", C, ").");
}

// Sum of the class weights of non-ignored targets: the divisor of Reduction::Mean.
template <class T>
double total_weight(const int64_t* tp, const T* w, int64_t M, int64_t C, int64_t ignore) {
  double tw = 0;
  for (int64_t i = 0; i < M; ++i) {
    check_target(tp[i], C, ignore);
    if (tp[i] != ignore) tw += class_weight(w, tp[i]);
  }
  return tw;
}

// per-sample losses (M = N*S) -> out: (N, S) for None, or the sum / mean as a 0-dim tensor, in
// out's dtype.
void reduce_out(const std::vector<double>& losses, double tw, const Tensor& out, Reduction r) {
  TT_DISPATCH_FLOATING(out.dtype(), "loss", [&] {
    using O = scalar_t;
    O* op = out.data<O>();
    if (r == Reduction::None) {
      for (size_t i = 0; i < losses.size(); ++i) op[i] = loss::store<O>(losses[i]);
      return;
    }
    double s = 0;
    for (double v : losses) s += v;  // fixed order: deterministic
    if (r == Reduction::Mean) s /= tw;
    op[0] = loss::store<O>(s);
  });
}

// input: (N, C, S) -> out: loss_of(x, t, w) for each sample (n, s) with target t != ignore,
// x pointing at its class 0 (classes S apart); per-sample losses in parallel, then reduced.
template <class T, class F>
void loss_forward(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
                  int64_t ignore, int64_t grain, const F& loss_of) {
  int64_t N = input.size(0), C = input.size(1), S = input.size(2), M = N * S;
  const T* xp = input.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* w = weight.defined() ? weight.data<T>() : nullptr;
  double tw = total_weight(tp, w, M, C, ignore);
  std::vector<double> losses(static_cast<size_t>(M));
  parallel_for(0, M, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t n = i / S, s = i % S, t = tp[i];
      losses[i] = t == ignore ? 0.0 : loss_of(xp + n * C * S + s, t, w);
    }
  });
  reduce_out(losses, tw, out, r);
}

template <class T>
void nll_typed(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
               int64_t ignore) {
  const int64_t S = input.size(2);
  loss_forward<T>(input, target, weight, out, r, ignore, kGrainSize,
                  [S](const T* x, int64_t t, const T* w) { return loss::nll(x, t * S, t, w); });
}

template <class T>
void ce_typed(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
              int64_t ignore, double eps) {
  const int64_t C = logits.size(1), S = logits.size(2);
  loss_forward<T>(logits, target, weight, out, r, ignore, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)),
                  [C, S, eps](const T* x, int64_t t, const T* w) {
                    if constexpr (FloatRow<T>::kUsed)
                      if (S == 1) return loss::ce_given_lse(x, C, 1, t, w, eps, row_lse(x, C), loss::SerialGroup());
                    return loss::ce(x, C, S, t, w, eps, loss::SerialGroup());
                  });
}

template <class T>
void nll_backward_typed(const Tensor& gout, const Tensor& target, const Tensor& weight, const Tensor& gin,
                        Reduction r, int64_t ignore) {
  int64_t N = gin.size(0), C = gin.size(1), S = gin.size(2), M = N * S;
  const T* gp = gout.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* w = weight.defined() ? weight.data<T>() : nullptr;
  T* op = gin.data<T>();
  double tw = total_weight(tp, w, M, C, ignore);
  std::fill(op, op + N * C * S, T(0));
  for (int64_t i = 0; i < M; ++i) {
    int64_t n = i / S, s = i % S, t = tp[i];
    if (t != ignore) op[(n * C + t) * S + s] = loss::store<T>(-class_weight(w, t) * grad_scale(gp, i, r, &tw));
  }
}

template <class T>
void ce_backward_typed(const Tensor& gout, const Tensor& logits, const Tensor& target, const Tensor& weight,
                       const Tensor& gin, Reduction r, int64_t ignore, double eps) {
  int64_t N = logits.size(0), C = logits.size(1), S = logits.size(2), M = N * S;
  const T* xp = logits.data<T>();
  const double* gp = gout.data<double>();
  const int64_t* tp = target.data<int64_t>();
  const T* w = weight.defined() ? weight.data<T>() : nullptr;
  T* op = gin.data<T>();
  double tw = total_weight(tp, w, M, C, ignore);
  double wsum = 0;  // sum_c w_c, for the smoothing term
  for (int64_t c = 0; c < C; ++c) wsum += class_weight(w, c);
  double sm = eps / static_cast<double>(C);
  parallel_for(0, M, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t n = i / S, s = i % S, t = tp[i];
      const T* x = xp + n * C * S + s;
      T* g = op + n * C * S + s;
      if (t == ignore) {
        for (int64_t c = 0; c < C; ++c) g[c * S] = T(0);
        continue;
      }
      double scale = grad_scale(gp, i, r, &tw);
      if constexpr (FloatRow<T>::kUsed) {
        if (S == 1 && w == nullptr && eps == 0) {  // g = scale * (softmax - onehot_t), in float
          const float l_se = static_cast<float>(row_lse(x, C)), sc = static_cast<float>(scale);
          FloatRow<T> row{x, {}};
          float gbuf[FloatRow<T>::kChunk];
          row.each(C, [&](const float* v, int64_t c0, int64_t n) {
            if constexpr (std::is_same_v<T, float>) {
              chunk_scaled_softmax(v, n, l_se, sc, g + c0);
            } else {
              chunk_scaled_softmax(v, n, l_se, sc, gbuf);
              for (int64_t k = 0; k < n; ++k) g[c0 + k] = static_cast<T>(gbuf[k]);
            }
          });
          g[t] = static_cast<T>(sc * (fast_exp(static_cast<float>(x[t]) - l_se) - 1.0f));
          continue;
        }
      }
      double l_se = loss::lse(x, C, S, loss::SerialGroup());
      for (int64_t c = 0; c < C; ++c) {
        double d = loss::ce_grad(loss::softmax_prob(x, c * S, l_se), c, t, w, eps, sm, wsum);
        g[c * S] = loss::store<T>(scale * d);
      }
    }
  });
}

void cpu_nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
                  int64_t ignore) {
  TT_DISPATCH_FLOATING(input.dtype(), "nll_loss", [&] { nll_typed<scalar_t>(input, target, weight, out, r, ignore); });
}
void cpu_nll_loss_backward(const Tensor& gout, const Tensor& target, const Tensor& weight, const Tensor& gin,
                           Reduction r, int64_t ignore) {
  TT_DISPATCH_FLOATING(gin.dtype(), "nll_loss_backward",
                       [&] { nll_backward_typed<scalar_t>(gout, target, weight, gin, r, ignore); });
}
void cpu_cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
                       int64_t ignore, double eps) {
  TT_DISPATCH_FLOATING(logits.dtype(), "cross_entropy",
                       [&] { ce_typed<scalar_t>(logits, target, weight, out, r, ignore, eps); });
}
void cpu_cross_entropy_backward(const Tensor& gout, const Tensor& logits, const Tensor& target, const Tensor& weight,
                                const Tensor& gin, Reduction r, int64_t ignore, double eps) {
  TT_DISPATCH_FLOATING(logits.dtype(), "cross_entropy_backward",
                       [&] { ce_backward_typed<scalar_t>(gout, logits, target, weight, gin, r, ignore, eps); });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, nll_loss, nll_loss_backward, cross_entropy, cross_entropy_backward)

}  // namespace tt::cpu
