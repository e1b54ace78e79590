#include "tinytorch/dtype.h"
#include "tinytorch/error.h"

namespace tt {

size_t itemsize(DType d) {
  static constexpr size_t sizes[kNumDTypes] = {1, 1, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(d)];
}

const char* dtype_name(DType d) {
  static constexpr const char* names[kNumDTypes] = {"bool",    "uint8",    "int32",   "int64",
                                                   "float16", "bfloat16", "float32", "float64"};
  return names[static_cast<int>(d)];
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // PyTorch's table restricted to our dtypes: b1 u1 i4 i8 f2 bf f4 f8
  using D = DType;
  static constexpr D table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {D::Bool, D::UInt8, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* u1 */ {D::UInt8, D::UInt8, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* i4 */ {D::Int32, D::Int32, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* i8 */ {D::Int64, D::Int64, D::Int64, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
      /* f2 */ {D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float32, D::Float32, D::Float64},
      /* bf */ {D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::Float32, D::BFloat16, D::Float32, D::Float64},
      /* f4 */ {D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float64},
      /* f8 */ {D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

void throw_unsupported_dtype(const char* op, DType d) {
  throw TypeError(str_cat(op, ": unsupported dtype ", dtype_name(d)));
}

}  // namespace tt
