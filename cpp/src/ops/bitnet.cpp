// BitNet b1.58 ops: argument checks and allocation, then the packed ternary kernel.
#include "tinytorch/ops/bitnet.h"

namespace tt {

TT_DEFINE_KERNEL(bitnet_matmul)

Tensor bitnet_matmul(const Tensor& q, const Tensor& packed, const Tensor& mult) {
  TT_CHECK(q.defined() && packed.defined() && mult.defined(), "bitnet_matmul: undefined tensor argument");
  check_same_device("bitnet_matmul", q, packed);
  check_same_device("bitnet_matmul", q, mult);
  TT_CHECK_TYPE(q.dtype() == DType::Float32, "bitnet_matmul: q must be float32 (int8 values), got ", q.describe());
  TT_CHECK_TYPE(packed.dtype() == DType::UInt8, "bitnet_matmul: packed must be uint8, got ", packed.describe());
  TT_CHECK_TYPE(mult.dtype() == DType::Float32, "bitnet_matmul: mult must be float32, got ", mult.describe());
  TT_CHECK_VALUE(q.dim() == 2 && packed.dim() == 2, "bitnet_matmul: expected q (M, K) and packed (N, ceil(K/4)), got ",
                 q.describe(), " and ", packed.describe());
  const int64_t M = q.size(0), K = q.size(1), N = packed.size(0);
  TT_CHECK_VALUE(packed.size(1) == (K + 3) / 4, "bitnet_matmul: packed ", packed.describe(), " needs ", (K + 3) / 4,
                 " bytes per row for K = ", K);
  TT_CHECK_VALUE(mult.dim() == 1 && mult.size(0) == M, "bitnet_matmul: mult must be (", M, "), got ",
                 mult.describe());
  Tensor out = Tensor::empty({M, N}, DType::Float32, q.device());
  if (M == 0 || N == 0) return out;
  bitnet_matmul_kernel[q.device()](q.contiguous(), packed.contiguous(), mult.contiguous(), out);
  return out;
}

}  // namespace tt
