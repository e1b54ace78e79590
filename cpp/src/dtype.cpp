#include "tinytorch/dtype.h"
#include "tinytorch/error.h"

namespace tt {

size_t itemsize(DType d) {
  switch (d) {
#define TT_ITEMSIZE_(NAME, T) \
    case DType::NAME: return sizeof(T);
    TT_FOR_EACH_DTYPE(TT_ITEMSIZE_)
#undef TT_ITEMSIZE_
  }
  throw std::invalid_argument("itemsize: unknown dtype");
}

const char* dtype_name(DType d) {
  static constexpr const char* names[kNumDTypes] = {"bool",    "uint8",    "int32",   "int64",  "float16",
                                                   "bfloat16", "float32", "float64", "int8",   "int16",
                                                   "uint16",  "uint32",   "uint64",  "float8_e4m3fn",
                                                   "float8_e5m2", "complex64", "complex128"};
  return names[static_cast<int>(d)];
}

namespace {
// PyTorch's lattice over the dtypes with arithmetic, in rank order b1 u1 i1 i2 i4 i8 f2 bf f4 f8.
constexpr DType kRanked[] = {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
                             DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
constexpr int kRanks = 10;
int rank(DType d) {
  for (int i = 0; i < kRanks; ++i)
    if (kRanked[i] == d) return i;
  return -1;
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  using D = DType;
  TT_CHECK(!is_float8(a) && !is_float8(b), "Promotion for Float8 Types is not supported, attempted to promote ",
           dtype_name(a), " and ", dtype_name(b));
  if (is_complex(a) || is_complex(b)) {  // complex wins; its precision is the wider of the two
    const DType other = is_complex(a) ? b : a;
    TT_CHECK(other < D::UInt16 || other > D::UInt64, "Promotion for uint16, uint32, uint64 types is not supported, "
             "attempted to promote ", dtype_name(a), " and ", dtype_name(b));
    return a == D::Complex128 || b == D::Complex128 || other == D::Float64 ? D::Complex128 : D::Complex64;
  }
  if (is_storage_only(a) || is_storage_only(b)) {  // as PyTorch: only with a floating type
    TT_CHECK(is_floating(a) || is_floating(b), "Promotion for uint16, uint32, uint64 types is not supported, "
             "attempted to promote ", dtype_name(a), " and ", dtype_name(b));
    return is_floating(a) ? a : b;
  }
  static constexpr D table[kRanks][kRanks] = {
      //          b1         u1         i1         i2         i4         i8         f2           bf           f4           f8
      /* b1 */ {D::Bool,    D::UInt8,  D::Int8,   D::Int16,  D::Int32,  D::Int64,  D::Float16,  D::BFloat16, D::Float32,  D::Float64},
      /* u1 */ {D::UInt8,   D::UInt8,  D::Int16,  D::Int16,  D::Int32,  D::Int64,  D::Float16,  D::BFloat16, D::Float32,  D::Float64},
      /* i1 */ {D::Int8,    D::Int16,  D::Int8,   D::Int16,  D::Int32,  D::Int64,  D::Float16,  D::BFloat16, D::Float32,  D::Float64},
      /* i2 */ {D::Int16,   D::Int16,  D::Int16,  D::Int16,  D::Int32,  D::Int64,  D::Float16,  D::BFloat16, D::Float32,  D::Float64},
      /* i4 */ {D::Int32,   D::Int32,  D::Int32,  D::Int32,  D::Int32,  D::Int64,  D::Float16,  D::BFloat16, D::Float32,  D::Float64},
      /* i8 */ {D::Int64,   D::Int64,  D::Int64,  D::Int64,  D::Int64,  D::Int64,  D::Float16,  D::BFloat16, D::Float32,  D::Float64},
      /* f2 */ {D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float32, D::Float32, D::Float64},
      /* bf */ {D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::Float32, D::BFloat16, D::Float32, D::Float64},
      /* f4 */ {D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32,  D::Float32,  D::Float32,  D::Float64},
      /* f8 */ {D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64,  D::Float64,  D::Float64,  D::Float64},
  };
  return table[rank(a)][rank(b)];
}

void throw_unsupported_dtype(const char* op, DType d) {
  if (is_complex(d))
    throw NotImplementedError(str_cat(op, ": not implemented for ", dtype_name(d), " (complex tensors support "
                                      "the ops listed in docs/api.md, \"Complex numbers\")"));
  if (is_storage_only(d))  // NotImplementedError, as PyTorch's for these types
    throw NotImplementedError(str_cat(op, ": not implemented for ", dtype_name(d), " (uint16, uint32, uint64 and "
                                      "float8 are storage types: cast to int64 or a floating dtype for arithmetic)"));
  throw TypeError(str_cat(op, ": unsupported dtype ", dtype_name(d)));
}

}  // namespace tt
