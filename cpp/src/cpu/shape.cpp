// CPU kernels for tril/triu and the arange/linspace factories.
#include <cmath>
#include "tinytorch/kernels/shape.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

template <class T> T cast_from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

// x: contiguous (B, M, N) -> out: (B, M, N) keeping j - i >= k (upper) / <= k (lower), else 0
void cpu_triu_tril(const Tensor& x, int64_t k, bool upper, const Tensor& out) {
  const int64_t M = x.shape()[x.dim() - 2], N = x.shape()[x.dim() - 1];
  const int64_t rows = (M != 0 && N != 0) ? x.numel() / N : 0;
  TT_DISPATCH_ALL(x.dtype(), upper ? "triu" : "tril", [&] {
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* op = out.data<scalar_t>();
    const scalar_t zero = cast_from_double<scalar_t>(0);
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t i = r % M;
        for (int64_t j = 0; j < N; ++j) {
          bool keep = upper ? j - i >= k : j - i <= k;
          op[r * N + j] = keep ? xp[r * N + j] : zero;
        }
      }
    });
  });
}

// out: (n,) <- start + i * step; integer dtypes use exact int64 arithmetic for integral args
void cpu_arange(const Tensor& out, RangeArgs a) {
  const int64_t n = out.numel();
  TT_DISPATCH_NUMERIC(out.dtype(), "arange", [&] {
    scalar_t* o = out.data<scalar_t>();
    const bool exact = std::is_integral_v<scalar_t> && a.integral;
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[i] = exact ? static_cast<scalar_t>(a.istart + i * a.istep)
                     : cast_from_double<scalar_t>(a.start + double(i) * a.step);
    });
  });
}

// out: (n,) <- start + i * step for the first half, end - (n - 1 - i) * step for the rest
void cpu_linspace(const Tensor& out, double start, double end) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const double step = n > 1 ? (end - start) / double(n - 1) : 0.0;
  const int64_t half = n == 1 ? 1 : n / 2;  // steps == 1 gives start
  TT_DISPATCH_NUMERIC(out.dtype(), "linspace", [&] {
    scalar_t* o = out.data<scalar_t>();
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[i] = cast_from_double<scalar_t>(i < half ? start + step * double(i) : end - step * double(n - 1 - i));
    });
  });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, triu_tril, arange, linspace)

}  // namespace tt::cpu
