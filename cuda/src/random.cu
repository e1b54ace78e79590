// CUDA random kernels. Element i of a contiguous output uses philox4x32(seed, offset + i) and the
// uint -> float conversions of tinytorch/kernels/random.h, the same host/device (TT_INLINE) code
// the CPU kernels (cpp/src/cpu/random.cpp, dropout.cpp) run, so both backends draw identical bits
// for the same generator state. The arithmetic on the draws uses __f*_rn/__d*_rn intrinsics so nvcc cannot
// contract it into FMAs: uniform, bernoulli, randint, random_keys and dropout are bit-equal to the
// CPU; normal differs only by the last-ulp differences of logf/cosf (log/cos) between libdevice
// and the host libm.
#include <cmath>
#include "tinytorch/cuda/loops.cuh"
#include "random_philox.cuh"
#include "tinytorch/kernels/random.h"

namespace tt::cuda {
namespace {

// x: contiguous float (n) <- low + (high - low) * U[0, 1)
template <class T>
struct UniformOp {
  T* o;
  float lo, range;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t, uint32_t, uint32_t) const {
    o[i] = T(__fadd_rn(lo, __fmul_rn(range, uniform_float(a))));
  }
};
struct UniformDoubleOp {
  double* o;
  double lo, range;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t, uint32_t) const {
    o[i] = __dadd_rn(lo, __dmul_rn(range, uniform_double(a, b)));
  }
};

void cuda_uniform(const Tensor& x, double low, double high, PhiloxState st) {
  TT_DISPATCH_FLOATING(x.dtype(), "uniform_", [&] {
    if constexpr (std::is_same_v<scalar_t, double>) {
      launch_philox(x, x.numel(), st, UniformDoubleOp{x.data<double>(), low, high - low});
    } else {
      launch_philox(x, x.numel(), st, UniformOp<scalar_t>{x.data<scalar_t>(), float(low), float(high - low)});
    }
  });
}

// x: contiguous float (n) <- mean + std * sqrt(-2 ln(1 - u1)) * cos(2 pi u2), evaluated in the
// CPU's order: mean + ((std * sqrt(.)) * cos(.))
template <class T>
struct NormalOp {
  T* o;
  float m, s;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t, uint32_t) const {
    const float u1 = __fsub_rn(1.0f, uniform_float(a)), u2 = uniform_float(b);
    const float rad = sqrtf(__fmul_rn(-2.0f, logf(u1)));
    const float c = cosf(__fmul_rn(float(2.0 * M_PI), u2));
    o[i] = T(__fadd_rn(m, __fmul_rn(__fmul_rn(s, rad), c)));
  }
};
struct NormalDoubleOp {
  double* o;
  double m, s;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t c, uint32_t d) const {
    const double u1 = __dsub_rn(1.0, uniform_double(a, b)), u2 = uniform_double(c, d);
    const double rad = sqrt(__dmul_rn(-2.0, log(u1)));
    const double cs = cos(__dmul_rn(2.0 * M_PI, u2));
    o[i] = __dadd_rn(m, __dmul_rn(__dmul_rn(s, rad), cs));
  }
};

void cuda_normal(const Tensor& x, double mean, double std, PhiloxState st) {
  TT_DISPATCH_FLOATING(x.dtype(), "normal_", [&] {
    if constexpr (std::is_same_v<scalar_t, double>) {
      launch_philox(x, x.numel(), st, NormalDoubleOp{x.data<double>(), mean, std});
    } else {
      launch_philox(x, x.numel(), st, NormalOp<scalar_t>{x.data<scalar_t>(), float(mean), float(std)});
    }
  });
}

// x: contiguous (n) <- U < p, or U < probs[i] (probs contiguous, x's dtype)
template <class T>
struct BernoulliOp {
  T* o;
  const T* probs;  // null: use p
  double p;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t, uint32_t) const {
    const double q = probs ? double(opmath_t<T>(probs[i])) : p;
    o[i] = uniform_double(a, b) < q ? T(1) : T(0);
  }
};

void cuda_bernoulli(const Tensor& x, double p, const Tensor& probs, PhiloxState st) {
  TT_DISPATCH_ALL(x.dtype(), "bernoulli", [&] {
    const scalar_t* pp = probs.defined() ? probs.data<scalar_t>() : nullptr;
    launch_philox(x, x.numel(), st, BernoulliOp<scalar_t>{x.data<scalar_t>(), pp, p});
  });
}

// x: contiguous (n) <- low + bits64 mod (high - low)
template <class T>
struct RandintOp {
  T* o;
  uint64_t low, range;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t, uint32_t) const {
    const int64_t w = int64_t(low + ((uint64_t(a) << 32) | b) % range);
    if constexpr (std::is_same_v<T, bool>) o[i] = w != 0;
    else if constexpr (std::is_integral_v<T>) o[i] = static_cast<T>(w);
    else o[i] = T(static_cast<opmath_t<T>>(w));
  }
};

void cuda_randint(const Tensor& x, int64_t low, int64_t high, PhiloxState st) {
  const uint64_t range = uint64_t(high) - uint64_t(low);
  TT_DISPATCH_ALL(x.dtype(), "randint", [&] {
    launch_philox(x, x.numel(), st, RandintOp<scalar_t>{x.data<scalar_t>(), uint64_t(low), range});
  });
}

// keys: int64 (n) <- 63 random bits
struct KeysOp {
  int64_t* o;
  __device__ void operator()(int64_t i, uint32_t a, uint32_t b, uint32_t, uint32_t) const {
    o[i] = int64_t(((uint64_t(a) << 32) | b) >> 1);
  }
};

void cuda_random_keys(const Tensor& keys, PhiloxState st) {
  launch_philox(keys, keys.numel(), st, KeysOp{keys.data<int64_t>()});
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, uniform, normal, bernoulli, randint, random_keys)

}  // namespace tt::cuda
