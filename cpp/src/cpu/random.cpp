// CPU random kernels. Element i of a contiguous output uses philox4x32(seed, offset + i), so
// the numbers depend only on (seed, offset, i): the same for any thread count or chunking.
#include <cmath>
#include "loops.h"
#include "tinytorch/kernels/random.h"

namespace tt::cpu {
namespace {

constexpr int64_t kRandGrain = 4096;  // Philox costs ~10 multiply rounds per element

template <class F>
void for_blocks(int64_t n, PhiloxState st, const F& f) {  // f(i, 4 random words)
  parallel_for(0, n, kRandGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i, philox4x32(st.seed, st.offset + uint64_t(i)));
  });
}

// x: contiguous float (n) <- low + (high - low) * U[0, 1)
void cpu_uniform(const Tensor& x, double low, double high, PhiloxState st) {
  TT_DISPATCH_FLOATING(x.dtype(), "uniform_", [&] {
    scalar_t* o = x.data<scalar_t>();
    if constexpr (std::is_same_v<scalar_t, double>) {
      for_blocks(x.numel(), st, [&](int64_t i, auto r) { o[i] = low + (high - low) * uniform_double(r[0], r[1]); });
    } else {
      const float lo = float(low), range = float(high - low);
      for_blocks(x.numel(), st, [&](int64_t i, auto r) { o[i] = scalar_t(lo + range * uniform_float(r[0])); });
    }
  });
}

// x: contiguous float (n) <- mean + std * sqrt(-2 ln(1 - u1)) * cos(2 pi u2)
void cpu_normal(const Tensor& x, double mean, double std, PhiloxState st) {
  TT_DISPATCH_FLOATING(x.dtype(), "normal_", [&] {
    scalar_t* o = x.data<scalar_t>();
    if constexpr (std::is_same_v<scalar_t, double>) {
      for_blocks(x.numel(), st, [&](int64_t i, auto r) {
        double u1 = 1.0 - uniform_double(r[0], r[1]), u2 = uniform_double(r[2], r[3]);
        o[i] = mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      });
    } else {
      const float m = float(mean), s = float(std);
      for_blocks(x.numel(), st, [&](int64_t i, auto r) {
        float u1 = 1.0f - uniform_float(r[0]), u2 = uniform_float(r[1]);
        o[i] = scalar_t(m + s * std::sqrt(-2.0f * std::log(u1)) * std::cos(float(2.0 * M_PI) * u2));
      });
    }
  });
}

// x: contiguous (n) <- U < p, or U < probs[i] (probs contiguous, x's dtype)
void cpu_bernoulli(const Tensor& x, double p, const Tensor& probs, PhiloxState st) {
  TT_DISPATCH_ALL(x.dtype(), "bernoulli", [&] {
    using T = scalar_t;
    T* o = x.data<T>();
    const T one = T(1), zero = T(0);
    if (probs.defined()) {
      const T* pp = probs.data<T>();
      for_blocks(x.numel(), st, [&](int64_t i, auto r) {
        o[i] = uniform_double(r[0], r[1]) < double(opmath_t<T>(pp[i])) ? one : zero;
      });
    } else {
      for_blocks(x.numel(), st, [&](int64_t i, auto r) { o[i] = uniform_double(r[0], r[1]) < p ? one : zero; });
    }
  });
}

// x: contiguous (n) <- low + bits64 mod (high - low)
void cpu_randint(const Tensor& x, int64_t low, int64_t high, PhiloxState st) {
  const uint64_t range = uint64_t(high) - uint64_t(low);
  TT_DISPATCH_ALL(x.dtype(), "randint", [&] {
    scalar_t* o = x.data<scalar_t>();
    for_blocks(x.numel(), st, [&](int64_t i, auto r) {
      uint64_t v = ((uint64_t(r[0]) << 32) | r[1]) % range;
      int64_t w = int64_t(uint64_t(low) + v);
      if constexpr (std::is_same_v<scalar_t, bool>) o[i] = w != 0;
      else if constexpr (std::is_integral_v<scalar_t>) o[i] = static_cast<scalar_t>(w);
      else o[i] = scalar_t(static_cast<opmath_t<scalar_t>>(w));
    });
  });
}

// keys: int64 (n) <- 63 random bits
void cpu_random_keys(const Tensor& keys, PhiloxState st) {
  int64_t* o = keys.data<int64_t>();
  for_blocks(keys.numel(), st, [&](int64_t i, auto r) { o[i] = int64_t(((uint64_t(r[0]) << 32) | r[1]) >> 1); });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, uniform, normal, bernoulli, randint, random_keys)

}  // namespace tt::cpu
