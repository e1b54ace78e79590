#pragma once
// Per-element optimizer update rules, shared by the CPU (cpu/optim.cpp) and CUDA (optim.cu)
// kernels so each rule is written once; the backends only supply the loops.
//
// A rule updates one element: v[] holds the element of each slot in the compute type M
// (opmath_t), the param in slot 0, the grad in slot 1 (read-only), state after; the loop
// loads slot k when uses<Rule>(k, flags), and stores it back unless it is the grad.
// Options are bits (kMaximize, ...). CPU loops fix them at compile time (FixedFlags), so each
// loop is branch-free and vectorizes; CUDA reads them at run time (Flags). The floating-point
// expressions are the kernels' own, in their order: CPU results are bit-identical to the
// per-backend kernels these replace; on CUDA, where nvcc fuses products into FMAs depending on
// the control flow, one float64 RAdam path (maximize + coupled weight decay) can differ by an ulp.
#include <cmath>
#include <cstddef>
#include "tinytorch/kernels/optim.h"
#include "tinytorch/macros.h"

// The fused step kernels (kernels/optim.h) and their rules below, X(kernel, Rule): each backend
// registers its loop over Rule as the kernel, one row each.
#define TT_OPTIM_STEP_RULES(X)                                                                  \
  X(sgd_step, SgdRule) X(adam_step, AdamRule) X(adadelta_step, AdadeltaRule) X(adagrad_step, AdagradRule) \
  X(rmsprop_step, RmspropRule) X(adamax_step, AdamaxRule) X(nadam_step, NadamRule) X(radam_step, RadamRule)

namespace tt::optim {

enum Flag : unsigned {
  kMaximize = 1u << 0,
  kWeightDecay = 1u << 1,  // weight_decay != 0
  kDecoupled = 1u << 2,    // AdamW-style decay of p instead of g += wd * p
  kAmsgrad = 1u << 3,
  kMomentum = 1u << 4,
  kFirstStep = 1u << 5,  // SGD: the momentum buffer starts as g
  kNesterov = 1u << 6,
  kCentered = 1u << 7,
  kRectified = 1u << 8,  // RAdam: variance rectification term is defined (rect > 0)
};

struct Flags {
  unsigned bits;
  TT_INLINE constexpr bool has(unsigned f) const { return (bits & f) != 0; }
};
template <unsigned Bits>
struct FixedFlags {
  TT_INLINE static constexpr bool has(unsigned f) { return (Bits & f) != 0; }
};

// Slot k is read and written when its gating flag is set (0: always). Host only (the CPU
// loop); CUDA kernels skip the null slots instead.
template <class Rule, class F>
constexpr bool uses(size_t k, F f) {
  return Rule::kSlotFlag[k] == 0 || f.has(Rule::kSlotFlag[k]);
}

// std::max(a, b) as the CPU spells it: a unless a < b (NaN handling included).
template <class M>
TT_INLINE M max_of(M a, M b) { return a < b ? b : a; }

inline unsigned prologue_flags(bool maximize, double weight_decay, bool decoupled) {
  return (maximize ? kMaximize : 0u) | (weight_decay != 0 ? kWeightDecay : 0u) | (decoupled ? kDecoupled : 0u);
}

// The prologue every rule starts with: g = maximize ? -g : g, then weight decay, coupled
// (g += wd * p) or decoupled (p *= 1 - lr * wd).
template <class M>
struct Prologue {
  M wd, decay;
  Prologue(double lr, double weight_decay) : wd(M(weight_decay)), decay(M(1.0 - lr * weight_decay)) {}
  template <class F>
  TT_INLINE void operator()(M& p, M& g, F f) const {
    if (f.has(kMaximize)) g = -g;
    if (f.has(kWeightDecay)) {
      if (f.has(kDecoupled)) p *= decay;
      else g += wd * p;
    }
  }
};

// m += (1 - beta1) * (g - m); v = beta2 * v + (1 - beta2) * g^2 (Adam, NAdam, RAdam).
template <class M>
struct Moments {
  M omb1, b2, omb2;
  Moments(double beta1, double beta2) : omb1(M(1.0 - beta1)), b2(M(beta2)), omb2(M(1.0 - beta2)) {}
  TT_INLINE void operator()(M g, M& m, M& v) const {
    m += omb1 * (g - m);
    v = b2 * v + omb2 * g * g;
  }
};

// [p, g, momentum_buffer]: buf = first ? g : mom * buf + (1 - dampening) * g;
// g = nesterov ? g + mom * buf : buf; p -= lr * g
template <class M>
struct SgdRule {
  enum { P, G, BUF, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay | kMomentum | kFirstStep | kNesterov;
  static constexpr unsigned kSlotFlag[kSlots] = {0, 0, kMomentum};
  static constexpr const char* kName = "sgd_step_";
  Prologue<M> pro;
  M lr, mom, damp1;
  explicit SgdRule(const SgdCoeffs& c)
      : pro(c.lr, c.weight_decay), lr(M(c.lr)), mom(M(c.momentum)), damp1(M(1.0 - c.dampening)) {}
  static unsigned flags(const SgdCoeffs& c) {
    return prologue_flags(c.maximize, c.weight_decay, false) | (c.momentum != 0 ? kMomentum : 0u) |
           (c.first_step ? kFirstStep : 0u) | (c.nesterov ? kNesterov : 0u);
  }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    if (f.has(kMomentum)) {
      M b = f.has(kFirstStep) ? g : mom * v[BUF] + damp1 * g;
      v[BUF] = b;
      g = f.has(kNesterov) ? g + mom * b : b;
    }
    v[P] = p - lr * g;
  }
};

// [p, g, exp_avg, exp_avg_sq, max_exp_avg_sq]: moments; amsgrad: vmax = max(vmax, v), v' = vmax;
// p -= step_size * m / (sqrt(v') / bias_correction2_sqrt + eps)
template <class M>
struct AdamRule {
  enum { P, G, EXP_AVG, EXP_AVG_SQ, MAX_EXP_AVG_SQ, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay | kDecoupled | kAmsgrad;
  static constexpr unsigned kSlotFlag[kSlots] = {0, 0, 0, 0, kAmsgrad};
  static constexpr const char* kName = "adam_step_";
  Prologue<M> pro;
  Moments<M> mom;
  M step_size, inv_bc2s, eps;
  explicit AdamRule(const AdamCoeffs& c)
      : pro(c.lr, c.weight_decay), mom(c.beta1, c.beta2), step_size(M(c.step_size)),
        inv_bc2s(M(1.0 / c.bias_correction2_sqrt)), eps(M(c.eps)) {}
  static unsigned flags(const AdamCoeffs& c) {
    return prologue_flags(c.maximize, c.weight_decay, c.decoupled_weight_decay) | (c.amsgrad ? kAmsgrad : 0u);
  }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    mom(g, v[EXP_AVG], v[EXP_AVG_SQ]);
    M sq = v[EXP_AVG_SQ];
    if (f.has(kAmsgrad)) {
      sq = max_of(v[MAX_EXP_AVG_SQ], sq);
      v[MAX_EXP_AVG_SQ] = sq;
    }
    M denom = std::sqrt(sq) * inv_bc2s + eps;
    v[P] = p - step_size * (v[EXP_AVG] / denom);
  }
};

// [p, g, square_avg, acc_delta]: sq = rho * sq + (1 - rho) g^2; d = sqrt(acc + eps) / sqrt(sq + eps) * g;
// acc = rho * acc + (1 - rho) d^2; p -= lr * d
template <class M>
struct AdadeltaRule {
  enum { P, G, SQUARE_AVG, ACC_DELTA, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay;
  static constexpr unsigned kSlotFlag[kSlots] = {};
  static constexpr const char* kName = "adadelta_step_";
  Prologue<M> pro;
  M lr, rho, omr, eps;
  explicit AdadeltaRule(const AdadeltaCoeffs& c)
      : pro(c.lr, c.weight_decay), lr(M(c.lr)), rho(M(c.rho)), omr(M(1.0 - c.rho)), eps(M(c.eps)) {}
  static unsigned flags(const AdadeltaCoeffs& c) { return prologue_flags(c.maximize, c.weight_decay, false); }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    M sq = rho * v[SQUARE_AVG] + omr * g * g;
    v[SQUARE_AVG] = sq;
    M a = v[ACC_DELTA];
    M delta = std::sqrt(a + eps) / std::sqrt(sq + eps) * g;
    v[ACC_DELTA] = rho * a + omr * delta * delta;
    v[P] = p - lr * delta;
  }
};

// [p, g, sum]: sum += g^2; p -= clr * g / (sqrt(sum) + eps)
template <class M>
struct AdagradRule {
  enum { P, G, SUM, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay;
  static constexpr unsigned kSlotFlag[kSlots] = {};
  static constexpr const char* kName = "adagrad_step_";
  Prologue<M> pro;
  M clr, eps;
  // Coupled weight decay only: the decay factor is unused, so no lr goes into it.
  explicit AdagradRule(const AdagradCoeffs& c) : pro(0.0, c.weight_decay), clr(M(c.clr)), eps(M(c.eps)) {}
  static unsigned flags(const AdagradCoeffs& c) { return prologue_flags(c.maximize, c.weight_decay, false); }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    M s = v[SUM] + g * g;
    v[SUM] = s;
    v[P] = p - clr * (g / (std::sqrt(s) + eps));
  }
};

// [p, g, square_avg, momentum_buffer, grad_avg]: sq = alpha * sq + (1 - alpha) g^2;
// centered: ga += (1 - alpha)(g - ga), avg = sqrt(sq - ga^2) + eps, else avg = sqrt(sq) + eps;
// momentum: buf = mom * buf + g / avg, p -= lr * buf; else p -= lr * g / avg
template <class M>
struct RmspropRule {
  enum { P, G, SQUARE_AVG, MOMENTUM_BUFFER, GRAD_AVG, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay | kCentered | kMomentum;
  static constexpr unsigned kSlotFlag[kSlots] = {0, 0, 0, kMomentum, kCentered};
  static constexpr const char* kName = "rmsprop_step_";
  Prologue<M> pro;
  M lr, alpha, oma, eps, mom;
  explicit RmspropRule(const RmspropCoeffs& c)
      : pro(c.lr, c.weight_decay), lr(M(c.lr)), alpha(M(c.alpha)), oma(M(1.0 - c.alpha)), eps(M(c.eps)),
        mom(M(c.momentum)) {}
  static unsigned flags(const RmspropCoeffs& c) {
    return prologue_flags(c.maximize, c.weight_decay, false) | (c.centered ? kCentered : 0u) |
           (c.momentum > 0 ? kMomentum : 0u);
  }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    M sq = alpha * v[SQUARE_AVG] + oma * g * g;
    v[SQUARE_AVG] = sq;
    M avg;
    if (f.has(kCentered)) {
      M a = v[GRAD_AVG];
      a += oma * (g - a);
      v[GRAD_AVG] = a;
      avg = std::sqrt(sq - a * a) + eps;
    } else {
      avg = std::sqrt(sq) + eps;
    }
    if (f.has(kMomentum)) {
      M b = mom * v[MOMENTUM_BUFFER] + g / avg;
      v[MOMENTUM_BUFFER] = b;
      v[P] = p - lr * b;
    } else {
      v[P] = p - lr * (g / avg);
    }
  }
};

// [p, g, exp_avg, exp_inf]: m += (1 - beta1)(g - m); u = max(beta2 * u, |g| + eps); p -= clr * m / u
template <class M>
struct AdamaxRule {
  enum { P, G, EXP_AVG, EXP_INF, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay;
  static constexpr unsigned kSlotFlag[kSlots] = {};
  static constexpr const char* kName = "adamax_step_";
  Prologue<M> pro;
  M clr, omb1, b2, eps;
  // Coupled weight decay only (see AdagradRule).
  explicit AdamaxRule(const AdamaxCoeffs& c)
      : pro(0.0, c.weight_decay), clr(M(c.clr)), omb1(M(1.0 - c.beta1)), b2(M(c.beta2)), eps(M(c.eps)) {}
  static unsigned flags(const AdamaxCoeffs& c) { return prologue_flags(c.maximize, c.weight_decay, false); }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    M m = v[EXP_AVG];
    m += omb1 * (g - m);
    v[EXP_AVG] = m;
    M u = max_of(b2 * v[EXP_INF], std::abs(g) + eps);
    v[EXP_INF] = u;
    v[P] = p - clr * (m / u);
  }
};

// [p, g, exp_avg, exp_avg_sq]: moments; denom = sqrt(v / bias_correction2) + eps;
// p += coef_grad * g / denom + coef_avg * m / denom
template <class M>
struct NadamRule {
  enum { P, G, EXP_AVG, EXP_AVG_SQ, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay | kDecoupled;
  static constexpr unsigned kSlotFlag[kSlots] = {};
  static constexpr const char* kName = "nadam_step_";
  Prologue<M> pro;
  Moments<M> mom;
  M eps, inv_bc2, cg, ca;
  explicit NadamRule(const NadamCoeffs& c)
      : pro(c.lr, c.weight_decay), mom(c.beta1, c.beta2), eps(M(c.eps)), inv_bc2(M(1.0 / c.bias_correction2)),
        cg(M(c.coef_grad)), ca(M(c.coef_avg)) {}
  static unsigned flags(const NadamCoeffs& c) {
    return prologue_flags(c.maximize, c.weight_decay, c.decoupled_weight_decay);
  }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    mom(g, v[EXP_AVG], v[EXP_AVG_SQ]);
    M denom = std::sqrt(v[EXP_AVG_SQ] * inv_bc2) + eps;
    p += cg * (g / denom);
    p += ca * (v[EXP_AVG] / denom);
    v[P] = p;
  }
};

// [p, g, exp_avg, exp_avg_sq]: moments; rect > 0: p -= lr * rect * (m / bc1) * bc2_sqrt / (sqrt(v) + eps)
// else p -= lr * m / bc1
template <class M>
struct RadamRule {
  enum { P, G, EXP_AVG, EXP_AVG_SQ, kSlots };
  static constexpr unsigned kFlags = kMaximize | kWeightDecay | kDecoupled | kRectified;
  static constexpr unsigned kSlotFlag[kSlots] = {};
  static constexpr const char* kName = "radam_step_";
  Prologue<M> pro;
  Moments<M> mom;
  M eps, lr, inv_bc1, bc2s, rect;
  explicit RadamRule(const RadamCoeffs& c)
      : pro(c.lr, c.weight_decay), mom(c.beta1, c.beta2), eps(M(c.eps)), lr(M(c.lr)),
        inv_bc1(M(1.0 / c.bias_correction1)), bc2s(M(c.bias_correction2_sqrt)), rect(M(c.rect)) {}
  static unsigned flags(const RadamCoeffs& c) {
    return prologue_flags(c.maximize, c.weight_decay, c.decoupled_weight_decay) | (c.rect > 0 ? kRectified : 0u);
  }
  template <class F>
  TT_INLINE void operator()(M (&v)[kSlots], F f) const {
    M p = v[P], g = v[G];
    pro(p, g, f);
    mom(g, v[EXP_AVG], v[EXP_AVG_SQ]);
    M corrected = v[EXP_AVG] * inv_bc1;
    if (f.has(kRectified)) v[P] = p - corrected * lr * (bc2s / (std::sqrt(v[EXP_AVG_SQ]) + eps)) * rect;
    else v[P] = p - corrected * lr;
  }
};

}  // namespace tt::optim
