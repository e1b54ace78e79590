#pragma once
// Host side of tma.cuh: the CUtensorMap of a 16-bit (B, heads, L, E) operand (element strides sb,
// sh, sl; E contiguous) whose TMA boxes are (64 columns, `rows` rows) in the 128-byte swizzle, the
// shared-memory layout wgmma.cuh reads. cuTensorMapEncodeTiled is a driver entry point, found
// through the runtime (no link against libcuda).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cstdint>

namespace tt::cuda {

// False where the driver refuses the layout (the caller then takes another kernel).
inline bool tma_map_16bit(CUtensorMap* map, const void* base, bool bf16, int64_t B, int64_t heads, int64_t L,
                          int64_t E, int64_t sb, int64_t sh, int64_t sl, int rows) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) return false;
  cuuint64_t dims[4] = {cuuint64_t(E), cuuint64_t(L), cuuint64_t(heads), cuuint64_t(B)};
  cuuint64_t strides[3] = {cuuint64_t(sl) * 2, cuuint64_t(sh) * 2, cuuint64_t(sb) * 2};  // bytes, dims 1..3
  cuuint32_t box[4] = {64, cuuint32_t(rows), 1, 1}, unit[4] = {1, 1, 1, 1};
  return encode(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                const_cast<void*>(base), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace tt::cuda
