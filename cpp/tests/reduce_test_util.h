#pragma once
// Helpers for the reduce and norm tests: tensors from double vectors in any dtype, values read
// back as double, tolerances per dtype, and (A, B) cases stored transposed (non-contiguous).
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>
#include "tinytorch/tensor.h"

namespace tt::reduce_testing {

inline const DType kFloats[] = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64};
inline double tol(DType d) {
  switch (d) {
    case DType::Float64: return 1e-10;
    case DType::Float32: return 2e-5;
    case DType::Float16: return 4e-3;
    default: return 3e-2;
  }
}

inline Tensor from(const std::vector<double>& v, const Shape& shape, DType d) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.to(d);
}
// Values as double, contiguous, in logical order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(DType::Float64, true).contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}
inline std::vector<double> randn(int64_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i]))) << "at " << i;
}

// x: (A, B) stored transposed, so x.transpose is a non-contiguous view.
struct Case {
  Tensor x;             // (A, B), non-contiguous
  std::vector<double> r;  // its rounded values, row-major (A, B)
  int64_t A, B;
};
inline Case make_case(DType d, int64_t A, int64_t B, unsigned seed) {
  auto v = randn(A * B, seed);
  Tensor stored = from(v, {B, A}, d);  // (B, A) contiguous
  Case c{stored.transpose(0, 1), {}, A, B};
  c.r = values(c.x);
  return c;
}

}  // namespace tt::reduce_testing
