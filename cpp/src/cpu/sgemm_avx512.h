#pragma once
// Our AVX-512 float32 GEMM (OpenBLAS picks its AVX2 kernels on AMD Zen 4/5, ~half the speed).
// Call only when sgemm_avx512_enabled().
#include <cstdint>

namespace tt::cpu {

// AVX-512 available, not capped by TINYTORCH_CPU_CAPABILITY, not disabled by
// TINYTORCH_NO_AVX512_GEMM.
bool sgemm_avx512_enabled();

// C (m, n) = alpha * op(A) @ op(B) + beta * C on the calling thread (BLAS row-major meaning of
// ta/tb/lda/ldb/ldc; beta == 0 never reads C). Every C entry sums its k products in one fixed
// order whatever m and n, so splitting C over threads does not change results.
void sgemm_avx512(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Small products read in place, nothing packed: C (m, n) (+)= A @ B with A[i, p] = a[i*rsa + p*csa]
// (any strides: a transposed view works) and B (k, n) row-major, rows ldb apart.
void sgemm_avx512_small(int64_t m, int64_t n, int64_t k, const float* a, int64_t rsa, int64_t csa, const float* b,
                        int64_t ldb, float* c, int64_t ldc, bool accumulate);

}  // namespace tt::cpu
