// CPU multi-tensor kernels of clip_grad_norm_ (kernels/grad_clip.h): each tensor's sum of squares
// from fixed-size blocks summed in order (the result does not depend on the thread count), and an
// in-place scale.
#include <algorithm>
#include <vector>
#include "tinytorch/kernels/grad_clip.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

constexpr int64_t kBlock = 8192;  // elements per partial sum
constexpr int kLanes = 8;         // independent accumulators, so the loop vectorizes

template <class T, class M>
M block_sum_squares(const T* x, int64_t n) {
  M acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += M(x[i + l]) * M(x[i + l]);
  for (; i < n; ++i) acc[0] += M(x[i]) * M(x[i]);
  M total = 0;
  for (M a : acc) total += a;
  return total;
}

void cpu_multi_sum_squares(const std::vector<Tensor>& xs, const Tensor& sums) {
  TT_DISPATCH_FLOATING(xs[0].dtype(), "multi_sum_squares", [&] {
    using M = opmath_t<scalar_t>;
    // blocks of every tensor in one list, so small and large tensors share the threads
    std::vector<int64_t> first(xs.size() + 1, 0);
    for (size_t t = 0; t < xs.size(); ++t) first[t + 1] = first[t] + (xs[t].numel() + kBlock - 1) / kBlock;
    std::vector<M> partial(static_cast<size_t>(first.back()));
    parallel_for(0, first.back(), 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const size_t t = size_t(std::upper_bound(first.begin(), first.end(), b) - first.begin() - 1);
        const int64_t start = (b - first[t]) * kBlock, n = std::min(kBlock, xs[t].numel() - start);
        partial[size_t(b)] = block_sum_squares<scalar_t, M>(xs[t].data<scalar_t>() + start, n);
      }
    });
    M* out = sums.data<M>();
    for (size_t t = 0; t < xs.size(); ++t) {
      M s = 0;
      for (int64_t b = first[t]; b < first[t + 1]; ++b) s += partial[size_t(b)];
      out[t] = s;
    }
  });
}

void cpu_multi_scale(const std::vector<Tensor>& xs, const Tensor& coef) {
  TT_DISPATCH_FLOATING(xs[0].dtype(), "multi_scale_", [&] {
    using M = opmath_t<scalar_t>;
    const M c = *coef.data<M>();
    for (const Tensor& x : xs) {
      scalar_t* p = x.data<scalar_t>();
      parallel_for(0, x.numel(), kBlock, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) p[i] = scalar_t(M(p[i]) * c);
      });
    }
  });
}

}  // namespace

TT_REGISTER_KERNEL(multi_sum_squares, CPU, cpu_multi_sum_squares)
TT_REGISTER_KERNEL(multi_scale, CPU, cpu_multi_scale)

}  // namespace tt::cpu
