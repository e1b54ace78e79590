// CPU nll_loss and fused cross_entropy (log_softmax + nll + label smoothing), with backwards.
// Layout: input (N, C, S), class c of sample (n, s) at (n*C + c)*S + s; target (N, S).
#include <cmath>
#include <vector>
#include "tinytorch/kernels/nn.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

inline void check_target(int64_t t, int64_t C, int64_t ignore) {
  TT_CHECK_INDEX(t == ignore || (t >= 0 && t < C), "Target ", t, " is out of bounds (number of classes ", C, ").");
}

template <class T>
inline double wt(const T* w, int64_t c) {
  return w ? static_cast<double>(static_cast<opmath_t<T>>(w[c])) : 1.0;
}

// Sum of the class weights of non-ignored targets: the divisor of Reduction::Mean.
template <class T>
double total_weight(const int64_t* tp, const T* w, int64_t M, int64_t C, int64_t ignore) {
  double tw = 0;
  for (int64_t i = 0; i < M; ++i) {
    check_target(tp[i], C, ignore);
    if (tp[i] != ignore) tw += wt(w, tp[i]);
  }
  return tw;
}

// per-sample losses (M = N*S) -> out: (N, S) for None, or the sum / mean as a 0-dim tensor.
template <class T>
void reduce_out(const std::vector<double>& loss, double tw, const Tensor& out, Reduction r) {
  T* op = out.data<T>();
  if (r == Reduction::None) {
    for (size_t i = 0; i < loss.size(); ++i) op[i] = static_cast<T>(static_cast<opmath_t<T>>(loss[i]));
    return;
  }
  double s = 0;
  for (double v : loss) s += v;  // fixed order: deterministic
  if (r == Reduction::Mean) s /= tw;
  op[0] = static_cast<T>(static_cast<opmath_t<T>>(s));
}

// Per-sample gradient scale: grad_out[n, s], or grad_out / total_weight for Mean.
template <class T>
double grad_scale(const T* gp, int64_t i, Reduction r, double tw) {
  double g = static_cast<double>(static_cast<opmath_t<T>>(gp[r == Reduction::None ? i : 0]));
  return r == Reduction::Mean ? g / tw : g;
}

template <class T>
void nll_typed(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
               int64_t ignore) {
  int64_t N = input.size(0), C = input.size(1), S = input.size(2), M = N * S;
  const T* xp = input.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* w = weight.defined() ? weight.data<T>() : nullptr;
  double tw = total_weight(tp, w, M, C, ignore);
  std::vector<double> loss(static_cast<size_t>(M));
  parallel_for(0, M, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t n = i / S, s = i % S, t = tp[i];
      loss[i] = t == ignore ? 0.0 : -wt(w, t) * static_cast<double>(static_cast<opmath_t<T>>(xp[(n * C + t) * S + s]));
    }
  });
  reduce_out<T>(loss, tw, out, r);
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
    if (t != ignore) op[(n * C + t) * S + s] = static_cast<T>(static_cast<opmath_t<T>>(-wt(w, t) * grad_scale(gp, i, r, tw)));
  }
}

// log-sum-exp over the C classes of sample (n, s), in the opmath type.
template <class T>
double lse_of(const T* x, int64_t C, int64_t S) {
  using A = opmath_t<T>;
  A mx = -std::numeric_limits<A>::infinity();
  for (int64_t c = 0; c < C; ++c) mx = std::max(mx, static_cast<A>(x[c * S]));
  if (std::isinf(mx)) return static_cast<double>(mx);
  A s = 0;
  for (int64_t c = 0; c < C; ++c) s += std::exp(static_cast<A>(x[c * S]) - mx);
  return static_cast<double>(mx) + std::log(static_cast<double>(s));
}

template <class T>
void ce_typed(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
              int64_t ignore, double eps) {
  int64_t N = logits.size(0), C = logits.size(1), S = logits.size(2), M = N * S;
  const T* xp = logits.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* w = weight.defined() ? weight.data<T>() : nullptr;
  double tw = total_weight(tp, w, M, C, ignore);
  std::vector<double> loss(static_cast<size_t>(M));
  parallel_for(0, M, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t n = i / S, s = i % S, t = tp[i];
      if (t == ignore) { loss[i] = 0; continue; }
      const T* x = xp + n * C * S + s;
      double lse = lse_of(x, C, S);
      auto lp = [&](int64_t c) { return static_cast<double>(static_cast<opmath_t<T>>(x[c * S])) - lse; };
      double l = -wt(w, t) * lp(t);
      if (eps > 0) {
        double smooth = 0;
        for (int64_t c = 0; c < C; ++c) smooth -= wt(w, c) * lp(c);
        l = (1 - eps) * l + eps / static_cast<double>(C) * smooth;
      }
      loss[i] = l;
    }
  });
  reduce_out<T>(loss, tw, out, r);
}

template <class T>
void ce_backward_typed(const Tensor& gout, const Tensor& logits, const Tensor& target, const Tensor& weight,
                       const Tensor& gin, Reduction r, int64_t ignore, double eps) {
  int64_t N = logits.size(0), C = logits.size(1), S = logits.size(2), M = N * S;
  const T* xp = logits.data<T>();
  const T* gp = gout.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* w = weight.defined() ? weight.data<T>() : nullptr;
  T* op = gin.data<T>();
  double tw = total_weight(tp, w, M, C, ignore);
  double wsum = 0;  // sum_c w_c, for the smoothing term
  for (int64_t c = 0; c < C; ++c) wsum += wt(w, c);
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
      double scale = grad_scale(gp, i, r, tw), lse = lse_of(x, C, S), wt_t = wt(w, t);
      for (int64_t c = 0; c < C; ++c) {
        double p = std::exp(static_cast<double>(static_cast<opmath_t<T>>(x[c * S])) - lse);
        double d = (1 - eps) * wt_t * (p - (c == t ? 1.0 : 0.0)) + sm * (wsum * p - wt(w, c));
        g[c * S] = static_cast<T>(static_cast<opmath_t<T>>(scale * d));
      }
    }
  });
}

void cpu_nll(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
             int64_t ignore) {
  TT_DISPATCH_FLOATING(input.dtype(), "nll_loss", [&] { nll_typed<scalar_t>(input, target, weight, out, r, ignore); });
}
void cpu_nll_backward(const Tensor& gout, const Tensor& target, const Tensor& weight, const Tensor& gin, Reduction r,
                      int64_t ignore) {
  TT_DISPATCH_FLOATING(gin.dtype(), "nll_loss_backward",
                       [&] { nll_backward_typed<scalar_t>(gout, target, weight, gin, r, ignore); });
}
void cpu_ce(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
            int64_t ignore, double eps) {
  TT_DISPATCH_FLOATING(logits.dtype(), "cross_entropy",
                       [&] { ce_typed<scalar_t>(logits, target, weight, out, r, ignore, eps); });
}
void cpu_ce_backward(const Tensor& gout, const Tensor& logits, const Tensor& target, const Tensor& weight,
                     const Tensor& gin, Reduction r, int64_t ignore, double eps) {
  TT_DISPATCH_FLOATING(logits.dtype(), "cross_entropy_backward",
                       [&] { ce_backward_typed<scalar_t>(gout, logits, target, weight, gin, r, ignore, eps); });
}

}  // namespace

TT_REGISTER_KERNEL(nll_loss, CPU, cpu_nll)
TT_REGISTER_KERNEL(nll_loss_backward, CPU, cpu_nll_backward)
TT_REGISTER_KERNEL(cross_entropy, CPU, cpu_ce)
TT_REGISTER_KERNEL(cross_entropy_backward, CPU, cpu_ce_backward)

}  // namespace tt::cpu
