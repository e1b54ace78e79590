// CPU fused optimizer steps: one pass over contiguous param/grad/state, in place, threaded
// with parallel_for. The update rules are tinytorch/optim_math.h's; this file supplies the loop.
// Option flags become template parameters (FixedFlags), so each inner loop is branch-free and
// vectorizes.
#include <type_traits>
#include <utility>
#include "tinytorch/dtype.h"
#include "tinytorch/kernels/optim.h"
#include "tinytorch/optim_math.h"
#include "tinytorch/parallel.h"
#include "reduce_simd.h"  // TT_SIMD_CLONES

namespace tt::cpu {
namespace {

using optim::FixedFlags;
using optim::uses;

// Memory-bound: a few streams per element, so split work at a moderate grain.
constexpr int64_t kOptimGrain = 16384;

// with_fixed_flags<Mask>(bits, f) calls f(FixedFlags<bits & Mask>{}): one instantiation per
// combination of the flags in Mask.
template <unsigned Mask, unsigned Fixed = 0, class F>
void with_fixed_flags(unsigned bits, const F& f) {
  if constexpr (Mask == 0) {
    f(FixedFlags<Fixed>{});
  } else {
    constexpr unsigned low = Mask & (~Mask + 1);  // lowest flag not fixed yet
    if (bits & low) with_fixed_flags<Mask & ~low, Fixed | low>(bits, f);
    else with_fixed_flags<Mask & ~low, Fixed>(bits, f);
  }
}

// One restrict pointer per slot (slot K of the rule); unused slots may be null.
template <class T, size_t K>
using SlotPtr = T* __restrict;

// Elements [s, e): load the used slots, apply the rule, store all but the grad (slot 1). The
// grad is loaded as gsign * g when kSignedGrad (see step_range_simd). Always inlined, so the
// SIMD clones below compile it for their instruction set.
template <class T, bool kSignedGrad, class Rule, class F, size_t... K>
__attribute__((always_inline)) inline void step_range(const Rule& rule, F f, opmath_t<T> gsign, int64_t s, int64_t e,
                                                      std::index_sequence<K...>, SlotPtr<T, K>... ptr) {
  using M = opmath_t<T>;
  for (int64_t i = s; i < e; ++i) {
    M v[] = {(uses<Rule>(K, f) ? M(ptr[i]) : M(0))...};
    if constexpr (kSignedGrad) v[1] = gsign * v[1];
    rule(v, f);
    ((K != 1 && uses<Rule>(K, f) ? void(ptr[i] = T(v[K])) : void()), ...);
  }
}

// The same with AVX-512/AVX2 clones, for float32 rules whose square roots and divisions make
// the loop compute-bound with SSE2 alone. maximize stays a run-time multiplication by gsign
// (-1 or 1), as these loops always had it: with FMA, GCC then fuses that product (not wd * p)
// into g + wd * p, so the float32 results stay bit-identical to before.
template <class T, class Rule, class F, size_t... K>
TT_SIMD_CLONES void step_range_simd(const Rule& rule, F f, T gsign, int64_t s, int64_t e,
                                    std::index_sequence<K...> seq, SlotPtr<T, K>... ptr) {
  step_range<T, true>(rule, f, gsign, s, e, seq, ptr...);
}

template <class T>
T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

// Runs Rule over param.numel() elements of (param, grad, state...); kSimd: float32 uses the clones.
template <template <class> class Rule, bool kSimd = false, class C, class... Ts>
void step(const C& c, const Tensor& param, const Ts&... slots) {
  TT_DISPATCH_FLOATING(param.dtype(), Rule<float>::kName, [&] {
    using T = scalar_t;
    using R = Rule<opmath_t<T>>;
    static_assert(R::kSlots == sizeof...(Ts) + 1, "one tensor per slot");
    const R rule(c);
    const unsigned bits = R::flags(c);
    auto seq = std::make_index_sequence<R::kSlots>{};
    if constexpr (kSimd && std::is_same_v<T, float>) {
      const float gsign = (bits & optim::kMaximize) ? -1.f : 1.f;
      with_fixed_flags<R::kFlags & ~optim::kMaximize>(bits, [&](auto f) {
        parallel_for(0, param.numel(), kOptimGrain, [&](int64_t s, int64_t e) {
          step_range_simd<T>(rule, f, gsign, s, e, seq, param.data<T>(), ptr_or_null<T>(slots)...);
        });
      });
    } else {
      with_fixed_flags<R::kFlags>(bits, [&](auto f) {
        parallel_for(0, param.numel(), kOptimGrain, [&](int64_t s, int64_t e) {
          step_range<T, false>(rule, f, T(1), s, e, seq, param.data<T>(), ptr_or_null<T>(slots)...);
        });
      });
    }
  });
}

void cpu_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c) {
  step<optim::SgdRule>(c, param, grad, buf);
}

void cpu_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                   const Tensor& max_exp_avg_sq, const AdamCoeffs& c) {
  step<optim::AdamRule>(c, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq);
}

void cpu_adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                       const AdadeltaCoeffs& c) {
  step<optim::AdadeltaRule, /*kSimd=*/true>(c, param, grad, square_avg, acc_delta);
}

void cpu_adagrad_step(const Tensor& param, const Tensor& grad, const Tensor& state_sum, const AdagradCoeffs& c) {
  step<optim::AdagradRule>(c, param, grad, state_sum);
}

void cpu_rmsprop_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& momentum_buffer,
                      const Tensor& grad_avg, const RmspropCoeffs& c) {
  step<optim::RmspropRule>(c, param, grad, square_avg, momentum_buffer, grad_avg);
}

void cpu_adamax_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                     const AdamaxCoeffs& c) {
  step<optim::AdamaxRule>(c, param, grad, exp_avg, exp_inf);
}

void cpu_nadam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const NadamCoeffs& c) {
  step<optim::NadamRule>(c, param, grad, exp_avg, exp_avg_sq);
}

void cpu_radam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const RadamCoeffs& c) {
  step<optim::RadamRule>(c, param, grad, exp_avg, exp_avg_sq);
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
