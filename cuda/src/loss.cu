// CUDA nll_loss and fused cross_entropy (log_softmax + nll + label smoothing), with backwards.
// Layout: input (N, C, S), class c of sample (n, s) at (n*C + c)*S + s; target (N, S) int64.
// The per-sample formulas are tinytorch/loss_math.h's (as on the CPU): losses in double,
// reduced deterministically (nn::det_sum); the log-sum-exp in opmath. S == 1 (the (N, C) case):
// a warp or a block per row; S > 1: a thread per sample, consecutive threads on consecutive s
// (coalesced).
#include "nn_reduce.cuh"
#include "tinytorch/cuda/device_assert.cuh"
#include "tinytorch/kernels/loss.h"
#include "tinytorch/loss_math.h"

namespace tt::cuda {
namespace {

using loss::class_weight;
using loss::grad_scale;
using nn::det_sum;

__device__ __forceinline__ void check_target(int64_t t, int64_t C, int64_t ignore) {
  TT_CUDA_KERNEL_ASSERT(t == ignore || (t >= 0 && t < C));
}

// Threads cooperating on one sample's C classes (loss_math.h's Group): a warp or a block.
struct WarpGroup {
  __device__ int rank() const { return threadIdx.x & 31; }
  __device__ int size() const { return 32; }
  template <class V> __device__ V sum(V v) const { return nn::warp_sum(v); }
  template <class V> __device__ V max(V v) const { return nn::warp_max(v); }
};
struct BlockGroup {
  __device__ int rank() const { return threadIdx.x; }
  __device__ int size() const { return blockDim.x; }
  template <class V> __device__ V sum(V v) const { return nn::block_sum(v); }
  template <class V> __device__ V max(V v) const { return nn::block_max(v); }
};

struct LossDims {
  int64_t N, C, S;
  int64_t ignore;
  double eps;
};

// Rows of big vocabularies (C > 1024, a block per row) whose rows are whole 16-byte vectors
// (C a multiple of 16 / sizeof(T), the logits 16-byte aligned) are read in vectors, the lse
// in one pass: each thread keeps a running max m and sum s of exp(x - m), rescaled when m
// grows, merged across the block in a fixed order. Non-finite values as loss::lse: a +inf
// logit gives NaN, a NaN gives NaN, a row of -inf (and NaNs) gives -inf.
template <class T>
constexpr int kVec = 16 / int(sizeof(T));

template <class T>
bool rows_are_vectors(const T* x, int64_t C) {
  return C > 1024 && C % kVec<T> == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

template <class A>
__device__ __forceinline__ void merge_max_sum(A& m, A& s, A m2, A s2) {
  const A mm = m < m2 ? m2 : m;
  if (mm == A(-INFINITY)) return;  // both shares empty (or -inf/NaN only: the row's lse is -inf)
  s = s * exp(m - mm) + s2 * exp(m2 - mm);
  m = mm;
}

// lse of row x: (C) by the whole block (every thread gets it).
template <class T>
__device__ double block_row_lse(const T* __restrict__ x, int64_t C) {
  using A = opmath_t<T>;
  constexpr int V = kVec<T>;
  const Vec<T, V>* xv = reinterpret_cast<const Vec<T, V>*>(x);
  A m = -INFINITY, s = 0;
  for (int64_t q = threadIdx.x; q < C / V; q += blockDim.x) {
    const Vec<T, V> t = xv[q];
    A v[V], vm = -INFINITY;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      v[i] = static_cast<A>(t.v[i]);
      vm = vm < v[i] ? v[i] : vm;
    }
    if (m < vm) s *= exp(m - vm), m = vm;
    if (m == A(-INFINITY)) {  // nothing finite yet: only a NaN counts
#pragma unroll
      for (int i = 0; i < V; ++i) s = v[i] != v[i] ? v[i] : s;
      continue;
    }
#pragma unroll
    for (int i = 0; i < V; ++i) s += exp(v[i] - m);
  }
  for (int o = 16; o > 0; o >>= 1) merge_max_sum(m, s, __shfl_xor_sync(~0u, m, o), __shfl_xor_sync(~0u, s, o));
  __shared__ A part_m[32], part_s[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  if (lane == 0) part_m[warp] = m, part_s[warp] = s;
  __syncthreads();
  m = lane < nw ? part_m[lane] : A(-INFINITY);
  s = lane < nw ? part_s[lane] : A(0);
  for (int o = 16; o > 0; o >>= 1) merge_max_sum(m, s, __shfl_xor_sync(~0u, m, o), __shfl_xor_sync(~0u, s, o));
  if (std::isinf(m)) return m > 0 ? static_cast<double>(NAN) : static_cast<double>(m);
  return static_cast<double>(m) + std::log(static_cast<double>(s));
}

// logits: (N, C) in vectors -> loss (or lse): (N) double, a block per row.
template <class T>
__global__ void ce_vec_rows_kernel(const T* __restrict__ x, const int64_t* __restrict__ tp, const T* w, double* out,
                                   LossDims d, bool lse_only) {
  const int64_t n = blockIdx.x, t = tp[n];
  check_target(t, d.C, d.ignore);
  const T* xr = x + n * d.C;
  const double l_se = block_row_lse(xr, d.C);
  double v = l_se;
  if (!lse_only) v = t == d.ignore ? 0.0 : loss::ce_given_lse(xr, d.C, 1, t, w, d.eps, l_se, BlockGroup());
  if (threadIdx.x == 0) out[n] = v;
}

// logits: (N, C, 1) -> loss: (N) double; rows of 32 (a warp) or blockDim threads.
template <class T, class G>
__global__ void ce_rows_kernel(const T* __restrict__ x, const int64_t* __restrict__ tp, const T* w, double* out,
                               LossDims d, bool lse_only) {
  G g;
  int64_t rows_per_block = blockDim.x / g.size();
  int64_t n = blockIdx.x * rows_per_block + threadIdx.x / g.size();
  if (n >= d.N) return;  // uniform within a group
  int64_t t = tp[n];
  check_target(t, d.C, d.ignore);  // every thread, so none reads x[t] before the assert fires
  const T* xr = x + n * d.C;
  double v;
  if (lse_only) v = loss::lse(xr, d.C, 1, g);
  else v = t == d.ignore ? 0.0 : loss::ce(xr, d.C, 1, t, w, d.eps, g);
  if (g.rank() == 0) out[n] = v;
}

// logits: (N, C, S) -> loss: (N*S) double (or the lse), a thread per sample.
template <class T>
__global__ void ce_cols_kernel(const T* __restrict__ x, const int64_t* __restrict__ tp, const T* w, double* out,
                               LossDims d, bool lse_only) {
  TT_GRID_STRIDE(i, d.N * d.S) {
    int64_t n = i / d.S, s = i % d.S, t = tp[i];
    check_target(t, d.C, d.ignore);
    const T* xs = x + n * d.C * d.S + s;
    loss::SerialGroup g;
    if (lse_only) out[i] = loss::lse(xs, d.C, d.S, g);
    else out[i] = t == d.ignore ? 0.0 : loss::ce(xs, d.C, d.S, t, w, d.eps, g);
  }
}

// input: (N, C, S) log-probs -> loss: (N*S) double.
template <class T>
__global__ void nll_kernel(const T* __restrict__ x, const int64_t* __restrict__ tp, const T* w, double* out,
                           LossDims d) {
  TT_GRID_STRIDE(i, d.N * d.S) {
    int64_t n = i / d.S, s = i % d.S, t = tp[i];
    check_target(t, d.C, d.ignore);
    out[i] = t == d.ignore ? 0.0 : loss::nll(x, (n * d.C + t) * d.S + s, t, w);
  }
}

template <class T>
__global__ void store_loss_kernel(const double* __restrict__ losses, T* __restrict__ out, int64_t M) {
  TT_GRID_STRIDE(i, M) { out[i] = loss::store<T>(losses[i]); }
}

// (loss_i, weight of target_i) pairs for the Sum/Mean reduction.
template <class T>
struct LossAndWeight {
  const double* losses;
  const int64_t* tp;
  const T* w;
  int64_t ignore;
  __device__ double2 operator()(int64_t i) const {
    int64_t t = tp[i];
    return make_double2(losses[i], t == ignore ? 0.0 : class_weight(w, t));
  }
};

template <class T>
struct StoreReduced {
  T* out;
  bool mean;
  __device__ void operator()(double2 s) const {
    double v = mean ? s.x / s.y : s.x;
    out[0] = loss::store<T>(v);
  }
};

// (weight of target_i for i < M, weight of class i for i < C): total weight and sum(w).
template <class T>
struct TargetAndClassWeights {
  const int64_t* tp;
  const T* w;
  int64_t M, C, ignore;
  __device__ double2 operator()(int64_t i) const {
    double a = 0, b = 0;
    if (i < M) {
      int64_t t = tp[i];
      check_target(t, C, ignore);
      a = t == ignore ? 0.0 : class_weight(w, t);
    }
    if (i < C) b = class_weight(w, i);
    return make_double2(a, b);
  }
};

struct StorePair {
  double* out;
  __device__ void operator()(double2 s) const { out[0] = s.x, out[1] = s.y; }
};

struct Ctx {
  DeviceGuard guard;
  cudaStream_t stream;
  Device dev;
  explicit Ctx(const Tensor& t) : guard(t.device()), stream(current_stream(t.device().index)), dev(t.device()) {}
};

// loss: (M) double -> out: (N, S) for None, else the 0-dim sum or weighted mean, in out's dtype.
template <class T>
void finish(const Ctx& cx, const Tensor& loss, const int64_t* tp, const T* w, const Tensor& out, Reduction r,
            int64_t ignore) {
  int64_t M = loss.numel();
  TT_DISPATCH_FLOATING(out.dtype(), "loss", [&] {
    using O = scalar_t;
    if (r == Reduction::None) {
      if (M == 0) return;
      store_loss_kernel<O><<<grid_for(M), kThreads, 0, cx.stream>>>(loss.data<double>(), out.data<O>(), M);
      TT_CUDA_KERNEL_CHECK();
      return;
    }
    det_sum(M, LossAndWeight<T>{loss.data<double>(), tp, w, ignore},
            StoreReduced<O>{out.data<O>(), r == Reduction::Mean}, cx.dev, cx.stream);
  });
}

// Total target weight and sum of class weights -> dev buffer (2) double.
template <class T>
Tensor weight_sums(const Ctx& cx, const int64_t* tp, const T* w, int64_t M, int64_t C, int64_t ignore) {
  Tensor sums = Tensor::empty({2}, DType::Float64, cx.dev);
  det_sum(std::max(M, C), TargetAndClassWeights<T>{tp, w, M, C, ignore}, StorePair{sums.data<double>()}, cx.dev,
          cx.stream);
  return sums;
}

// Per-sample lse or loss of the cross entropy -> (M) double.
template <class T>
Tensor ce_per_sample(const Ctx& cx, const T* x, const int64_t* tp, const T* w, const LossDims& d, bool lse_only) {
  int64_t M = d.N * d.S;
  Tensor buf = Tensor::empty({M}, DType::Float64, cx.dev);
  if (M == 0) return buf;
  double* bp = buf.data<double>();
  if (d.S == 1 && rows_are_vectors(x, d.C)) {
    ce_vec_rows_kernel<T><<<static_cast<unsigned>(d.N), kThreads, 0, cx.stream>>>(x, tp, w, bp, d, lse_only);
  } else if (d.S == 1 && d.C > 1024) {  // big vocabularies: a block per row
    ce_rows_kernel<T, BlockGroup><<<static_cast<unsigned>(d.N), kThreads, 0, cx.stream>>>(x, tp, w, bp, d, lse_only);
  } else if (d.S == 1) {  // a warp per row, 8 rows per block
    ce_rows_kernel<T, WarpGroup><<<static_cast<unsigned>((d.N + 7) / 8), kThreads, 0, cx.stream>>>(x, tp, w, bp, d,
                                                                                                    lse_only);
  } else {
    ce_cols_kernel<T><<<grid_for(M), kThreads, 0, cx.stream>>>(x, tp, w, bp, d, lse_only);
  }
  TT_CUDA_KERNEL_CHECK();
  return buf;
}

template <class T>
const T* weight_ptr(const Tensor& w) { return w.defined() ? w.data<T>() : nullptr; }

void cuda_nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& out, Reduction r,
                   int64_t ignore) {
  Ctx cx(input);
  LossDims d{input.size(0), input.size(1), input.size(2), ignore, 0.0};
  int64_t M = d.N * d.S;
  TT_DISPATCH_FLOATING(input.dtype(), "nll_loss", [&] {
    using T = scalar_t;
    Tensor loss = Tensor::empty({M}, DType::Float64, cx.dev);
    if (M > 0) {
      nll_kernel<T><<<grid_for(M), kThreads, 0, cx.stream>>>(input.data<T>(), target.data<int64_t>(),
                                                             weight_ptr<T>(weight), loss.data<double>(), d);
      TT_CUDA_KERNEL_CHECK();
    }
    finish<T>(cx, loss, target.data<int64_t>(), weight_ptr<T>(weight), out, r, ignore);
  });
}

// gin: (N, C, S) zeroed, then gin[n, t, s] = -w_t * scale for each non-ignored sample.
template <class T>
__global__ void nll_backward_kernel(const T* __restrict__ gout, const int64_t* __restrict__ tp, const T* w,
                                    const double* sums, T* gin, LossDims d, Reduction r) {
  TT_GRID_STRIDE(i, d.N * d.S) {
    int64_t n = i / d.S, s = i % d.S, t = tp[i];
    check_target(t, d.C, d.ignore);
    if (t == d.ignore) continue;
    double scale = grad_scale(gout, i, r, sums);
    gin[(n * d.C + t) * d.S + s] = loss::store<T>(-class_weight(w, t) * scale);
  }
}

void cuda_nll_loss_backward(const Tensor& gout, const Tensor& target, const Tensor& weight, const Tensor& gin,
                            Reduction r, int64_t ignore) {
  Ctx cx(gin);
  LossDims d{gin.size(0), gin.size(1), gin.size(2), ignore, 0.0};
  int64_t M = d.N * d.S;
  if (gin.numel() > 0)
    TT_CUDA_CHECK(cudaMemsetAsync(gin.data_ptr(), 0, static_cast<size_t>(gin.numel()) * gin.itemsize(), cx.stream));
  if (M == 0) return;
  TT_DISPATCH_FLOATING(gin.dtype(), "nll_loss_backward", [&] {
    using T = scalar_t;
    const int64_t* tp = target.data<int64_t>();
    Tensor sums;
    if (r == Reduction::Mean) sums = weight_sums<T>(cx, tp, weight_ptr<T>(weight), M, d.C, ignore);
    nll_backward_kernel<T><<<grid_for(M), kThreads, 0, cx.stream>>>(
        gout.data<T>(), tp, weight_ptr<T>(weight), sums.defined() ? sums.data<double>() : nullptr, gin.data<T>(), d, r);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& out,
                        Reduction r, int64_t ignore, double eps) {
  Ctx cx(logits);
  LossDims d{logits.size(0), logits.size(1), logits.size(2), ignore, eps};
  TT_DISPATCH_FLOATING(logits.dtype(), "cross_entropy", [&] {
    using T = scalar_t;
    const T* w = weight_ptr<T>(weight);
    Tensor loss = ce_per_sample<T>(cx, logits.data<T>(), target.data<int64_t>(), w, d, false);
    finish<T>(cx, loss, target.data<int64_t>(), w, out, r, ignore);
  });
}

// gin: (N, C, S) = scale * ((1-eps) w_t (softmax - onehot_t) + eps/C (sum(w) softmax - w)),
// a thread per element; lse: (N*S) per sample, sums: (total target weight, sum of w).
template <class T>
__global__ void ce_backward_kernel(const double* __restrict__ gout, const T* __restrict__ x, const int64_t* __restrict__ tp,
                                   const T* w, const double* __restrict__ lse, const double* sums, T* gin, LossDims d,
                                   Reduction r) {
  const double sm = d.eps / static_cast<double>(d.C);
  TT_GRID_STRIDE(e, d.N * d.C * d.S) {
    int64_t s = e % d.S, c = (e / d.S) % d.C, n = e / (d.S * d.C), i = n * d.S + s;
    int64_t t = tp[i];
    if (t == d.ignore) {
      gin[e] = T(0);
      continue;
    }
    double scale = grad_scale(gout, i, r, sums);
    double g = loss::ce_grad(loss::softmax_prob(x, e, lse[i]), c, t, w, d.eps, sm, sums[1]);
    gin[e] = loss::store<T>(scale * g);
  }
}

// gin: (N, C) for S == 1 and rows in vectors (rows_are_vectors), a block per row: the row's
// target, scale and lse are read once (no index arithmetic per element), the softmax's exp runs
// in opmath (float for float/half/bfloat16); without class weights or smoothing the gradient
// scale * (p - [c == t]) too, else ce_grad's algebra in double, as ce_backward_kernel's.
template <class T>
__global__ void ce_rows_backward_kernel(const double* __restrict__ gout, const T* __restrict__ x,
                                        const int64_t* __restrict__ tp, const T* w, const double* __restrict__ lse,
                                        const double* sums, T* __restrict__ gin, LossDims d, Reduction r) {
  using A = opmath_t<T>;
  constexpr int V = kVec<T>;
  const int64_t n = blockIdx.x, t = tp[n];
  const Vec<T, V>* xv = reinterpret_cast<const Vec<T, V>*>(x + n * d.C);
  Vec<T, V>* gv = reinterpret_cast<Vec<T, V>*>(gin + n * d.C);
  if (t == d.ignore) {
    Vec<T, V> zero;
#pragma unroll
    for (int i = 0; i < V; ++i) zero.v[i] = T(0);
    for (int64_t q = threadIdx.x; q < d.C / V; q += blockDim.x) gv[q] = zero;
    return;
  }
  const double scale = grad_scale(gout, n, r, sums), sm = d.eps / static_cast<double>(d.C);
  const A l_se = static_cast<A>(lse[n]), scale_a = static_cast<A>(scale);
  const bool plain = w == nullptr && d.eps == 0;
  for (int64_t q = threadIdx.x; q < d.C / V; q += blockDim.x) {
    const Vec<T, V> xq = xv[q];
    Vec<T, V> g;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int64_t c = q * V + i;
      const A p = exp(static_cast<A>(xq.v[i]) - l_se);
      g.v[i] = plain ? static_cast<T>(scale_a * (c == t ? p - A(1) : p))
                     : loss::store<T>(scale * loss::ce_grad(static_cast<double>(p), c, t, w, d.eps, sm, sums[1]));
    }
    gv[q] = g;
  }
}

void cuda_cross_entropy_backward(const Tensor& gout, const Tensor& logits, const Tensor& target, const Tensor& weight,
                                 const Tensor& gin, Reduction r, int64_t ignore, double eps) {
  Ctx cx(logits);
  LossDims d{logits.size(0), logits.size(1), logits.size(2), ignore, eps};
  int64_t M = d.N * d.S;
  if (M == 0 || gin.numel() == 0) return;
  TT_DISPATCH_FLOATING(logits.dtype(), "cross_entropy_backward", [&] {
    using T = scalar_t;
    const T* w = weight_ptr<T>(weight);
    const int64_t* tp = target.data<int64_t>();
    Tensor sums = weight_sums<T>(cx, tp, w, M, d.C, ignore);
    Tensor lse = ce_per_sample<T>(cx, logits.data<T>(), tp, w, d, true);
    if (d.S == 1 && rows_are_vectors(logits.data<T>(), d.C) && rows_are_vectors(gin.data<T>(), d.C))
      ce_rows_backward_kernel<T><<<static_cast<unsigned>(d.N), kThreads, 0, cx.stream>>>(
          gout.data<double>(), logits.data<T>(), tp, w, lse.data<double>(), sums.data<double>(), gin.data<T>(), d, r);
    else
      ce_backward_kernel<T><<<grid_for(gin.numel()), kThreads, 0, cx.stream>>>(
          gout.data<double>(), logits.data<T>(), tp, w, lse.data<double>(), sums.data<double>(), gin.data<T>(), d, r);
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, nll_loss, nll_loss_backward, cross_entropy, cross_entropy_backward)

}  // namespace tt::cuda
