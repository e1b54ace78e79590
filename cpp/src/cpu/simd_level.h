#pragma once
// Which hand-vectorized CPU path a kernel takes: the CPU's best, capped by the environment
// variable TINYTORCH_CPU_CAPABILITY=default|avx2|avx512 (as ATen's ATEN_CPU_CAPABILITY), so
// tests can run the AVX2 and baseline paths on an AVX-512 machine.
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TT_X86_SIMD 1
#define TT_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define TT_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))
#else
#define TT_X86_SIMD 0
#define TT_TARGET_AVX2
#define TT_TARGET_AVX512
#endif

namespace tt::cpu {

enum class SimdLevel { Default = 0, Avx2 = 1, Avx512 = 2 };

inline SimdLevel detect_simd_level() {
#if TT_X86_SIMD
  SimdLevel best = SimdLevel::Default;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = SimdLevel::Avx2;
  if (best == SimdLevel::Avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    best = SimdLevel::Avx512;
  const char* cap = std::getenv("TINYTORCH_CPU_CAPABILITY");
  SimdLevel want = best;
  if (cap && std::strcmp(cap, "default") == 0) want = SimdLevel::Default;
  else if (cap && std::strcmp(cap, "avx2") == 0) want = SimdLevel::Avx2;
  return want < best ? want : best;
#else
  return SimdLevel::Default;
#endif
}

// Read once per process.
inline SimdLevel simd_level() {
  static const SimdLevel level = detect_simd_level();
  return level;
}

// The copy of a kernel that simd_level() runs, of its AVX-512, AVX2 and baseline copies.
template <class Fn>
Fn simd_pick(Fn avx512, Fn avx2, Fn baseline) {
  const SimdLevel level = simd_level();
  return level == SimdLevel::Avx512 ? avx512 : level == SimdLevel::Avx2 ? avx2 : baseline;
}

// F_avx512, F_avx2 and F_default: the always-inline F (PARAMS) compiled for each level, as
// simd_pick's candidates; ARGS passes PARAMS on.
#define TT_SIMD_COPIES(F, PARAMS, ARGS)               \
  TT_TARGET_AVX512 void F##_avx512 PARAMS { F ARGS; } \
  TT_TARGET_AVX2 void F##_avx2 PARAMS { F ARGS; }     \
  void F##_default PARAMS { F ARGS; }

}  // namespace tt::cpu
