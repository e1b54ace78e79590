#pragma once
// Element types, PyTorch's promotion lattice, and the dtype switch used by every kernel.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include "tinytorch/half.h"

namespace tt {

// Order matters: it is the index into promotion and dispatch tables (and Python's dtype codes,
// which is why the later integer types follow the floating ones). UInt16/32/64 are storage types,
// as in PyTorch: casts, copies, fills, indexing and shape ops, not arithmetic.
enum class DType : int8_t { Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64,
                            Int8, Int16, UInt16, UInt32, UInt64 };
constexpr int kNumDTypes = 13;

size_t itemsize(DType d);
const char* dtype_name(DType d);  // "float32", as Python spells it
inline bool is_floating(DType d) { return d >= DType::Float16 && d <= DType::Float64; }
inline bool is_integral(DType d, bool include_bool) {
  return (d != DType::Bool && !is_floating(d)) || (include_bool && d == DType::Bool);
}
// uint16/uint32/uint64: no arithmetic kernels (PyTorch's "limited support" unsigned types).
inline bool is_storage_only(DType d) { return d >= DType::UInt16; }
// torch.promote_types
DType promote_types(DType a, DType b);

template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::UInt64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };

// The type arithmetic happens in: float for 16-bit floats, else the type itself.
template <class T> struct opmath { using type = T; };
template <> struct opmath<Half> { using type = float; };
template <> struct opmath<BFloat16> { using type = float; };
template <class T> using opmath_t = typename opmath<T>::type;

// The type sums accumulate in: float32 and 16-bit floats in float, integers in int64.
template <class T> struct acc { using type = T; };
template <> struct acc<Half> { using type = float; };
template <> struct acc<BFloat16> { using type = float; };
template <> struct acc<bool> { using type = int64_t; };
template <> struct acc<uint8_t> { using type = int64_t; };
template <> struct acc<int8_t> { using type = int64_t; };
template <> struct acc<int16_t> { using type = int64_t; };
template <> struct acc<int32_t> { using type = int64_t; };
template <class T> using acc_t = typename acc<T>::type;

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

#define TT_CASES_STORAGE_ONLY(...)        \
  TT_CASE(UInt16, uint16_t, __VA_ARGS__)  \
  TT_CASE(UInt32, uint32_t, __VA_ARGS__)  \
  TT_CASE(UInt64, uint64_t, __VA_ARGS__)

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
