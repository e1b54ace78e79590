#pragma once
// The CUDA elementwise iterator: grid-stride kernels over an IterGeometry (tinytorch/iter.h).
// Dense operands take a vectorized path (16-byte loads and stores when aligned); others compute
// each operand's byte offset from the linear index. Functors take and return element types
// (convert to opmath inside), e.g.  gpu_binary<T, T>(a, b, out, [] __device__ (T x, T y) {...}).
#include <cstdint>
#include "tinytorch/cuda/common.h"
#include "tinytorch/cuda/int_divider.h"
#include "tinytorch/iter.h"

namespace tt::cuda {

constexpr int kThreads = 256;

// Byte offset of each operand from a linear index. Below 2^31 elements the index math is 32-bit
// with precomputed dividers (the common case); larger iterations fall back to 64-bit division.
template <int N>
struct OffsetCalc {
  int ndim;
  bool small;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];
  IntDivider div[kMaxDims];

  explicit OffsetCalc(const IterGeometry<N>& g) : ndim(g.ndim), small(g.numel < (int64_t(1) << 31)) {
    for (int d = 0; d < ndim; ++d) {
      shape[d] = g.shape[d];
      if (small) div[d] = IntDivider(static_cast<uint32_t>(g.shape[d]));
      for (int k = 0; k < N; ++k) strides[k][d] = g.strides[k][d];
    }
  }

  __device__ __forceinline__ void offsets(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (small) {
      uint32_t l = static_cast<uint32_t>(linear);
      for (int d = ndim - 1; d >= 0; --d) {
        uint32_t q = div[d].div(l);
        int64_t idx = l - q * div[d].divisor;
        l = q;
#pragma unroll
        for (int k = 0; k < N; ++k) off[k] += idx * strides[k][d];
      }
      return;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t idx = linear % shape[d];
      linear /= shape[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[k][d];
    }
  }
};

template <int N>
struct Pointers {
  char* p[N];
};

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

#define TT_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// ---------------------------------------------------------------- unary: out = f(a)

template <class Out, class A, class F>
__global__ void unary_strided_kernel(int64_t n, OffsetCalc<2> oc, Pointers<2> p, F f) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[2];
    oc.offsets(i, off);
    *reinterpret_cast<Out*>(p.p[0] + off[0]) = f(*reinterpret_cast<const A*>(p.p[1] + off[1]));
  }
}

template <class Out, class A, int V, class F>
__global__ void unary_dense_kernel(int64_t n, Out* out, const A* a, F f) {
  int64_t nvec = n / V;
  TT_GRID_STRIDE(i, nvec) {
    Vec<A, V> x = reinterpret_cast<const Vec<A, V>*>(a)[i];
    Vec<Out, V> y;
#pragma unroll
    for (int j = 0; j < V; ++j) y.v[j] = f(x.v[j]);
    reinterpret_cast<Vec<Out, V>*>(out)[i] = y;
  }
  TT_GRID_STRIDE(i, n - nvec * V) { out[nvec * V + i] = f(a[nvec * V + i]); }
}

// Strided operands whose innermost dim is dense (or broadcast) in each: V elements per thread, one
// offset computation per V and 16-byte accesses (transposed copies, bias broadcasts). bcast bit k:
// operand k's inner stride is 0, so its one element is read and repeated.
template <class T, int V>
__device__ __forceinline__ Vec<T, V> load_inner(const char* p, bool bcast) {
  if (!bcast) return *reinterpret_cast<const Vec<T, V>*>(p);
  Vec<T, V> x;
  T v = *reinterpret_cast<const T*>(p);
#pragma unroll
  for (int j = 0; j < V; ++j) x.v[j] = v;
  return x;
}

template <class Out, class A, int V, class F>
__global__ void unary_inner_vec_kernel(int64_t nvec, OffsetCalc<2> oc, Pointers<2> p, unsigned bcast, F f) {
  TT_GRID_STRIDE(i, nvec) {
    int64_t off[2];
    oc.offsets(i * V, off);
    Vec<A, V> x = load_inner<A, V>(p.p[1] + off[1], bcast & 2u);
    Vec<Out, V> y;
#pragma unroll
    for (int j = 0; j < V; ++j) y.v[j] = f(x.v[j]);
    *reinterpret_cast<Vec<Out, V>*>(p.p[0] + off[0]) = y;
  }
}

// ---------------------------------------------------------------- binary: out = f(a, b)

template <class Out, class A, class B, class F>
__global__ void binary_strided_kernel(int64_t n, OffsetCalc<3> oc, Pointers<3> p, F f) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[3];
    oc.offsets(i, off);
    *reinterpret_cast<Out*>(p.p[0] + off[0]) =
        f(*reinterpret_cast<const A*>(p.p[1] + off[1]), *reinterpret_cast<const B*>(p.p[2] + off[2]));
  }
}

template <class Out, class A, class B, int V, class F>
__global__ void binary_dense_kernel(int64_t n, Out* out, const A* a, const B* b, F f) {
  int64_t nvec = n / V;
  TT_GRID_STRIDE(i, nvec) {
    Vec<A, V> x = reinterpret_cast<const Vec<A, V>*>(a)[i];
    Vec<B, V> z = reinterpret_cast<const Vec<B, V>*>(b)[i];
    Vec<Out, V> y;
#pragma unroll
    for (int j = 0; j < V; ++j) y.v[j] = f(x.v[j], z.v[j]);
    reinterpret_cast<Vec<Out, V>*>(out)[i] = y;
  }
  TT_GRID_STRIDE(i, n - nvec * V) { out[nvec * V + i] = f(a[nvec * V + i], b[nvec * V + i]); }
}

template <class Out, class A, class B, int V, class F>
__global__ void binary_inner_vec_kernel(int64_t nvec, OffsetCalc<3> oc, Pointers<3> p, unsigned bcast, F f) {
  TT_GRID_STRIDE(i, nvec) {
    int64_t off[3];
    oc.offsets(i * V, off);
    Vec<A, V> x = load_inner<A, V>(p.p[1] + off[1], bcast & 2u);
    Vec<B, V> z = load_inner<B, V>(p.p[2] + off[2], bcast & 4u);
    Vec<Out, V> y;
#pragma unroll
    for (int j = 0; j < V; ++j) y.v[j] = f(x.v[j], z.v[j]);
    *reinterpret_cast<Vec<Out, V>*>(p.p[0] + off[0]) = y;
  }
}

// ---------------------------------------------------------------- ternary: out = f(a, b, c)

template <class Out, class A, class B, class C, class F>
__global__ void ternary_strided_kernel(int64_t n, OffsetCalc<4> oc, Pointers<4> p, F f) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[4];
    oc.offsets(i, off);
    *reinterpret_cast<Out*>(p.p[0] + off[0]) =
        f(*reinterpret_cast<const A*>(p.p[1] + off[1]), *reinterpret_cast<const B*>(p.p[2] + off[2]),
          *reinterpret_cast<const C*>(p.p[3] + off[3]));
  }
}

// ---------------------------------------------------------------- launchers

template <int N>
inline Pointers<N> pointers_of(const IterGeometry<N>& g) {
  Pointers<N> p;
  for (int k = 0; k < N; ++k) p.p[k] = g.base[k];
  return p;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

template <class T>
constexpr int vec_width() { return sizeof(T) >= 16 ? 1 : int(16 / sizeof(T)); }

// Whether the inner-vectorized kernels apply: the innermost dim's size is a multiple of V and each
// operand walks it densely (every vector start then aligned to V items: base and outer strides)
// or, except the output, not at all (stride 0: bcast bit k set).
template <int N>
bool inner_vectorizable(const IterGeometry<N>& g, const std::array<int64_t, N>& itemsizes, int V, unsigned& bcast) {
  int d = g.ndim - 1;
  bcast = 0;
  if (V <= 1 || d < 0 || g.shape[d] % V != 0) return false;
  for (int k = 0; k < N; ++k) {
    int64_t s = g.strides[k][d], vec_bytes = itemsizes[k] * V;
    if (s == 0 && k > 0) {
      bcast |= 1u << k;
      continue;
    }
    if (s != itemsizes[k] || reinterpret_cast<uintptr_t>(g.base[k]) % vec_bytes != 0) return false;
    for (int o = 0; o < d; ++o)
      if (g.strides[k][o] % vec_bytes != 0) return false;
  }
  return true;
}

template <class Out, class A, class F>
void gpu_unary(const Tensor& in, const Tensor& out, F f) {
  IterGeometry<2> g({&out, &in});
  if (g.numel == 0) return;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  constexpr int V = vec_width<Out>() < vec_width<A>() ? vec_width<Out>() : vec_width<A>();
  if (g.is_contiguous({sizeof(Out), sizeof(A)}) && aligned16(g.base[0]) && aligned16(g.base[1])) {
    unary_dense_kernel<Out, A, V><<<grid_for(g.numel, V), kThreads, 0, stream>>>(
        g.numel, reinterpret_cast<Out*>(g.base[0]), reinterpret_cast<const A*>(g.base[1]), f);
  } else if (unsigned bcast; inner_vectorizable<2>(g, {sizeof(Out), sizeof(A)}, V, bcast)) {
    unary_inner_vec_kernel<Out, A, V><<<grid_for(g.numel, V), kThreads, 0, stream>>>(
        g.numel / V, OffsetCalc<2>(g), pointers_of(g), bcast, f);
  } else {
    unary_strided_kernel<Out, A><<<grid_for(g.numel), kThreads, 0, stream>>>(g.numel, OffsetCalc<2>(g),
                                                                              pointers_of(g), f);
  }
  TT_CUDA_KERNEL_CHECK();
}

template <class Out, class A, class B, class F>
void gpu_binary(const Tensor& a, const Tensor& b, const Tensor& out, F f) {
  IterGeometry<3> g({&out, &a, &b});
  if (g.numel == 0) return;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  constexpr int VA = vec_width<A>() < vec_width<B>() ? vec_width<A>() : vec_width<B>();
  constexpr int V = vec_width<Out>() < VA ? vec_width<Out>() : VA;
  if (g.is_contiguous({sizeof(Out), sizeof(A), sizeof(B)}) && aligned16(g.base[0]) && aligned16(g.base[1]) &&
      aligned16(g.base[2])) {
    binary_dense_kernel<Out, A, B, V><<<grid_for(g.numel, V), kThreads, 0, stream>>>(
        g.numel, reinterpret_cast<Out*>(g.base[0]), reinterpret_cast<const A*>(g.base[1]),
        reinterpret_cast<const B*>(g.base[2]), f);
  } else if (unsigned bcast; inner_vectorizable<3>(g, {sizeof(Out), sizeof(A), sizeof(B)}, V, bcast)) {
    binary_inner_vec_kernel<Out, A, B, V><<<grid_for(g.numel, V), kThreads, 0, stream>>>(
        g.numel / V, OffsetCalc<3>(g), pointers_of(g), bcast, f);
  } else {
    binary_strided_kernel<Out, A, B><<<grid_for(g.numel), kThreads, 0, stream>>>(g.numel, OffsetCalc<3>(g),
                                                                                  pointers_of(g), f);
  }
  TT_CUDA_KERNEL_CHECK();
}

template <class Out, class A, class B, class C, class F>
void gpu_ternary(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out, F f) {
  IterGeometry<4> g({&out, &a, &b, &c});
  if (g.numel == 0) return;
  DeviceGuard guard(out.device());
  ternary_strided_kernel<Out, A, B, C><<<grid_for(g.numel), kThreads, 0, current_stream(out.device().index)>>>(
      g.numel, OffsetCalc<4>(g), pointers_of(g), f);
  TT_CUDA_KERNEL_CHECK();
}

}  // namespace tt::cuda
