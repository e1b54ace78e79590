#pragma once
// Indexing and sorting ops: argument checks, index conversion (bool masks -> nonzero), dtype
// handling and allocation, then the kernels in tinytorch/kernels/index.h.
#include <optional>
#include <utility>
#include <vector>
#include "tinytorch/kernels/index.h"

namespace tt {

using OptTensor = std::optional<Tensor>;  // None = a full slice in index()/index_put_()

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// Out-of-place forms clone self; src is cast to self's dtype.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, double value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, double value);
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor& masked_fill_(Tensor& x, const Tensor& mask, double value);
Tensor masked_select(const Tensor& x, const Tensor& mask);  // 1-D, mask broadcast with x
Tensor nonzero(const Tensor& x);                             // int64 (n, x.dim())
// x[indices]: advanced indexing with NumPy/PyTorch rules (int64/int32/uint8/bool indices).
Tensor index(const Tensor& x, const std::vector<OptTensor>& indices);
Tensor& index_put_(Tensor& x, const std::vector<OptTensor>& indices, const Tensor& values, bool accumulate);

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable = false);
Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable = false);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted);

}  // namespace tt
