// CPU indexing kernels: advanced-index offsets, index/index_put, gather/scatter, masked_fill,
// nonzero. Pure data movement copies raw bytes by element size, so one instantiation serves
// every dtype of that size; only accumulation dispatches on dtype (half types add in float).
#include <cstring>
#include <limits>
#include "loops.h"
#include "tinytorch/kernels/index.h"

namespace tt::cpu {
namespace {

constexpr int64_t kSerial = std::numeric_limits<int64_t>::max();  // grain that forces one chunk

[[noreturn]] void throw_oob(const char* op, int64_t idx, int64_t dim, int64_t size) {
  throw std::out_of_range(str_cat(op, ": index ", idx, " is out of bounds for dimension ", dim, " with size ", size));
}

// gather/scatter/scatter_add: PyTorch rejects negative indices there, with a RuntimeError.
inline int64_t check_index(int64_t v, int64_t dim, int64_t size) {
  if (v < 0 || v >= size)
    throw std::runtime_error(str_cat("index ", v, " is out of bounds for dimension ", dim, " with size ", size));
  return v;
}

inline int64_t wrap_index(const char* op, int64_t v, int64_t dim, int64_t size) {
  if (v < -size || v >= size) throw_oob(op, v, dim, size);
  return v < 0 ? v + size : v;
}

// indices[k]: (B) contiguous int64 -> offsets: (B) contiguous int64
void cpu_index_offsets(const std::vector<Tensor>& indices, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, const Tensor& offsets) {
  int64_t* off = offsets.data<int64_t>();
  const int64_t n = offsets.numel();
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) off[i] = 0;
    for (size_t k = 0; k < indices.size(); ++k) {
      const int64_t* ix = indices[k].data<int64_t>();
      for (int64_t i = b; i < e; ++i) off[i] += wrap_index("index", ix[i], dims[k], sizes[k]) * strides[k];
    }
  });
}

// src, offsets, out: one shape (src/offsets with stride-0 dims) -> out[i] = src[i + offsets[i]]
void cpu_index(const Tensor& src, const Tensor& offsets, const Tensor& out) {
  StridedIter<3> it({&out, &src, &offsets});
  dispatch_bytes(out.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    it.for_each([](char* const* p, const int64_t* s, int64_t n) {
      if (s[2] == 0 && s[0] == sizeof(U) && s[1] == sizeof(U)) {  // a contiguous row at one offset
        int64_t o = *reinterpret_cast<const int64_t*>(p[2]);
        std::memcpy(p[0], reinterpret_cast<const U*>(p[1]) + o, static_cast<size_t>(n) * sizeof(U));
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t o = *reinterpret_cast<const int64_t*>(p[2] + i * s[2]);
        *reinterpret_cast<U*>(p[0] + i * s[0]) = reinterpret_cast<const U*>(p[1] + i * s[1])[o];
      }
    });
  });
}

// dst, offsets, values: one shape -> dst[i + offsets[i]] (+)= values[i]
void cpu_index_put(const Tensor& dst, const Tensor& offsets, const Tensor& values, bool accumulate) {
  StridedIter<3> it({&dst, &offsets, &values});
  if (!accumulate) {  // duplicate indices: some value wins (as in PyTorch); parallel
    dispatch_bytes(dst.itemsize(), [&](auto tag) {
      using U = decltype(tag);
      it.for_each([](char* const* p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t o = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
          reinterpret_cast<U*>(p[0] + i * s[0])[o] = *reinterpret_cast<const U*>(p[2] + i * s[2]);
        }
      });
    });
    return;
  }
  TT_DISPATCH_ALL(dst.dtype(), "index_put_", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    it.for_each([](char* const* p, const int64_t* s, int64_t n) {  // serial: fixed summation order
      for (int64_t i = 0; i < n; ++i) {
        int64_t o = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
        T& d = reinterpret_cast<T*>(p[0] + i * s[0])[o];
        d = T(M(d) + M(*reinterpret_cast<const T*>(p[2] + i * s[2])));
      }
    }, kSerial);
  });
}

// A view of t's memory over `shape`, keeping t's strides except `zero_dim` (stride 0).
Tensor restride_to(const Tensor& t, const Shape& shape, int64_t zero_dim) {
  Shape strides = t.strides();
  if (zero_dim >= 0) strides[zero_dim] = 0;
  return Tensor(t.storage(), shape, strides, t.offset(), t.dtype());
}

// x: (..., N, ...), index: (..., J, ...) -> out: (..., J, ...)
void cpu_gather(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  Tensor xr = restride_to(x, index.shape(), dim);
  const int64_t size = x.shape()[dim], stride = x.strides()[dim];
  StridedIter<3> it({&out, &xr, &index});
  dispatch_bytes(out.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = check_index(*reinterpret_cast<const int64_t*>(p[2] + i * s[2]), dim, size);
        *reinterpret_cast<U*>(p[0] + i * s[0]) = reinterpret_cast<const U*>(p[1] + i * s[1])[v * stride];
      }
    });
  });
}

// self: (..., N, ...), index: (..., J, ...), src: >= index's shape -> self[.., index, ..] (+)= src
void cpu_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool add) {
  Tensor sr = restride_to(self, index.shape(), dim);
  Tensor vr = restride_to(src, index.shape(), -1);
  const int64_t size = self.shape()[dim], stride = self.strides()[dim];
  StridedIter<3> it({&sr, &index, &vr});
  TT_DISPATCH_ALL(self.dtype(), add ? "scatter_add" : "scatter", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    it.for_each([&](char* const* p, const int64_t* s, int64_t n) {  // serial: duplicates resolve in order
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = check_index(*reinterpret_cast<const int64_t*>(p[1] + i * s[1]), dim, size);
        T& d = reinterpret_cast<T*>(p[0] + i * s[0])[v * stride];
        T x = *reinterpret_cast<const T*>(p[2] + i * s[2]);
        d = add ? T(M(d) + M(x)) : x;
      }
    }, kSerial);
  });
}

template <class T> T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

// x: (...), mask: bool broadcastable to x -> x[mask] = value
void cpu_masked_fill(const Tensor& x, const Tensor& mask, double value) {
  StridedIter<2> it({&x, &mask});
  TT_DISPATCH_ALL(x.dtype(), "masked_fill_", [&] {
    const scalar_t v = from_double<scalar_t>(value);
    it.for_each([v](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        if (*reinterpret_cast<const bool*>(p[1] + i * s[1])) *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = v;
    });
  });
}

template <class T> inline bool nonzero_value(T v) { return opmath_t<T>(v) != opmath_t<T>(0); }

// x: contiguous (...) -> count
void cpu_count_nonzero(const Tensor& x, int64_t& count) {
  TT_DISPATCH_ALL(x.dtype(), "nonzero", [&] {
    const scalar_t* p = x.data<scalar_t>();
    int64_t c = 0;
    for (int64_t i = 0; i < x.numel(); ++i) c += nonzero_value(p[i]);
    count = c;
  });
}

// x: contiguous, d dims -> out: (count, d) int64 coordinates, row-major order
void cpu_nonzero(const Tensor& x, const Tensor& out) {
  const int64_t d = x.dim();
  TT_DISPATCH_ALL(x.dtype(), "nonzero", [&] {
    const scalar_t* p = x.data<scalar_t>();
    int64_t* o = out.data<int64_t>();
    std::vector<int64_t> coord(d, 0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (nonzero_value(p[i])) {
        for (int64_t k = 0; k < d; ++k) *o++ = coord[k];
      }
      for (int64_t k = d - 1; k >= 0; --k) {  // advance the row-major coordinate
        if (++coord[k] < x.shape()[k]) break;
        coord[k] = 0;
      }
    }
  });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, index_offsets, index, index_put, gather, scatter, masked_fill, count_nonzero, nonzero)

}  // namespace tt::cpu
