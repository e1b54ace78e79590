#pragma once
// The CPU elementwise iterator: walks an IterGeometry (tinytorch/iter.h), handing an inner
// loop of n elements with per-operand byte strides to the kernel.
#include <array>
#include <cstring>
#include "tinytorch/iter.h"
#include "tinytorch/parallel.h"
#include "tinytorch/tensor.h"

namespace tt::cpu {

// Walks the iteration space of an IterGeometry on the CPU, in parallel chunks.
template <int N>
class StridedIter : public IterGeometry<N> {
 public:
  using IterGeometry<N>::IterGeometry;
  using IterGeometry<N>::ndim;
  using IterGeometry<N>::numel;
  using IterGeometry<N>::shape;
  using IterGeometry<N>::strides;
  using IterGeometry<N>::base;

  // inner(char* const* ptrs, const int64_t* strides, int64_t n) for each run of the last dim.
  template <class Inner>
  void for_each(const Inner& inner, int64_t grain = kGrainSize) const {
    if (numel == 0) return;
    parallel_for(0, numel, grain, [&](int64_t b, int64_t e) { run_range(b, e, inner); });
  }

 private:
  // Rows after the first are reached by stepping a multi-index (an odometer), not by dividing
  // the linear index again: broadcast and transposed operands walk many short rows.
  template <class Inner>
  void run_range(int64_t begin, int64_t end, const Inner& inner) const {
    const int last = ndim - 1;
    const int64_t inner_n = shape[last];
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = strides[k][last];
    int64_t row = begin / inner_n, i0 = begin % inner_n;
    int64_t idx[kMaxDims] = {};
    std::array<char*, N> rowp, ptrs;  // rowp: element 0 of the current row
    for (int k = 0; k < N; ++k) rowp[k] = base[k];
    for (int d = last - 1; d >= 0 && row > 0; --d) {
      idx[d] = row % shape[d];
      row /= shape[d];
      for (int k = 0; k < N; ++k) rowp[k] += idx[d] * strides[k][d];
    }
    int64_t lin = begin;
    while (true) {
      const int64_t n = std::min(inner_n - i0, end - lin);
      for (int k = 0; k < N; ++k) ptrs[k] = rowp[k] + i0 * inner_strides[k];
      inner(ptrs.data(), inner_strides.data(), n);
      lin += n;
      if (lin >= end) return;
      i0 = 0;
      for (int d = last - 1; d >= 0; --d) {  // next row
        for (int k = 0; k < N; ++k) rowp[k] += strides[k][d];
        if (++idx[d] < shape[d]) break;
        for (int k = 0; k < N; ++k) rowp[k] -= shape[d] * strides[k][d];
        idx[d] = 0;
      }
    }
  }
};

// out[i] = f(in[i]) with Out/In element types; f works on whatever In/Out convert to.
template <class Out, class In, class F>
void unary_loop(const Tensor& in, const Tensor& out, const F& f) {
  StridedIter<2> it({&out, &in});
  it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const In* x = reinterpret_cast<const In*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(x[i]));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(f(*reinterpret_cast<const In*>(p[1] + i * s[1])));
    }
  });
}

// out[i] = f(a[i], b[i]); a scalar operand (stride 0) gets its own fast path.
template <class Out, class In, class F>
void binary_loop(const Tensor& a, const Tensor& b, const Tensor& out, const F& f) {
  StridedIter<3> it({&out, &a, &b});
  it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const In* x = reinterpret_cast<const In*>(p[1]);
    const In* y = reinterpret_cast<const In*>(p[2]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(x[i], y[i]));
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
      const In yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(x[i], yv));
    } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(In)) {
      const In xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(xv, y[i]));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(
            f(*reinterpret_cast<const In*>(p[1] + i * s[1]), *reinterpret_cast<const In*>(p[2] + i * s[2])));
    }
  });
}

// float32 unary_loop whose contiguous runs go to a vectorized kernel contig(x, out, n); strided
// runs use f.
template <class Contig, class F>
void unary_loop_f32(const Tensor& in, const Tensor& out, const Contig& contig, const F& f) {
  StridedIter<2> it({&out, &in});
  it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float))
      return contig(reinterpret_cast<const float*>(p[1]), reinterpret_cast<float*>(p[0]), n);
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<float*>(p[0] + i * s[0]) = f(*reinterpret_cast<const float*>(p[1] + i * s[1]));
  });
}

// float32 binary_loop whose runs with all three operands contiguous go to contig(a, b, out, n).
template <class Contig, class F>
void binary_loop_f32(const Tensor& a, const Tensor& b, const Tensor& out, const Contig& contig, const F& f) {
  StridedIter<3> it({&out, &a, &b});
  it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float) && s[2] == sizeof(float))
      return contig(reinterpret_cast<const float*>(p[1]), reinterpret_cast<const float*>(p[2]),
                    reinterpret_cast<float*>(p[0]), n);
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<float*>(p[0] + i * s[0]) =
          f(*reinterpret_cast<const float*>(p[1] + i * s[1]), *reinterpret_cast<const float*>(p[2] + i * s[2]));
  });
}

// out[i] = f(a[i], b[i], c[i]) with per-operand types, strided (used by where/clamp/optimizers).
template <class Out, class A, class B, class C, class F>
void ternary_loop(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out, const F& f) {
  StridedIter<4> it({&out, &a, &b, &c});
  it.for_each([&](char* const* p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(f(*reinterpret_cast<const A*>(p[1] + i * s[1]),
                                                                    *reinterpret_cast<const B*>(p[2] + i * s[2]),
                                                                    *reinterpret_cast<const C*>(p[3] + i * s[3])));
  });
}

}  // namespace tt::cpu
