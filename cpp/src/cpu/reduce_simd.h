#pragma once
// float32 row kernels shared by reduce.cpp and norm.cpp, written with GCC vector
// extensions (8 lanes x 2 accumulators) so NaN-aware max/min vectorize; on x86-64 each is
// compiled for AVX-512, AVX2 and the baseline and picked at load time.
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TT_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TT_SIMD_CLONES
#endif

// Vectors are only passed between inlined helpers; the ABI note does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tt::cpu::simd {

typedef float f8 __attribute__((vector_size(32)));
typedef int32_t i8 __attribute__((vector_size(32)));

inline f8 load8(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline f8 splat8(float s) { return f8{s, s, s, s, s, s, s, s}; }

// max (kMax) or min of x[0..n); NaN if any element is NaN; -inf/+inf for n == 0.
template <bool kMax>
inline float extreme(const float* x, int64_t n) {
  const float init = kMax ? -INFINITY : INFINITY;
  f8 a = splat8(init), b = a;
  i8 nan = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const f8 u = load8(x + i), v = load8(x + i + 8);
    a = kMax ? (u > a ? u : a) : (u < a ? u : a);
    b = kMax ? (v > b ? v : b) : (v < b ? v : b);
    nan |= (u != u) | (v != v);
  }
  float r = init;
  bool has_nan = false;
  for (int k = 0; k < 8; ++k) {
    r = kMax ? std::fmax(r, std::fmax(a[k], b[k])) : std::fmin(r, std::fmin(a[k], b[k]));
    has_nan = has_nan || nan[k];
  }
  for (; i < n; ++i) {
    has_nan = has_nan || x[i] != x[i];
    r = kMax ? (x[i] > r ? x[i] : r) : (x[i] < r ? x[i] : r);
  }
  return has_nan ? NAN : r;
}

}  // namespace tt::cpu::simd
