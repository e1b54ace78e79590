#pragma once
// The CPU elementwise iterator: walks N operands over one iteration shape (operand 0's,
// the output), with broadcast dims given stride 0 and adjacent dims coalesced, handing an
// inner loop of n elements with per-operand byte strides to the kernel.
#include <array>
#include <cstring>
#include "tinytorch/parallel.h"
#include "tinytorch/tensor.h"

namespace tt::cpu {

constexpr int kMaxDims = 16;

template <int N>
class StridedIter {
 public:
  explicit StridedIter(const std::array<const Tensor*, N>& ops) {
    const Tensor& out = *ops[0];
    ndim_ = static_cast<int>(out.dim());
    TT_CHECK(ndim_ <= kMaxDims, "tensors with more than ", kMaxDims, " dims are not supported");
    numel_ = out.numel();
    for (int d = 0; d < ndim_; ++d) shape_[d] = out.shape()[d];
    for (int k = 0; k < N; ++k) {
      const Tensor& t = *ops[k];
      base_[k] = static_cast<char*>(t.data_ptr());
      int64_t isz = static_cast<int64_t>(t.itemsize());
      int lead = ndim_ - static_cast<int>(t.dim());
      for (int d = 0; d < ndim_; ++d) {
        int td = d - lead;
        strides_[k][d] = (td < 0 || t.shape()[td] == 1) ? 0 : t.strides()[td] * isz;
      }
    }
    coalesce();
  }

  int64_t numel() const { return numel_; }
  bool is_contiguous(const std::array<int64_t, N>& itemsizes) const {
    if (ndim_ == 0) return true;
    if (ndim_ != 1) return false;
    for (int k = 0; k < N; ++k)
      if (strides_[k][0] != itemsizes[k]) return false;
    return true;
  }

  // inner(char* const* ptrs, const int64_t* strides, int64_t n) for each run of the last dim.
  template <class Inner>
  void for_each(const Inner& inner, int64_t grain = kGrainSize) const {
    if (numel_ == 0) return;
    parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { run_range(b, e, inner); });
  }

 private:
  void coalesce() {
    if (ndim_ <= 1) {
      if (ndim_ == 0) {  // a 0-dim tensor: one element
        ndim_ = 1;
        shape_[0] = 1;
        for (int k = 0; k < N; ++k) strides_[k][0] = 0;
      }
      return;
    }
    int out = 0;  // walk dims outermost -> innermost, merging each into the last kept one
    for (int d = 1; d < ndim_; ++d) {
      if (shape_[d] == 1) continue;  // size-1 dims never move a pointer
      bool mergeable = true;
      for (int k = 0; k < N; ++k) mergeable = mergeable && strides_[k][out] == strides_[k][d] * shape_[d];
      if (shape_[out] == 1 || mergeable) {
        shape_[out] *= shape_[d];
        for (int k = 0; k < N; ++k) strides_[k][out] = strides_[k][d];
      } else {
        ++out;
        shape_[out] = shape_[d];
        for (int k = 0; k < N; ++k) strides_[k][out] = strides_[k][d];
      }
    }
    ndim_ = out + 1;
  }

  template <class Inner>
  void run_range(int64_t begin, int64_t end, const Inner& inner) const {
    const int last = ndim_ - 1;
    const int64_t inner_n = shape_[last];
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = strides_[k][last];
    int64_t lin = begin;
    while (lin < end) {
      int64_t row = lin / inner_n, i0 = lin % inner_n;
      int64_t n = std::min(inner_n - i0, end - lin);
      std::array<char*, N> ptrs;
      for (int k = 0; k < N; ++k) ptrs[k] = base_[k] + i0 * strides_[k][last];
      for (int d = last - 1; d >= 0 && row > 0; --d) {
        int64_t idx = row % shape_[d];
        row /= shape_[d];
        for (int k = 0; k < N; ++k) ptrs[k] += idx * strides_[k][d];
      }
      inner(ptrs.data(), inner_strides.data(), n);
      lin += n;
    }
  }

  int ndim_ = 0;
  int64_t numel_ = 0;
  int64_t shape_[kMaxDims];
  int64_t strides_[N][kMaxDims];
  char* base_[N];
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
