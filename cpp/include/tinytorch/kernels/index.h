#pragma once
// Indexing and sorting kernel families. Kernels receive validated operands (shapes checked,
// index tensors int64, outputs allocated by the op layer). Index *values* can only be checked
// where the data is, so the kernels bounds-check them and throw IndexError (std::out_of_range).
#include <cstddef>
#include <cstdint>
#include <vector>
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// A 16-byte element (complex128) as the index kernels move it.
struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

// Calls f(U{}) with U the unsigned integer type of the element size (Bytes16 for 16): the kernels
// that only move elements need one instantiation per size, not per dtype (both backends' index kernels).
template <class F>
void dispatch_bytes(size_t itemsize, const F& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Bytes16{});
    default: throw std::runtime_error(str_cat("unsupported element size ", itemsize));
  }
}

// Advanced indexing, step 1. indices: k int64 tensors of one (broadcast) shape B;
// sizes/strides: the indexed dims of x (size and element stride each);
// offsets: int64 (B) <- sum_k wrap(indices[k]) * strides[k]. IndexError naming the index,
// its dim (dims[k]) and size when an index is out of [-size, size).
TT_DECLARE_KERNEL(index_offsets, const std::vector<Tensor>& indices, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, const Tensor& offsets)
// Advanced indexing, step 2. src: x restrided to out's shape (indexed dims stride 0),
// offsets: int64 expanded to out's shape -> out[i] = src[i + offsets[i]] (offsets in elements).
TT_DECLARE_KERNEL(index, const Tensor& src, const Tensor& offsets, const Tensor& out)
// dst[i + offsets[i]] = values[i] (or += when accumulate; then serial, so deterministic).
// dst: the target restrided to the iteration shape; offsets and values expanded to it.
TT_DECLARE_KERNEL(index_put, const Tensor& dst, const Tensor& offsets, const Tensor& values, bool accumulate)
// x: (..., n_dim, ...), index: int64 with index.size(d) <= x.size(d) for d != dim -> out: index's shape,
// out[..., j, ...] = x[..., index[..., j, ...], ...]
TT_DECLARE_KERNEL(gather, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out)
// self[..., index[i], ...] = src[i] (add: +=) over index's shape; src.size(d) >= index.size(d). Serial.
TT_DECLARE_KERNEL(scatter, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool add)
// x[mask] = value in place; mask bool, broadcastable to x.
TT_DECLARE_KERNEL(masked_fill, const Tensor& x, const Tensor& mask, double value)
// count = number of nonzero elements of x (any dtype).
TT_DECLARE_KERNEL(count_nonzero, const Tensor& x, int64_t& count)
// x: any shape (ndim d) -> out: int64 (count, d), coordinates of nonzeros in row-major order.
TT_DECLARE_KERNEL(nonzero, const Tensor& x, const Tensor& out)

// Sort along the last dim of a contiguous x: (R, n) -> values (R, n), indices int64 (R, n).
// NaN is the largest value; equal keys keep their order (always stable).
TT_DECLARE_KERNEL(sort, const Tensor& x, bool descending, const Tensor& values, const Tensor& indices)
// Top k along the last dim of a contiguous x: (R, n) -> values (R, k), indices int64 (R, k), sorted.
TT_DECLARE_KERNEL(topk, const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices)

}  // namespace tt
