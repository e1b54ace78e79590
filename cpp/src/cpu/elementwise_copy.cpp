// CPU copy/cast between any dtypes and layouts.
#include <cstring>
#include "loops.h"
#include "tinytorch/kernels/elementwise.h"

namespace tt::cpu {
namespace {

template <class Dst, class Src>
void copy_typed(const Tensor& src, const Tensor& dst) {
  using M = opmath_t<Src>;  // float for the 16- and 8-bit floats
  StridedIter<2> it({&dst, &src});
  it.for_each([](char* const* p, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<Dst, Src>) {
      if (s[0] == sizeof(Dst) && s[1] == sizeof(Src)) {
        std::memcpy(p[0], p[1], static_cast<size_t>(n) * sizeof(Dst));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      M v;
      // a bool is read as its byte != 0: storage from outside (numpy, files) may hold other bytes
      if constexpr (std::is_same_v<Src, bool>) v = static_cast<M>(*reinterpret_cast<const uint8_t*>(p[1] + i * s[1]) != 0);
      else v = static_cast<M>(*reinterpret_cast<const Src*>(p[1] + i * s[1]));
      if constexpr (std::is_same_v<Dst, bool>) *reinterpret_cast<bool*>(p[0] + i * s[0]) = v != M(0);
      else if constexpr (!std::is_same_v<opmath_t<Dst>, Dst>)  // a 16- or 8-bit float: rounds from float
        *reinterpret_cast<Dst*>(p[0] + i * s[0]) = Dst(static_cast<float>(v));
      else *reinterpret_cast<Dst*>(p[0] + i * s[0]) = static_cast<Dst>(v);
    }
  });
}

void cpu_copy(const Tensor& src, const Tensor& dst) {
  TT_DISPATCH_STORAGE(dst.dtype(), "copy_", [&] {
    using Dst = scalar_t;
    TT_DISPATCH_STORAGE(src.dtype(), "copy_", [&] { copy_typed<Dst, scalar_t>(src, dst); });
  });
}

}  // namespace

TT_REGISTER_KERNEL(copy, CPU, cpu_copy)

}  // namespace tt::cpu
