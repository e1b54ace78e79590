// Quantized-weight ops: argument checks, then the matvec kernel (few input rows) or tiles of
// the weight dequantized and multiplied by the GEMM kernel (many rows: prefill).
#include "tinytorch/ops/quant.h"
#include <algorithm>
#include "tinytorch/kernels/linalg.h"
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/quant_math.h"

namespace tt {

TT_DEFINE_KERNEL(quant_matvec)
TT_DEFINE_KERNEL(quant_dequantize)
TT_DEFINE_KERNEL(quant_gemm)

namespace {

// Input rows up to which the matvec kernel (weights decoded in registers, once per group of 8
// rows) is used; above, tiles of the weight are dequantized and multiplied by the GEMM kernel.
// CPU: measured crossover ~56 rows for a 1536x576 Q4_0 weight, one thread (bench/quant_bench.py
// --prefill); GPU: cuBLAS on dequantized tiles from 9 rows on (not yet measured).
int64_t matvec_max_rows(Device d) { return d.is_cuda() ? 8 : 48; }

// Dequantized weight elements per tile of the GPU's GEMM path (each tile is one cuBLAS launch);
// the CPU's quant_gemm kernel sizes its own per-thread tiles.
int64_t tile_elements() { return int64_t(1) << 24; }

// The weight as (out_features, row_bytes) after checking dtype and byte count.
Tensor weight_rows(const char* op, const Tensor& w, int64_t qtype, int64_t N, int64_t K) {
  TT_CHECK(w.defined(), op, ": undefined weight");
  TT_CHECK_TYPE(w.dtype() == DType::UInt8, op, ": packed weight must be uint8, got ", w.describe());
  TT_CHECK_VALUE(N >= 0 && K >= 0, op, ": negative out_features ", N, " or in_features ", K);
  int64_t row = quant_row_bytes(qtype, K);
  TT_CHECK_VALUE(w.numel() == N * row, op, ": packed weight ", w.describe(), " holds ", w.numel(),
                 " bytes, but out_features=", N, " x in_features=", K, " in qtype ", qtype, " needs ", N, " x ",
                 row, " = ", N * row, " bytes");
  TT_CHECK_VALUE(w.dim() == 1 || (w.dim() == 2 && w.size(0) == N), op, ": packed weight ", w.describe(),
                 " should be flat or (out_features=", N, ", ", row, ")");
  return w.contiguous().view({N, row});
}

}  // namespace

int64_t quant_row_bytes(int64_t qtype, int64_t K) {
  int64_t values = 0, bytes = 0;
  TT_CHECK_VALUE(quant::block_format(qtype, values, bytes), "quantized weight: unsupported qtype ", qtype,
                 " (supported GGML types: 2 Q4_0, 3 Q4_1, 8 Q8_0, 12 Q4_K, 14 Q6_K)");
  TT_CHECK_VALUE(K % values == 0, "quantized weight: in_features ", K, " is not a multiple of qtype ", qtype,
                 "'s block size ", values);
  return K / values * bytes;
}

Tensor quant_dequantize(const Tensor& weight, int64_t qtype, int64_t N, int64_t K, DType dtype) {
  Tensor w = weight_rows("quant_dequantize", weight, qtype, N, K);
  if (!is_floating(dtype)) throw_unsupported_dtype("quant_dequantize", dtype);
  Tensor out = Tensor::empty({N, K}, dtype, w.device());
  if (out.numel() > 0) quant_dequantize_kernel[w.device()](w, qtype, out);
  return out;
}

Tensor quant_linear(const Tensor& input, const Tensor& weight, int64_t qtype, int64_t N, int64_t K,
                    const Tensor& bias) {
  const char* op = "quantized linear";
  TT_CHECK(input.defined(), op, ": undefined input");
  Tensor w = weight_rows(op, weight, qtype, N, K);
  check_same_device(op, input, w);
  DType dt = input.dtype();
  TT_CHECK_TYPE(dt == DType::Float32 || dt == DType::Float16 || dt == DType::BFloat16, op,
                ": input must be float32, float16 or bfloat16, got ", input.describe());
  TT_CHECK_VALUE(input.dim() >= 1 && input.size(input.dim() - 1) == K, op, ": input ", input.describe(),
                 " should have last dimension in_features=", K);
  if (bias.defined()) {
    check_same_device(op, input, bias);
    TT_CHECK_TYPE(bias.dtype() == dt, op, ": bias ", bias.describe(), " should have the input's dtype ",
                  dtype_name(dt));
    TT_CHECK_VALUE(bias.dim() == 1 && bias.size(0) == N, op, ": bias ", bias.describe(),
                   " should have shape (out_features=", N, ")");
  }
  Shape shape(input.shape().begin(), input.shape().end() - 1);
  shape.push_back(N);
  int64_t M = 1;
  for (int64_t i = 0; i + 1 < input.dim(); ++i) M *= input.size(i);
  Tensor x = input.contiguous().view({M, K});
  Tensor out = Tensor::empty({M, N}, dt, x.device());
  if (out.numel() > 0 && K == 0) fill_(out, 0.0);
  if (out.numel() > 0 && K > 0) {
    if (M <= matvec_max_rows(x.device())) {
      quant_matvec_kernel[x.device()](x, w, qtype, out);
    } else {
      // The CPU GEMM converts 16-bit operands to float32 per call: convert x once and run float32
      // tiles; cuBLAS multiplies 16-bit tiles with float32 accumulation directly.
      DType ct = x.device().is_cuda() ? dt : DType::Float32;
      Tensor xc = x.to(ct), oc = ct == dt ? out : Tensor::empty({M, N}, ct, x.device());
      if (!x.device().is_cuda()) {
        quant_gemm_kernel[x.device()](xc, w, qtype, oc);  // per-thread tiles, each dequantized + sgemm
      } else {
        int64_t rows = std::min(std::max<int64_t>(tile_elements() / K / 64 * 64, 64), N);
        Tensor tile = Tensor::empty({rows, K}, ct, x.device());
        for (int64_t n0 = 0; n0 < N; n0 += rows) {
          int64_t r = std::min(rows, N - n0);
          Tensor t = tile.narrow(0, 0, r);
          quant_dequantize_kernel[x.device()](w.narrow(0, n0, r), qtype, t);
          GemmArgs g;  // oc[:, n0:n0+r] = xc (M, K) @ t^T (K, r)
          g.a = xc, g.b = t, g.c = oc.narrow(1, n0, r);
          g.trans_b = true;
          g.m = M, g.n = r, g.k = K;
          g.lda = K, g.ldb = K, g.ldc = N;
          gemm_kernel[x.device()](g);
        }
      }
      if (!oc.is_same(out)) out.copy_(oc);
    }
  }
  if (bias.defined()) binary_(BinaryOp::Add, out, bias, OpScalars{1.0});  // a = alpha
  return out.view(shape);
}

}  // namespace tt
