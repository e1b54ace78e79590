// CPU fused optimizer steps: one pass over contiguous param/grad/state, in place, threaded
// with parallel_for. Math in opmath_t (float for float16/bfloat16, else the type itself).
// Option flags (maximize, weight decay, amsgrad, ...) are template parameters, so each inner
// loop is branch-free and vectorizes.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include "tinytorch/dtype.h"
#include "tinytorch/kernels/optim.h"
#include "tinytorch/parallel.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES

namespace tt::cpu {
namespace {

// Memory-bound: a few streams per element, so split work at a moderate grain.
constexpr int64_t kOptimGrain = 16384;

template <class F>
void for_range(int64_t n, const F& f) {
  parallel_for(0, n, kOptimGrain, f);
}

// with_flags(f, a, b, c) calls f(std::integral_constant<bool, a>{}, ...) for runtime bools.
template <class F>
void with_flags(const F& f) { f(); }
template <class F, class... B>
void with_flags(const F& f, bool b, B... rest) {
  if (b) with_flags([&](auto... c) { f(std::true_type{}, c...); }, rest...);
  else with_flags([&](auto... c) { f(std::false_type{}, c...); }, rest...);
}
#define TT_FLAG(X) decltype(X)::value

void cpu_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "sgd_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict b = buf.defined() ? buf.data<T>() : nullptr;
    const M lr = M(c.lr), mom = M(c.momentum), damp1 = M(1.0 - c.dampening), wd = M(c.weight_decay);
    with_flags([&](auto MAXIMIZE, auto WD, auto MOMENTUM, auto FIRST, auto NESTEROV) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) gv += wd * pv;
          if constexpr (TT_FLAG(MOMENTUM)) {
            M bv;
            if constexpr (TT_FLAG(FIRST)) bv = gv;
            else bv = mom * M(b[i]) + damp1 * gv;
            b[i] = T(bv);
            if constexpr (TT_FLAG(NESTEROV)) gv = gv + mom * bv;
            else gv = bv;
          }
          p[i] = T(pv - lr * gv);
        }
      });
    }, c.maximize, c.weight_decay != 0, b != nullptr, c.first_step, c.nesterov);
  });
}

void cpu_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                   const Tensor& max_exp_avg_sq, const AdamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adam_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict m1 = exp_avg.data<T>();
    T* __restrict m2 = exp_avg_sq.data<T>();
    T* __restrict mx = c.amsgrad ? max_exp_avg_sq.data<T>() : nullptr;
    const M wd = M(c.weight_decay), decay = M(1.0 - c.lr * c.weight_decay);
    const M omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), omb2 = M(1.0 - c.beta2);
    const M step_size = M(c.step_size), inv_bc2s = M(1.0 / c.bias_correction2_sqrt), eps = M(c.eps);
    with_flags([&](auto MAXIMIZE, auto WD, auto DECOUPLED, auto AMSGRAD) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) {
            if constexpr (TT_FLAG(DECOUPLED)) pv *= decay;
            else gv += wd * pv;
          }
          M m = M(m1[i]);
          m += omb1 * (gv - m);
          m1[i] = T(m);
          M v = b2 * M(m2[i]) + omb2 * gv * gv;
          m2[i] = T(v);
          if constexpr (TT_FLAG(AMSGRAD)) {
            v = std::max(M(mx[i]), v);
            mx[i] = T(v);
          }
          M denom = std::sqrt(v) * inv_bc2s + eps;
          p[i] = T(pv - step_size * (m / denom));
        }
      });
    }, c.maximize, c.weight_decay != 0, c.decoupled_weight_decay, c.amsgrad);
  });
}

// float32 Adadelta over [s, e): AVX-512/AVX2 clones, since two square roots and a division per
// element make this loop compute-bound with SSE2 alone.
TT_SIMD_CLONES void adadelta_f32(float* __restrict p, const float* __restrict g, float* __restrict sq,
                                 float* __restrict acc, int64_t s, int64_t e, float lr, float rho, float omr,
                                 float eps, float wd, float sign) {
  for (int64_t i = s; i < e; ++i) {
    const float pv = p[i];
    float gv = sign * g[i];
    if (wd != 0.f) gv += wd * pv;
    const float sv = rho * sq[i] + omr * gv * gv;
    sq[i] = sv;
    const float a = acc[i];
    const float delta = std::sqrt(a + eps) / std::sqrt(sv + eps) * gv;
    acc[i] = rho * a + omr * delta * delta;
    p[i] = pv - lr * delta;
  }
}

void cpu_adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                       const AdadeltaCoeffs& c) {
  if (param.dtype() == DType::Float32) {
    float* p = param.data<float>();
    const float* g = grad.data<float>();
    float* sq = square_avg.data<float>();
    float* acc = acc_delta.data<float>();
    for_range(param.numel(), [&](int64_t s, int64_t e) {
      adadelta_f32(p, g, sq, acc, s, e, float(c.lr), float(c.rho), float(1.0 - c.rho), float(c.eps),
                   float(c.weight_decay), c.maximize ? -1.f : 1.f);
    });
    return;
  }
  TT_DISPATCH_FLOATING(param.dtype(), "adadelta_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict sq = square_avg.data<T>();
    T* __restrict acc = acc_delta.data<T>();
    const M lr = M(c.lr), rho = M(c.rho), omr = M(1.0 - c.rho), eps = M(c.eps), wd = M(c.weight_decay);
    with_flags([&](auto MAXIMIZE, auto WD) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) gv += wd * pv;
          M sv = rho * M(sq[i]) + omr * gv * gv;
          sq[i] = T(sv);
          M a = M(acc[i]);
          M delta = std::sqrt(a + eps) / std::sqrt(sv + eps) * gv;
          acc[i] = T(rho * a + omr * delta * delta);
          p[i] = T(pv - lr * delta);
        }
      });
    }, c.maximize, c.weight_decay != 0);
  });
}

void cpu_adagrad_step(const Tensor& param, const Tensor& grad, const Tensor& state_sum, const AdagradCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adagrad_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict ss = state_sum.data<T>();
    const M clr = M(c.clr), eps = M(c.eps), wd = M(c.weight_decay);
    with_flags([&](auto MAXIMIZE, auto WD) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) gv += wd * pv;
          M sv = M(ss[i]) + gv * gv;
          ss[i] = T(sv);
          p[i] = T(pv - clr * (gv / (std::sqrt(sv) + eps)));
        }
      });
    }, c.maximize, c.weight_decay != 0);
  });
}

void cpu_rmsprop_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& momentum_buffer,
                      const Tensor& grad_avg, const RmspropCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "rmsprop_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict sq = square_avg.data<T>();
    T* __restrict buf = c.momentum > 0 ? momentum_buffer.data<T>() : nullptr;
    T* __restrict ga = c.centered ? grad_avg.data<T>() : nullptr;
    const M lr = M(c.lr), alpha = M(c.alpha), oma = M(1.0 - c.alpha), eps = M(c.eps), wd = M(c.weight_decay),
            mom = M(c.momentum);
    with_flags([&](auto MAXIMIZE, auto WD, auto CENTERED, auto MOMENTUM) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) gv += wd * pv;
          M sv = alpha * M(sq[i]) + oma * gv * gv;
          sq[i] = T(sv);
          M avg;
          if constexpr (TT_FLAG(CENTERED)) {
            M a = M(ga[i]);
            a += oma * (gv - a);
            ga[i] = T(a);
            avg = std::sqrt(sv - a * a) + eps;
          } else {
            avg = std::sqrt(sv) + eps;
          }
          if constexpr (TT_FLAG(MOMENTUM)) {
            M bv = mom * M(buf[i]) + gv / avg;
            buf[i] = T(bv);
            p[i] = T(pv - lr * bv);
          } else {
            p[i] = T(pv - lr * (gv / avg));
          }
        }
      });
    }, c.maximize, c.weight_decay != 0, c.centered, c.momentum > 0);
  });
}

void cpu_adamax_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                     const AdamaxCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adamax_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict m1 = exp_avg.data<T>();
    T* __restrict u = exp_inf.data<T>();
    const M clr = M(c.clr), omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), eps = M(c.eps), wd = M(c.weight_decay);
    with_flags([&](auto MAXIMIZE, auto WD) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) gv += wd * pv;
          M m = M(m1[i]);
          m += omb1 * (gv - m);
          m1[i] = T(m);
          M uv = std::max(b2 * M(u[i]), std::abs(gv) + eps);
          u[i] = T(uv);
          p[i] = T(pv - clr * (m / uv));
        }
      });
    }, c.maximize, c.weight_decay != 0);
  });
}

void cpu_nadam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const NadamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "nadam_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict m1 = exp_avg.data<T>();
    T* __restrict m2 = exp_avg_sq.data<T>();
    const M wd = M(c.weight_decay), decay = M(1.0 - c.lr * c.weight_decay);
    const M omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), omb2 = M(1.0 - c.beta2), eps = M(c.eps);
    const M inv_bc2 = M(1.0 / c.bias_correction2), cg = M(c.coef_grad), ca = M(c.coef_avg);
    with_flags([&](auto MAXIMIZE, auto WD, auto DECOUPLED) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) {
            if constexpr (TT_FLAG(DECOUPLED)) pv *= decay;
            else gv += wd * pv;
          }
          M m = M(m1[i]);
          m += omb1 * (gv - m);
          m1[i] = T(m);
          M v = b2 * M(m2[i]) + omb2 * gv * gv;
          m2[i] = T(v);
          M denom = std::sqrt(v * inv_bc2) + eps;
          pv += cg * (gv / denom);
          pv += ca * (m / denom);
          p[i] = T(pv);
        }
      });
    }, c.maximize, c.weight_decay != 0, c.decoupled_weight_decay);
  });
}

void cpu_radam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const RadamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "radam_step_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict m1 = exp_avg.data<T>();
    T* __restrict m2 = exp_avg_sq.data<T>();
    const M wd = M(c.weight_decay), decay = M(1.0 - c.lr * c.weight_decay);
    const M omb1 = M(1.0 - c.beta1), b2 = M(c.beta2), omb2 = M(1.0 - c.beta2), eps = M(c.eps);
    const M lr = M(c.lr), inv_bc1 = M(1.0 / c.bias_correction1), bc2s = M(c.bias_correction2_sqrt),
            rect = M(c.rect);
    with_flags([&](auto MAXIMIZE, auto WD, auto DECOUPLED, auto ADAPTIVE) {
      for_range(param.numel(), [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          M pv = M(p[i]);
          M gv = M(g[i]);
          if constexpr (TT_FLAG(MAXIMIZE)) gv = -gv;
          if constexpr (TT_FLAG(WD)) {
            if constexpr (TT_FLAG(DECOUPLED)) pv *= decay;
            else gv += wd * pv;
          }
          M m = M(m1[i]);
          m += omb1 * (gv - m);
          m1[i] = T(m);
          M v = b2 * M(m2[i]) + omb2 * gv * gv;
          m2[i] = T(v);
          M corrected = m * inv_bc1;
          if constexpr (TT_FLAG(ADAPTIVE)) p[i] = T(pv - corrected * lr * (bc2s / (std::sqrt(v) + eps)) * rect);
          else p[i] = T(pv - corrected * lr);
        }
      });
    }, c.maximize, c.weight_decay != 0, c.decoupled_weight_decay, c.rect > 0);
  });
}

#undef TT_FLAG

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
