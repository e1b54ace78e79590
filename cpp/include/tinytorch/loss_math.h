#pragma once
// Per-sample formulas of nll_loss and cross_entropy (log_softmax + nll + label smoothing) and
// their gradients, shared by the CPU (cpu/loss.cpp) and CUDA (loss.cu) kernels; the backends
// supply the loops, the reductions over samples and the target checks.
//
// Losses run in double with inputs read through opmath_t; the log-sum-exp runs in opmath_t.
// A sample's C classes lie at x[c * stride]. The loops over them go through a Group: Serial
// (one thread owns the sample: the CPU, and CUDA's (N, C, S) layout) or, in loss.cu, a warp or a
// block, whose rank/size stride the loop and whose sum/max combine the threads' partials.
#include <cmath>
#include <cstdint>
#include "tinytorch/dtype.h"
#include "tinytorch/kernels/loss.h"
#include "tinytorch/macros.h"

namespace tt::loss {

struct SerialGroup {
  TT_INLINE int rank() const { return 0; }
  TT_INLINE int size() const { return 1; }
  template <class V> TT_INLINE V sum(V v) const { return v; }
  template <class V> TT_INLINE V max(V v) const { return v; }
};

template <class T>
TT_INLINE double load(const T* p, int64_t i) { return static_cast<double>(static_cast<opmath_t<T>>(p[i])); }
template <class T>
TT_INLINE T store(double v) { return static_cast<T>(static_cast<opmath_t<T>>(v)); }

// Weight of class c; 1 without class weights (w null).
template <class T>
TT_INLINE double class_weight(const T* w, int64_t c) { return w ? load(w, c) : 1.0; }

// d(reduced loss) / d(loss of sample i): grad_out[i] for None, else grad_out[0], divided by the
// total target weight for Mean (*total_weight is read only then).
template <class T>
TT_INLINE double grad_scale(const T* gout, int64_t i, Reduction r, const double* total_weight) {
  double g = load(gout, r == Reduction::None ? i : 0);
  if (r == Reduction::Mean) g /= *total_weight;
  return g;
}

// nll of a sample whose target log-prob is x[i] (target t, not ignore_index).
template <class T>
TT_INLINE double nll(const T* x, int64_t i, int64_t t, const T* w) { return -class_weight(w, t) * load(x, i); }

// log(sum_c exp(x_c)), max-shifted (std::max's comparison, so NaNs are skipped as fmax does).
// A +inf logit gives NaN, as PyTorch's log_softmax (x - max is inf - inf there); all -inf gives
// -inf, and x_c - lse is NaN for every class.
template <class T, class G>
TT_INLINE double lse(const T* x, int64_t C, int64_t stride, const G& g) {
  using A = opmath_t<T>;
  A mx = -INFINITY;
  for (int64_t c = g.rank(); c < C; c += g.size()) {
    A v = static_cast<A>(x[c * stride]);
    mx = mx < v ? v : mx;
  }
  mx = g.max(mx);
  if (std::isinf(mx)) return mx > 0 ? static_cast<double>(NAN) : static_cast<double>(mx);
  A s = 0;
  for (int64_t c = g.rank(); c < C; c += g.size()) s += std::exp(static_cast<A>(x[c * stride]) - mx);
  s = g.sum(s);
  return static_cast<double>(mx) + std::log(static_cast<double>(s));
}

// Cross entropy of a sample with target t (not ignore_index), label smoothing eps and log-sum-exp
// l_se: (1 - eps) * -w_t logp_t + eps / C * sum_c -w_c logp_c.
template <class T, class G>
TT_INLINE double ce_given_lse(const T* x, int64_t C, int64_t stride, int64_t t, const T* w, double eps, double l_se,
                              const G& g) {
  double l = -class_weight(w, t) * (load(x, t * stride) - l_se);
  if (eps > 0) {
    double smooth = 0;
    for (int64_t c = g.rank(); c < C; c += g.size()) smooth -= class_weight(w, c) * (load(x, c * stride) - l_se);
    smooth = g.sum(smooth);
    l = (1 - eps) * l + eps / static_cast<double>(C) * smooth;
  }
  return l;
}

template <class T, class G>
TT_INLINE double ce(const T* x, int64_t C, int64_t stride, int64_t t, const T* w, double eps, const G& g) {
  return ce_given_lse(x, C, stride, t, w, eps, lse(x, C, stride, g), g);
}

// softmax_c of the sample from its logit x[i] and log-sum-exp.
template <class T>
TT_INLINE double softmax_prob(const T* x, int64_t i, double l_se) { return std::exp(load(x, i) - l_se); }

// d ce / d x_c for p = softmax_c: (1 - eps) w_t (p - [c == t]) + eps / C (sum_c' w_c' p - w_c).
// The class weights are read where they are used, as the kernels always did: nvcc's choice of
// which product to fuse into an FMA follows that order.
template <class T>
TT_INLINE double ce_grad(double p, int64_t c, int64_t t, const T* w, double eps, double eps_over_c, double w_sum) {
  return (1 - eps) * class_weight(w, t) * (p - (c == t ? 1.0 : 0.0)) + eps_over_c * (w_sum * p - class_weight(w, c));
}

}  // namespace tt::loss
