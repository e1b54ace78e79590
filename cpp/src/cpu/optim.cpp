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

// Rules whose float32 loop runs as the SIMD clones (step_range_simd).
template <template <class> class Rule>
constexpr bool kSimdRule = false;
template <>
constexpr bool kSimdRule<optim::AdadeltaRule> = true;

// The kernel entry of Rule: the arguments as kernels/optim.h declares them.
template <template <class> class Rule, class... Args>
void step_kernel(const Args&... args) {
  call_coeffs_first([](const auto&... a) { step<Rule, kSimdRule<Rule>>(a...); }, args...);
}

}  // namespace

#define TT_REGISTER_STEP(NAME, RULE) TT_REGISTER_KERNEL(NAME, CPU, step_kernel<optim::RULE>)
TT_OPTIM_STEP_RULES(TT_REGISTER_STEP)
#undef TT_REGISTER_STEP

}  // namespace tt::cpu
