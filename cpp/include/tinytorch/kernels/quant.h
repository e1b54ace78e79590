#pragma once
// Kernels on llama.cpp-quantized weights kept packed (block formats in tinytorch/quant_math.h).
// Operands arrive validated and contiguous; `qtype` is a code quant::block_format accepts.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// x: (M, K) float32/float16/bfloat16, w: (N, row_bytes) uint8 -> out: (M, N) in x's dtype,
// out = x @ dequantize(w)^T, each row's blocks dequantized in registers and summed in float32.
// Meant for small M (decode); the op layer sends large M through quant_dequantize + GEMM.
TT_DECLARE_KERNEL(quant_matvec, const Tensor& x, const Tensor& w, int64_t qtype, const Tensor& out)
// x: (M, K) float32, w: (N, row_bytes) uint8 -> out: (M, N) float32 = x @ dequantize(w)^T for
// large M (prefill): weight tiles dequantized and multiplied by a GEMM. CPU only (the op layer
// runs cuBLAS on dequantized tiles on the GPU).
TT_DECLARE_KERNEL(quant_gemm, const Tensor& x, const Tensor& w, int64_t qtype, const Tensor& out)
// w: (N, row_bytes) uint8 -> out: (N, K) floating, the dequantized rows.
TT_DECLARE_KERNEL(quant_dequantize, const Tensor& w, int64_t qtype, const Tensor& out)

// The CPU matvec's int8 activations (Q4_0/Q4_1/Q8_0 on AVX2, llama.cpp's numerics; off by
// default: x stays float32). tinytorch.backends.cpu.quantized.int8_activations sets it.
void set_quant_int8_activations(bool on);
bool quant_int8_activations();

}  // namespace tt
