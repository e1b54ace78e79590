#pragma once
// The geometry of an elementwise operation over N operands, shared by the CPU and CUDA
// loops: operand 0 (the output) gives the iteration shape, the others broadcast to it (their
// broadcast dims get stride 0), and adjacent dims that are contiguous in every operand are
// merged, so most ops see one long dim.
#include <array>
#include "tinytorch/tensor.h"

namespace tt {

constexpr int kMaxDims = 16;

template <int N>
struct IterGeometry {
  int ndim = 0;
  int64_t numel = 0;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];  // in bytes
  char* base[N];

  explicit IterGeometry(const std::array<const Tensor*, N>& ops) {
    const Tensor& out = *ops[0];
    ndim = static_cast<int>(out.dim());
    TT_CHECK(ndim <= kMaxDims, "tensors with more than ", kMaxDims, " dims are not supported");
    numel = out.numel();
    for (int d = 0; d < ndim; ++d) shape[d] = out.shape()[d];
    for (int k = 0; k < N; ++k) {
      const Tensor& t = *ops[k];
      base[k] = static_cast<char*>(t.data_ptr());
      int64_t isz = static_cast<int64_t>(t.itemsize());
      int lead = ndim - static_cast<int>(t.dim());
      for (int d = 0; d < ndim; ++d) {
        int td = d - lead;
        strides[k][d] = (td < 0 || t.shape()[td] == 1) ? 0 : t.strides()[td] * isz;
      }
    }
    coalesce();
  }

  // True when every operand is dense with its own itemsize (one flat run).
  bool is_contiguous(const std::array<int64_t, N>& itemsizes) const {
    if (ndim != 1) return false;
    for (int k = 0; k < N; ++k)
      if (strides[k][0] != itemsizes[k]) return false;
    return true;
  }

 private:
  void coalesce() {
    if (ndim == 0) {  // a 0-dim tensor: one element
      ndim = 1;
      shape[0] = 1;
      for (int k = 0; k < N; ++k) strides[k][0] = 0;
      return;
    }
    int out = 0;  // walk dims outermost -> innermost, merging each into the last kept one
    for (int d = 1; d < ndim; ++d) {
      if (shape[d] == 1) continue;  // size-1 dims never move a pointer
      bool mergeable = true;
      for (int k = 0; k < N; ++k) mergeable = mergeable && strides[k][out] == strides[k][d] * shape[d];
      if (shape[out] == 1 || mergeable) {
        shape[out] *= shape[d];
        for (int k = 0; k < N; ++k) strides[k][out] = strides[k][d];
      } else {
        ++out;
        shape[out] = shape[d];
        for (int k = 0; k < N; ++k) strides[k][out] = strides[k][d];
      }
    }
    ndim = out + 1;
  }
};

}  // namespace tt
