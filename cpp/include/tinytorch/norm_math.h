#pragma once
// Per-element formulas of softmax/log_softmax and layer_norm/rms_norm backward, shared by the
// CPU (cpu/norm.cpp) and CUDA (norm.cu) kernels; the backends keep the loops and
// the row reductions (lane-parallel partials on the CPU, warp/block all-reduces on CUDA), whose
// orders differ. M is the compute type (opmath_t).
#include <cmath>
#include "tinytorch/macros.h"

namespace tt::norm {

// Softmax input gradient from s = sum over the dim of g * out (softmax) or of g (log_softmax):
// softmax: out * (g - s); log_softmax: g - exp(out) * s, with the backend's exp (StdExp, or the
// CPU's vectorizing float exp); rounded to the element type T.
template <class T, class M, class Exp>
TT_INLINE T softmax_grad(bool is_log, M g, M out, M s, const Exp& exp) {
  return is_log ? T(g - exp(out) * s) : T(out * (g - s));
}

struct StdExp {
  template <class M>
  TT_INLINE M operator()(M v) const { return std::exp(v); }
};

// 1 / sqrt(var + eps): the normalization's scale.
template <class M>
TT_INLINE M rstd(M var, M eps) { return M(1) / std::sqrt(var + eps); }

// Gradient reaching x through the normalization, for gh = g * w (g without weight),
// xhat = (x - mean) * rstd and the row means mean_gh (0 for rms_norm) and mean_gh_xhat of
// gh and gh * xhat: rstd * (gh - mean_gh - xhat * mean_gh_xhat).
template <class M>
TT_INLINE M norm_input_grad(M gh, M xhat, M rstd, M mean_gh, M mean_gh_xhat) {
  return rstd * (gh - mean_gh - xhat * mean_gh_xhat);
}

}  // namespace tt::norm
