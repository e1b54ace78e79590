#pragma once
// Helpers the op-layer families share (reduce, norm): dtype checks and the (O, L, I) view.
#include "tinytorch/error.h"
#include "tinytorch/tensor.h"

namespace tt {

// A complex input raises NotImplementedError, which the Python op families answer with the op's
// complex composite where there is one (tinytorch/_composites/complex.py).
inline void check_floating(const Tensor& x, const char* op, const char* what) {
  if (is_complex(x.dtype())) throw_unsupported_dtype(op, x.dtype());
  TT_CHECK_TYPE(is_floating(x.dtype()), op, ": ", what, " Got: ", dtype_name(x.dtype()));
}

// (O, L, I) view of x contiguous around `dim`.
inline Tensor view_around(const Tensor& x, int64_t dim) {
  int64_t O = 1, I = 1;
  for (int64_t d = 0; d < dim; ++d) O *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) I *= x.size(d);
  return x.contiguous().view({O, x.dim() == 0 ? 1 : x.size(dim), I});
}

}  // namespace tt
