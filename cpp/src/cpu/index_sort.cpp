// CPU sort/topk along the last dim of a contiguous (R, n) tensor; rows in parallel.
// Ordering: NaN is larger than every number (as in PyTorch); ties keep input order.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
#include "tinytorch/kernels/index.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

template <class M> inline bool is_nan(M v) {
  if constexpr (std::is_floating_point_v<M>) return std::isnan(v);
  else return false;
}
// a before b in ascending (NaN last) or descending (NaN first) order.
template <class M> inline bool before(M a, M b, bool descending) {
  if (descending) return (is_nan(a) && !is_nan(b)) || a > b;
  return (!is_nan(a) && is_nan(b)) || a < b;
}

// Rows of x: (R, n) in parallel: f(r, row, key, perm) with key[j] = row[j] in opmath_t and
// perm = 0, 1, ..., n - 1, for f to order.
template <class T, class F>
void for_each_keyed_row(const Tensor& x, int64_t rows, int64_t n, const F& f) {
  const T* xp = x.data<T>();
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    std::vector<opmath_t<T>> key(n);
    std::vector<int64_t> perm(n);
    for (int64_t r = b; r < e; ++r) {
      const T* row = xp + r * n;
      for (int64_t j = 0; j < n; ++j) key[j] = opmath_t<T>(row[j]);
      std::iota(perm.begin(), perm.end(), int64_t(0));
      f(r, row, key, perm);
    }
  });
}

// x: (R, n) -> values: (R, n), indices: (R, n)
void cpu_sort(const Tensor& x, bool descending, const Tensor& values, const Tensor& indices) {
  const int64_t n = x.dim() ? x.shape().back() : 1, rows = n ? x.numel() / n : 0;
  TT_DISPATCH_ALL(x.dtype(), "sort", [&] {
    using T = scalar_t;
    T* vp = values.data<T>();
    int64_t* ip = indices.data<int64_t>();
    for_each_keyed_row<T>(x, rows, n, [&](int64_t r, const T* row, const auto& key, auto& perm) {
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t c) { return before(key[a], key[c], descending); });
      for (int64_t j = 0; j < n; ++j) vp[r * n + j] = row[perm[j]], ip[r * n + j] = perm[j];
    });
  });
}

// x: (R, n) -> values: (R, k), indices: (R, k), sorted (largest first when largest)
void cpu_topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const int64_t n = x.shape().back(), rows = n ? x.numel() / n : values.numel() / std::max<int64_t>(k, 1);
  if (k == 0) return;
  TT_DISPATCH_ALL(x.dtype(), "topk", [&] {
    using T = scalar_t;
    T* vp = values.data<T>();
    int64_t* ip = indices.data<int64_t>();
    for_each_keyed_row<T>(x, rows, n, [&](int64_t r, const T* row, const auto& key, auto& perm) {
      // Index tie-break keeps the result deterministic like a stable sort.
      std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), [&](int64_t a, int64_t c) {
        if (before(key[a], key[c], largest)) return true;
        if (before(key[c], key[a], largest)) return false;
        return a < c;
      });
      for (int64_t j = 0; j < k; ++j) vp[r * k + j] = row[perm[j]], ip[r * k + j] = perm[j];
    });
  });
}

}  // namespace

TT_REGISTER_KERNEL(sort, CPU, cpu_sort)
TT_REGISTER_KERNEL(topk, CPU, cpu_topk)

}  // namespace tt::cpu
