#pragma once
// Ops on quantized weights (checks, shapes, the matvec/GEMM choice; kernels in kernels/quant.h).
#include "tinytorch/kernels/quant.h"

namespace tt {

// Bytes of one row of K values in format `qtype`; ValueError for an unsupported qtype or a K
// that is not a multiple of the block size.
int64_t quant_row_bytes(int64_t qtype, int64_t in_features);
// weight: (out_features, row_bytes) or flat uint8 -> (out_features, in_features) of `dtype`.
Tensor quant_dequantize(const Tensor& weight, int64_t qtype, int64_t out_features, int64_t in_features,
                        DType dtype);
// input: (..., in_features) float32/float16/bfloat16, weight as above, bias: (out_features) or
// undefined -> (..., out_features) in input's dtype: input @ dequantize(weight)^T + bias.
Tensor quant_linear(const Tensor& input, const Tensor& weight, int64_t qtype, int64_t out_features,
                    int64_t in_features, const Tensor& bias);

}  // namespace tt
