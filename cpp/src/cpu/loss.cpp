// CPU nll_loss and fused cross_entropy (log_softmax + nll + label smoothing), with backwards.
// Layout: input (N, C, S), class c of sample (n, s) at (n*C + c)*S + s; target (N, S).
// The per-sample formulas are tinytorch/loss_math.h's (as on CUDA).
#include <vector>
#include "tinytorch/kernels/loss.h"
#include "tinytorch/loss_math.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

using loss::class_weight;
using loss::grad_scale;

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
      double scale = grad_scale(gp, i, r, &tw), l_se = loss::lse(x, C, S, loss::SerialGroup());
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
