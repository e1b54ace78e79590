#pragma once
// Joining/shape ops and factories: cat/stack/flip/roll/repeat/eye are views plus the copy and
// fill kernels; tril/triu, arange and linspace have kernels in tinytorch/kernels/shape.h.
#include <vector>
#include "tinytorch/kernels/shape.h"

namespace tt {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims);
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);  // int64 (..., C)
Tensor arange(double start, double end, double step, DType dtype, Device device = Device());
Tensor arange(int64_t start, int64_t end, int64_t step, DType dtype, Device device = Device());  // exact
Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device = Device());
Tensor eye(int64_t n, int64_t m, DType dtype, Device device = Device());  // m < 0: m = n

}  // namespace tt
