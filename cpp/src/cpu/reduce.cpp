// CPU reductions (sum, prod, mean, amax/amin, all/any, norm, var/std, logsumexp),
// max/min with indices, and cumulative sum/product.
// FP exceptions are never inspected, so let GCC if-convert float compares (vectorizes the
// NaN-aware max/min loops).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>
#include "tinytorch/kernels/reduce.h"
#include "tinytorch/parallel.h"
#include "reduce_simd.h"

namespace tt::cpu {
namespace {

// Element type the kernels compute in: float for 16-bit floats, int64 for integers/bool.
template <class T> using load_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
// What independent block results are combined in: double for float sums (accuracy).
template <class A> using wide_t = std::conditional_t<std::is_same_v<A, float>, double, A>;

constexpr int kLanes = 16;            // independent partials per row: lets the compiler vectorize
constexpr int64_t kBlock = 4096;      // elements summed in A before widening to C
constexpr int64_t kChunk = 1 << 16;   // elements per task when one row is split across threads
constexpr int64_t kCols = 1024;       // columns per task in the (O, R, I>1) layout

template <class A> inline bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  else return false;
}

// ---- one-pass reduction policies: A step(A acc, A x), A merge(A, A), C widen/combine ----
template <class A> struct SumP {
  using C = wide_t<A>;
  A init() const { return A(0); }
  A step(A a, A x) const { return a + x; }
  A merge(A a, A b) const { return a + b; }
  C cinit() const { return C(0); }
  C combine(C a, C b) const { return a + b; }
};
template <class A> struct ProdP {
  using C = wide_t<A>;
  A init() const { return A(1); }
  A step(A a, A x) const { return a * x; }
  A merge(A a, A b) const { return a * b; }
  C cinit() const { return C(1); }
  C combine(C a, C b) const { return a * b; }
};
// Max/min with NaN propagation: a NaN lane stays NaN.
template <class A, bool kMax> struct ExtremeP {
  using C = A;
  A init() const {
    if constexpr (std::is_floating_point_v<A>) return kMax ? -INFINITY : INFINITY;
    else return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
  A step(A a, A x) const {
    const A r = (kMax ? x > a : x < a) ? x : a;
    return is_nan(x) ? x : r;
  }
  A merge(A a, A b) const { return step(a, b); }
  C cinit() const { return init(); }
  C combine(C a, C b) const { return step(a, b); }
};
template <class A, bool kAll> struct LogicalP {
  using C = A;
  A init() const { return A(kAll ? 1 : 0); }
  A step(A a, A x) const { return kAll ? A(a && x != A(0)) : A(a || x != A(0)); }
  A merge(A a, A b) const { return kAll ? A(a && b) : A(a || b); }
  C cinit() const { return init(); }
  C combine(C a, C b) const { return merge(a, b); }
};
// sum f(x) for the norms, squared deviations and logsumexp.
template <class A, class F> struct MapSumP : SumP<A> {
  F f;
  explicit MapSumP(F fn) : f(fn) {}
  A step(A a, A x) const { return a + f(x); }
};
template <class A, class F> MapSumP<A, F> map_sum(F f) { return MapSumP<A, F>(f); }
template <class A, bool kMax> struct AbsExtremeP : ExtremeP<A, kMax> {
  A step(A a, A x) const { return ExtremeP<A, kMax>::step(a, std::abs(x)); }
};

// Reduces x[0..n) sequentially: kLanes partials per block, blocks combined in C.
template <class P, class T>
typename P::C reduce_contig(const P& p, const T* x, int64_t n) {
  using A = load_t<T>;
  typename P::C total = p.cinit();
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    A acc[kLanes];
    for (int k = 0; k < kLanes; ++k) acc[k] = p.init();
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] = p.step(acc[k], A(x[i + k]));
    for (; i < e; ++i) acc[0] = p.step(acc[0], A(x[i]));
    for (int w = kLanes / 2; w > 0; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] = p.merge(acc[k], acc[k + w]);
    total = p.combine(total, typename P::C(acc[0]));
  }
  return total;
}

// float32 sum/max/min, the hot cases (see reduce_simd.h).
TT_SIMD_CLONES double sum_f32(const float* x, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    float acc[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] += x[i + k];
    for (; i < e; ++i) acc[0] += x[i];
    for (int w = kLanes / 2; w > 0; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
    total += acc[0];
  }
  return total;
}

TT_SIMD_CLONES float max_f32(const float* x, int64_t n) { return simd::extreme<true>(x, n); }
TT_SIMD_CLONES float min_f32(const float* x, int64_t n) { return simd::extreme<false>(x, n); }

// Overloads picked over the template for these (policy, type) pairs.
double reduce_contig(const SumP<float>&, const float* x, int64_t n) { return sum_f32(x, n); }
float reduce_contig(const ExtremeP<float, true>&, const float* x, int64_t n) { return max_f32(x, n); }
float reduce_contig(const ExtremeP<float, false>&, const float* x, int64_t n) { return min_f32(x, n); }

// One row, split across threads when `par`. Chunk boundaries don't depend on the thread
// count, so results are reproducible.
template <class P, class T>
typename P::C reduce_row(const P& p, const T* x, int64_t n, bool par) {
  if (!par || n < 2 * kChunk) return reduce_contig(p, x, n);
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<typename P::C> part(chunks);
  // Threads take chunks dynamically, so a thread descheduled on a busy machine delays
  // the row by at most one chunk.
  std::atomic<int64_t> next{0};
  parallel_for(0, get_num_threads(), 1, [&](int64_t, int64_t) {
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;)
      part[c] = reduce_contig(p, x + c * kChunk, std::min(kChunk, n - c * kChunk));
  });
  typename P::C total = p.cinit();
  for (auto v : part) total = p.combine(total, v);
  return total;
}

// Calls f(row, par) for N rows of length R: parallel over rows when there are enough,
// else one row at a time with the threads inside the row.
template <class F>
void for_rows(int64_t N, int64_t R, const F& f) {
  if (N >= 4 * get_num_threads() || R < 2 * kChunk) {
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) f(i, false);
    });
  } else {
    for (int64_t i = 0; i < N; ++i) f(i, true);
  }
}

// x: (O, R, I) -> out: (O, I), out = fin(reduction over R). One-pass policies only.
template <class P, class T, class Out, class Fin>
void reduce_one_pass(const P& p, const T* x, Out* out, int64_t O, int64_t R, int64_t I, const Fin& fin) {
  using A = load_t<T>;
  using C = typename P::C;
  if (I == 1) {
    for_rows(O, R, [&](int64_t i, bool par) { out[i] = static_cast<Out>(fin(reduce_row(p, x + i * R, R, par))); });
    return;
  }
  // Columns: accumulate kCols outputs side by side (vectorizes along I), widening every 64 rows.
  const int64_t nc = (I + kCols - 1) / kCols;
  parallel_for(0, O * nc, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kCols, 1)), [&](int64_t b, int64_t e) {
    A acc[kCols];
    C tot[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nc, i0 = (t % nc) * kCols, w = std::min(kCols, I - i0);
      for (int64_t j = 0; j < w; ++j) tot[j] = p.cinit();
      for (int64_t r0 = 0; r0 < R; r0 += 64) {
        for (int64_t j = 0; j < w; ++j) acc[j] = p.init();
        for (int64_t r = r0; r < std::min(R, r0 + 64); ++r) {
          const T* row = x + (o * R + r) * I + i0;
          for (int64_t j = 0; j < w; ++j) acc[j] = p.step(acc[j], A(row[j]));
        }
        for (int64_t j = 0; j < w; ++j) tot[j] = p.combine(tot[j], C(acc[j]));
      }
      for (int64_t j = 0; j < w; ++j) out[o * I + i0 + j] = static_cast<Out>(fin(tot[j]));
    }
  });
}

template <class T>
void reduce_typed(ReduceOp op, const Tensor& xt, const Tensor& outt, double arg) {
  using A = load_t<T>;
  const T* x = xt.data<T>();
  const int64_t O = xt.size(0), R = xt.size(1), I = xt.size(2);
  auto id = [](auto c) { return c; };
  // Sum/prod of integers write int64; floating reductions write T.
  using SumOut = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
  auto run = [&](auto p, auto fin, auto* out) { reduce_one_pass(p, x, out, O, R, I, fin); };
  switch (op) {
    case ReduceOp::Sum: return run(SumP<A>(), id, outt.data<SumOut>());
    case ReduceOp::Prod: return run(ProdP<A>(), id, outt.data<SumOut>());
    case ReduceOp::Amax: return run(ExtremeP<A, true>(), id, outt.data<T>());
    case ReduceOp::Amin: return run(ExtremeP<A, false>(), id, outt.data<T>());
    case ReduceOp::All: return run(LogicalP<A, true>(), [](A c) { return c != A(0); }, outt.data<bool>());
    case ReduceOp::Any: return run(LogicalP<A, false>(), [](A c) { return c != A(0); }, outt.data<bool>());
    default: break;
  }
  if constexpr (std::is_floating_point_v<A>) {
    using C = wide_t<A>;
    T* out = outt.data<T>();
    switch (op) {
      case ReduceOp::Mean: return run(SumP<A>(), [R](C c) { return c / C(R); }, out);
      case ReduceOp::Norm: {
        const A p = A(arg);
        if (arg == 2) return run(map_sum<A>([](A v) { return v * v; }), [](C c) { return std::sqrt(c); }, out);
        if (arg == 1) return run(map_sum<A>([](A v) { return std::abs(v); }), id, out);
        if (arg == 0) return run(map_sum<A>([](A v) { return A(v != A(0)); }), id, out);
        if (std::isinf(arg) && arg > 0) return run(AbsExtremeP<A, true>(), id, out);
        if (std::isinf(arg)) return run(AbsExtremeP<A, false>(), id, out);
        return run(map_sum<A>([p](A v) { return std::pow(std::abs(v), p); }), [p](C c) { return std::pow(c, C(1) / C(p)); }, out);
      }
      case ReduceOp::Var:
      case ReduceOp::Std: {
        TT_CHECK(I == 1, op_name(op), ": kernel expects the reduced dims innermost");
        const bool is_std = op == ReduceOp::Std;
        const double denom = std::max(0.0, double(R) - arg);
        for_rows(O, R, [&](int64_t i, bool par) {
          const T* row = x + i * R;
          const A m = A(reduce_row(SumP<A>(), row, R, par) / C(R));  // two-pass: mean, then squared deviations
          const double ssd = double(reduce_row(map_sum<A>([m](A v) { return (v - m) * (v - m); }), row, R, par));
          const double v = ssd / denom;
          out[i] = static_cast<T>(A(is_std ? std::sqrt(v) : v));
        });
        return;
      }
      case ReduceOp::LogSumExp: {
        TT_CHECK(I == 1, op_name(op), ": kernel expects the reduced dims innermost");
        for_rows(O, R, [&](int64_t i, bool par) {
          const T* row = x + i * R;
          const A mx = reduce_row(ExtremeP<A, true>(), row, R, par);
          const A shift = std::isinf(mx) ? A(0) : mx;  // all -inf -> -inf, any +inf -> +inf
          const C s = reduce_row(map_sum<A>([shift](A v) { return std::exp(v - shift); }), row, R, par);
          out[i] = static_cast<T>(A(std::log(s) + C(shift)));
        });
        return;
      }
      default: break;
    }
  }
  throw TypeError(str_cat(op_name(op), ": not implemented for dtype ", dtype_name(xt.dtype())));
}

void cpu_reduce(ReduceOp op, const Tensor& x, const Tensor& out, double arg) {
  TT_DISPATCH_ALL(x.dtype(), op_name(op), [&] { reduce_typed<scalar_t>(op, x, out, arg); });
}

// x: (N, R) -> values: (N) or undefined, indices: (N) int64.
template <class T>
void reduce_index_typed(bool is_max, const Tensor& xt, const Tensor& values, const Tensor& indices) {
  using A = load_t<T>;
  const T* x = xt.data<T>();
  const int64_t N = xt.size(0), R = xt.size(1);
  T* vals = values.defined() ? values.data<T>() : nullptr;
  int64_t* idx = indices.data<int64_t>();
  parallel_for(0, N, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const T* row = x + i * R;
      // Vectorized extreme first, then the first element equal to it (ties keep the
      // first; with a NaN present the extreme is NaN and the first NaN wins).
      const A best = is_max ? reduce_contig(ExtremeP<A, true>(), row, R) : reduce_contig(ExtremeP<A, false>(), row, R);
      int64_t bi = 0;
      if (is_nan(best)) {
        while (!is_nan(A(row[bi]))) ++bi;
      } else {
        while (A(row[bi]) != best) ++bi;
      }
      idx[i] = bi;
      if (vals) vals[i] = row[bi];
    }
  });
}

void cpu_reduce_index(bool is_max, const Tensor& x, const Tensor& values, const Tensor& indices) {
  TT_DISPATCH_ALL(x.dtype(), is_max ? "max" : "min", [&] { reduce_index_typed<scalar_t>(is_max, x, values, indices); });
}

// x: (O, L, I) -> out: (O, L, I), inclusive scan over L. Accumulates in double for float32
// (as PyTorch's CPU cumsum), float for 16-bit floats, int64 for integers.
template <class T>
void cumulative_typed(bool is_prod, const Tensor& xt, const Tensor& outt) {
  using Out = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
  using A = std::conditional_t<std::is_same_v<T, float>, double, load_t<T>>;
  const T* x = xt.data<T>();
  Out* out = outt.data<Out>();
  const int64_t O = xt.size(0), L = xt.size(1), I = xt.size(2);
  const int64_t nc = (I + kCols - 1) / kCols;
  parallel_for(0, O * nc, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L * std::min(I, kCols), 1)),
               [&](int64_t b, int64_t e) {
    A acc[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nc, i0 = (t % nc) * kCols, w = std::min(kCols, I - i0);
      for (int64_t j = 0; j < w; ++j) acc[j] = A(is_prod ? 1 : 0);
      for (int64_t l = 0; l < L; ++l) {
        const int64_t base = (o * L + l) * I + i0;
        if (is_prod) for (int64_t j = 0; j < w; ++j) acc[j] *= A(x[base + j]);
        else for (int64_t j = 0; j < w; ++j) acc[j] += A(x[base + j]);
        for (int64_t j = 0; j < w; ++j) out[base + j] = static_cast<Out>(load_t<Out>(acc[j]));
      }
    }
  });
}

void cpu_cumulative(bool is_prod, const Tensor& x, const Tensor& out) {
  TT_DISPATCH_ALL(x.dtype(), is_prod ? "cumprod" : "cumsum", [&] { cumulative_typed<scalar_t>(is_prod, x, out); });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, reduce, reduce_index, cumulative)

}  // namespace tt::cpu
