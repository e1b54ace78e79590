// CPU fused optimizer steps: one pass over contiguous param/grad/state, in place, threaded
// with parallel_for. Math in opmath_t (float for float16/bfloat16, else the type itself).
#include <algorithm>
#include <cmath>
#include "tinytorch/dtype.h"
#include "tinytorch/kernels/optim.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// Memory-bound: a few streams per element, so split work at a moderate grain.
constexpr int64_t kOptimGrain = 16384;

template <class T>
T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

template <class F>
void for_range(int64_t n, const F& f) {
  parallel_for(0, n, kOptimGrain, f);
}

void cpu_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "sgd_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* b = ptr_or_null<T>(buf);
    const M lr = M(c.lr), mom = M(c.momentum), damp1 = M(1.0 - c.dampening), wd = M(c.weight_decay);
    const M sign = c.maximize ? M(-1) : M(1);
    const bool has_wd = c.weight_decay != 0, nesterov = c.nesterov, first = c.first_step;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) gv += wd * pv;
        if (b) {
          M bv = first ? gv : mom * M(b[i]) + damp1 * gv;
          b[i] = T(bv);
          gv = nesterov ? gv + mom * bv : bv;
        }
        p[i] = T(pv - lr * gv);
      }
    });
  });
}

void cpu_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                   const Tensor& max_exp_avg_sq, const AdamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adam_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* m1 = exp_avg.data<T>();
    T* m2 = exp_avg_sq.data<T>();
    T* mx = c.amsgrad ? max_exp_avg_sq.data<T>() : nullptr;
    const M sign = c.maximize ? M(-1) : M(1);
    const M wd = M(c.weight_decay), decay = M(1.0 - c.lr * c.weight_decay);
    const M omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), omb2 = M(1.0 - c.beta2);
    const M step_size = M(c.step_size), bc2s = M(c.bias_correction2_sqrt), eps = M(c.eps);
    const bool has_wd = c.weight_decay != 0, decoupled = c.decoupled_weight_decay;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) {
          if (decoupled) pv *= decay;
          else gv += wd * pv;
        }
        M m = M(m1[i]);
        m += omb1 * (gv - m);
        m1[i] = T(m);
        M v = b2 * M(m2[i]) + omb2 * gv * gv;
        m2[i] = T(v);
        if (mx) {
          v = std::max(M(mx[i]), v);
          mx[i] = T(v);
        }
        M denom = std::sqrt(v) / bc2s + eps;
        p[i] = T(pv - step_size * (m / denom));
      }
    });
  });
}

void cpu_adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                       const AdadeltaCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adadelta_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* sq = square_avg.data<T>();
    T* acc = acc_delta.data<T>();
    const M sign = c.maximize ? M(-1) : M(1);
    const M lr = M(c.lr), rho = M(c.rho), omr = M(1.0 - c.rho), eps = M(c.eps), wd = M(c.weight_decay);
    const bool has_wd = c.weight_decay != 0;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) gv += wd * pv;
        M sv = rho * M(sq[i]) + omr * gv * gv;
        sq[i] = T(sv);
        M a = M(acc[i]);
        M delta = std::sqrt(a + eps) / std::sqrt(sv + eps) * gv;
        acc[i] = T(rho * a + omr * delta * delta);
        p[i] = T(pv - lr * delta);
      }
    });
  });
}

void cpu_adagrad_step(const Tensor& param, const Tensor& grad, const Tensor& state_sum, const AdagradCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adagrad_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* ss = state_sum.data<T>();
    const M sign = c.maximize ? M(-1) : M(1);
    const M clr = M(c.clr), eps = M(c.eps), wd = M(c.weight_decay);
    const bool has_wd = c.weight_decay != 0;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) gv += wd * pv;
        M sv = M(ss[i]) + gv * gv;
        ss[i] = T(sv);
        p[i] = T(pv - clr * (gv / (std::sqrt(sv) + eps)));
      }
    });
  });
}

void cpu_rmsprop_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& momentum_buffer,
                      const Tensor& grad_avg, const RmspropCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "rmsprop_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* sq = square_avg.data<T>();
    T* buf = c.momentum > 0 ? momentum_buffer.data<T>() : nullptr;
    T* ga = c.centered ? grad_avg.data<T>() : nullptr;
    const M sign = c.maximize ? M(-1) : M(1);
    const M lr = M(c.lr), alpha = M(c.alpha), oma = M(1.0 - c.alpha), eps = M(c.eps), wd = M(c.weight_decay),
            mom = M(c.momentum);
    const bool has_wd = c.weight_decay != 0;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) gv += wd * pv;
        M sv = alpha * M(sq[i]) + oma * gv * gv;
        sq[i] = T(sv);
        M avg;
        if (ga) {
          M a = M(ga[i]);
          a += oma * (gv - a);
          ga[i] = T(a);
          avg = std::sqrt(sv - a * a) + eps;
        } else {
          avg = std::sqrt(sv) + eps;
        }
        if (buf) {
          M bv = mom * M(buf[i]) + gv / avg;
          buf[i] = T(bv);
          p[i] = T(pv - lr * bv);
        } else {
          p[i] = T(pv - lr * (gv / avg));
        }
      }
    });
  });
}

void cpu_adamax_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                     const AdamaxCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adamax_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* m1 = exp_avg.data<T>();
    T* u = exp_inf.data<T>();
    const M sign = c.maximize ? M(-1) : M(1);
    const M clr = M(c.clr), omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), eps = M(c.eps), wd = M(c.weight_decay);
    const bool has_wd = c.weight_decay != 0;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) gv += wd * pv;
        M m = M(m1[i]);
        m += omb1 * (gv - m);
        m1[i] = T(m);
        M uv = std::max(b2 * M(u[i]), std::abs(gv) + eps);
        u[i] = T(uv);
        p[i] = T(pv - clr * (m / uv));
      }
    });
  });
}

void cpu_nadam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const NadamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "nadam_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* m1 = exp_avg.data<T>();
    T* m2 = exp_avg_sq.data<T>();
    const M sign = c.maximize ? M(-1) : M(1);
    const M wd = M(c.weight_decay), decay = M(1.0 - c.lr * c.weight_decay);
    const M omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), omb2 = M(1.0 - c.beta2), eps = M(c.eps);
    const M bc2 = M(c.bias_correction2), cg = M(c.coef_grad), ca = M(c.coef_avg);
    const bool has_wd = c.weight_decay != 0, decoupled = c.decoupled_weight_decay;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) {
          if (decoupled) pv *= decay;
          else gv += wd * pv;
        }
        M m = M(m1[i]);
        m += omb1 * (gv - m);
        m1[i] = T(m);
        M v = b2 * M(m2[i]) + omb2 * gv * gv;
        m2[i] = T(v);
        M denom = std::sqrt(v / bc2) + eps;
        pv += cg * (gv / denom);
        pv += ca * (m / denom);
        p[i] = T(pv);
      }
    });
  });
}

void cpu_radam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const RadamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "radam_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* m1 = exp_avg.data<T>();
    T* m2 = exp_avg_sq.data<T>();
    const M sign = c.maximize ? M(-1) : M(1);
    const M wd = M(c.weight_decay), decay = M(1.0 - c.lr * c.weight_decay);
    const M omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), omb2 = M(1.0 - c.beta2), eps = M(c.eps);
    const M lr = M(c.lr), bc1 = M(c.bias_correction1), bc2s = M(c.bias_correction2_sqrt), rect = M(c.rect);
    const bool has_wd = c.weight_decay != 0, decoupled = c.decoupled_weight_decay, adaptive = c.rect > 0;
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        M pv = M(p[i]);
        M gv = sign * M(g[i]);
        if (has_wd) {
          if (decoupled) pv *= decay;
          else gv += wd * pv;
        }
        M m = M(m1[i]);
        m += omb1 * (gv - m);
        m1[i] = T(m);
        M v = b2 * M(m2[i]) + omb2 * gv * gv;
        m2[i] = T(v);
        M corrected = m / bc1;
        if (adaptive) p[i] = T(pv - corrected * lr * (bc2s / (std::sqrt(v) + eps)) * rect);
        else p[i] = T(pv - corrected * lr);
      }
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(sgd_step, CPU, cpu_sgd_step)
TT_REGISTER_KERNEL(adam_step, CPU, cpu_adam_step)
TT_REGISTER_KERNEL(adadelta_step, CPU, cpu_adadelta_step)
TT_REGISTER_KERNEL(adagrad_step, CPU, cpu_adagrad_step)
TT_REGISTER_KERNEL(rmsprop_step, CPU, cpu_rmsprop_step)
TT_REGISTER_KERNEL(adamax_step, CPU, cpu_adamax_step)
TT_REGISTER_KERNEL(nadam_step, CPU, cpu_nadam_step)
TT_REGISTER_KERNEL(radam_step, CPU, cpu_radam_step)

}  // namespace tt::cpu
