#pragma once
// Element types, PyTorch's promotion lattice, and the dtype switch used by every kernel.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include "tinytorch/complex.h"
#include "tinytorch/float8.h"
#include "tinytorch/half.h"

namespace tt {

// Order matters: it is the index into promotion and dispatch tables (and Python's dtype codes,
// which is why the types added later follow the first floating ones). UInt16/32/64 and the
// float8 types are storage types, as in PyTorch: casts, copies, fills, indexing and shape ops,
// not arithmetic. Complex types are stored the same way; their arithmetic is composed over
// their real view (complex.h).
enum class DType : int8_t { Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64,
                            Int8, Int16, UInt16, UInt32, UInt64, Float8_e4m3fn, Float8_e5m2,
                            Complex64, Complex128 };
constexpr int kNumDTypes = 17;

size_t itemsize(DType d);
const char* dtype_name(DType d);  // "float32", as Python spells it
// The floating types kernels compute in (float8 is floating too, but only stored: is_float8).
inline bool is_floating(DType d) { return d >= DType::Float16 && d <= DType::Float64; }
inline bool is_float8(DType d) { return d == DType::Float8_e4m3fn || d == DType::Float8_e5m2; }
inline bool is_complex(DType d) { return d == DType::Complex64 || d == DType::Complex128; }
inline bool is_integral(DType d, bool include_bool) {
  return d == DType::Bool ? include_bool : !is_floating(d) && !is_float8(d) && !is_complex(d);
}
inline bool is_unsigned(DType d) { return d == DType::UInt8 || (d >= DType::UInt16 && d <= DType::UInt64); }
// uint16/32/64, float8 and complex: no arithmetic kernels (the first two are PyTorch's "limited
// support" types; complex arithmetic is composed in Python).
inline bool is_storage_only(DType d) { return d >= DType::UInt16; }
// torch.promote_types
DType promote_types(DType a, DType b);

// Every dtype and the C++ type its elements are stored as.
#define TT_FOR_EACH_DTYPE(X)                                                                       \
  X(Bool, bool) X(UInt8, uint8_t) X(Int8, int8_t) X(Int16, int16_t) X(Int32, int32_t) X(Int64, int64_t) \
  X(UInt16, uint16_t) X(UInt32, uint32_t) X(UInt64, uint64_t) X(Float16, Half) X(BFloat16, BFloat16)  \
  X(Float32, float) X(Float64, double) X(Float8_e4m3fn, Float8_e4m3fn) X(Float8_e5m2, Float8_e5m2)  \
  X(Complex64, Complex64) X(Complex128, Complex128)

template <class T> struct dtype_of;
#define TT_DTYPE_OF_(NAME, T) \
  template <> struct dtype_of<T> { static constexpr DType value = DType::NAME; };
TT_FOR_EACH_DTYPE(TT_DTYPE_OF_)
#undef TT_DTYPE_OF_

// The type arithmetic happens in: float for 16- and 8-bit floats, else the type itself.
template <class T> struct opmath { using type = T; };
template <> struct opmath<Half> { using type = float; };
template <> struct opmath<BFloat16> { using type = float; };
template <> struct opmath<Float8_e4m3fn> { using type = float; };
template <> struct opmath<Float8_e5m2> { using type = float; };
template <class T> using opmath_t = typename opmath<T>::type;


[[noreturn]] void throw_unsupported_dtype(const char* op, DType d);

}  // namespace tt

#define TT_CASE(DT, T, ...) \
  case ::tt::DType::DT: {   \
    using scalar_t = T;     \
    return __VA_ARGS__();   \
  }

#define TT_CASES_FLOATING(...)                 \
  TT_CASE(Float32, float, __VA_ARGS__)         \
  TT_CASE(Float64, double, __VA_ARGS__)        \
  TT_CASE(Float16, ::tt::Half, __VA_ARGS__)    \
  TT_CASE(BFloat16, ::tt::BFloat16, __VA_ARGS__)

#define TT_CASES_INTEGRAL(...)          \
  TT_CASE(UInt8, uint8_t, __VA_ARGS__)  \
  TT_CASE(Int8, int8_t, __VA_ARGS__)    \
  TT_CASE(Int16, int16_t, __VA_ARGS__)  \
  TT_CASE(Int32, int32_t, __VA_ARGS__)  \
  TT_CASE(Int64, int64_t, __VA_ARGS__)

#define TT_CASES_STORAGE_ONLY(...)                         \
  TT_CASE(UInt16, uint16_t, __VA_ARGS__)                   \
  TT_CASE(UInt32, uint32_t, __VA_ARGS__)                   \
  TT_CASE(UInt64, uint64_t, __VA_ARGS__)                   \
  TT_CASE(Float8_e4m3fn, ::tt::Float8_e4m3fn, __VA_ARGS__) \
  TT_CASE(Float8_e5m2, ::tt::Float8_e5m2, __VA_ARGS__)     \
  TT_CASE(Complex64, ::tt::Complex64, __VA_ARGS__)         \
  TT_CASE(Complex128, ::tt::Complex128, __VA_ARGS__)

// TT_DISPATCH_FLOATING(dtype, "op", [&] { kernel<scalar_t>(...); });
#define TT_DISPATCH_FLOATING(DTYPE, NAME, ...)                        \
  [&] {                                                               \
    switch (DTYPE) {                                                  \
      TT_CASES_FLOATING(__VA_ARGS__)                                  \
      default: ::tt::throw_unsupported_dtype(NAME, DTYPE);            \
    }                                                                 \
  }()

#define TT_DISPATCH_NUMERIC(DTYPE, NAME, ...)                         \
  [&] {                                                               \
    switch (DTYPE) {                                                  \
      TT_CASES_FLOATING(__VA_ARGS__)                                  \
      TT_CASES_INTEGRAL(__VA_ARGS__)                                  \
      default: ::tt::throw_unsupported_dtype(NAME, DTYPE);            \
    }                                                                 \
  }()

#define TT_DISPATCH_ALL(DTYPE, NAME, ...)                             \
  [&] {                                                               \
    switch (DTYPE) {                                                  \
      TT_CASES_FLOATING(__VA_ARGS__)                                  \
      TT_CASES_INTEGRAL(__VA_ARGS__)                                  \
      TT_CASE(Bool, bool, __VA_ARGS__)                                \
      default: ::tt::throw_unsupported_dtype(NAME, DTYPE);            \
    }                                                                 \
  }()

// Every dtype, the storage-only ones included: casts, copies, fills, item.
#define TT_DISPATCH_STORAGE(DTYPE, NAME, ...)                         \
  [&] {                                                               \
    switch (DTYPE) {                                                  \
      TT_CASES_FLOATING(__VA_ARGS__)                                  \
      TT_CASES_INTEGRAL(__VA_ARGS__)                                  \
      TT_CASES_STORAGE_ONLY(__VA_ARGS__)                              \
      TT_CASE(Bool, bool, __VA_ARGS__)                                \
      default: ::tt::throw_unsupported_dtype(NAME, DTYPE);            \
    }                                                                 \
  }()
