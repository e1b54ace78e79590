#pragma once
// Helpers for the linalg, conv, pool, embedding, loss, optim, index and shape tests: random
// tensors in any dtype, float64 read-back, and tolerances per dtype. References in the tests are plain
// double-precision loops.
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>
#include "tinytorch/tensor.h"

namespace tt::testing {

inline const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64};

// Uniform [-1, 1) values rounded to `dtype` (the reference then reads the rounded values).
inline Tensor rand_tensor(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor t = Tensor::empty(shape, DType::Float64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  return t.to(dtype);
}

inline Tensor int_tensor(const Shape& shape, const std::vector<int64_t>& values, DType dtype = DType::Int64) {
  Tensor t = Tensor::empty(shape, DType::Int64);
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t.to(dtype);
}

// Row-major float64 copy of any tensor.
inline std::vector<double> to_vec(const Tensor& t) {
  Tensor c = t.to(DType::Float64, true).contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

// A `dtype` tensor of `shape` holding the row-major values v.
inline Tensor from_vec(const std::vector<double>& v, const Shape& shape, DType dtype) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.to(dtype);
}

// n standard-normal values already rounded to `dtype`, so data movement must reproduce them exactly.
inline std::vector<double> rounded(int64_t n, DType dtype, unsigned seed = 0) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return to_vec(from_vec(v, {n}, dtype));
}

inline double tol(DType d) {
  switch (d) {
    case DType::Float64: return 1e-10;
    case DType::Float32: return 2e-5;
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    default: return 0;
  }
}

// |got - want| <= tol * (1 + |want|) for each element; `scale` widens tolerance for long sums.
inline void expect_close(const Tensor& got, const std::vector<double>& want, DType d, double scale = 1.0,
                         const char* what = "") {
  std::vector<double> g = to_vec(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    double err = std::fabs(g[i] - want[i]), lim = tol(d) * scale * (1 + std::fabs(want[i]));
    if (!(err <= lim)) {
      ++bad;
      ADD_FAILURE() << what << " [" << dtype_name(d) << "] element " << i << ": got " << g[i] << ", want " << want[i];
    }
  }
}

}  // namespace tt::testing
