// CUDA reductions over the (O, R, I) layout the op layer prepares (sum, prod, mean, amax/amin,
// all/any, norm, var/std, logsumexp), max/min with indices, and cumulative sum/product.
// One engine covers every shape: a block of 256 threads holds `bo` outputs x `br` lanes along R;
// when there are too few outputs to fill the GPU, R is split over gridDim.y blocks that write
// partials, and a second kernel combines them in a fixed order (deterministic, no atomics).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include "tinytorch/cuda/block_reduce.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/kernels/reduce.h"

namespace tt::cuda {

int sm_count(int device) {
  static std::atomic<int> cache[64];
  if (device < 0 || device >= 64) return 132;
  int n = cache[device].load(std::memory_order_relaxed);
  if (n == 0) {
    TT_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    cache[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

namespace {

// What elements are loaded as: float for 16-bit floats, int64 for integers and bool.
template <class T> using load_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;

constexpr int kBlock = 256;

inline int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < cap && p < n) p *= 2;
  return p;
}

// ---------------------------------------------------------------- policies
// P::Acc init(); Acc step(Acc, L x, int64 r, int64 j); Acc combine(Acc, Acc); write(j, Acc).
// j is the output index (o * I + i), r the position along R.

struct Ident {
  template <class V> __device__ V operator()(V v, int64_t) const { return v; }
};

// sum over R of map(x); out[j] = fin(sum).
template <class L, class A, class Out, class Map = Ident, class Fin = Ident>
struct SumP {
  using Acc = A;
  Out* out;
  Map map;
  Fin fin;
  __device__ A init() const { return A(0); }
  __device__ A step(A a, L x, int64_t, int64_t j) const { return a + A(map(x, j)); }
  __device__ A combine(A a, A b) const { return a + b; }
  __device__ void write(int64_t j, A a) const { out[j] = static_cast<Out>(fin(a, j)); }
};

template <class L, class A, class Out>
struct ProdP {
  using Acc = A;
  Out* out;
  __device__ A init() const { return A(1); }
  __device__ A step(A a, L x, int64_t, int64_t) const { return a * A(x); }
  __device__ A combine(A a, A b) const { return a * b; }
  __device__ void write(int64_t j, A a) const { out[j] = static_cast<Out>(a); }
};

// max/min (of |x| for the inf norms); a NaN wins, as on the CPU.
template <class L, class Out, bool kMax, bool kAbs = false>
struct ExtremeP {
  using Acc = L;
  Out* out;
  __device__ L init() const {
    if constexpr (std::is_floating_point_v<L>) return kMax ? L(-INFINITY) : L(INFINITY);
    else return kMax ? std::numeric_limits<L>::lowest() : std::numeric_limits<L>::max();
  }
  __device__ L combine(L a, L x) const {
    const L r = (kMax ? x > a : x < a) ? x : a;
    return x != x ? x : r;
  }
  __device__ L step(L a, L x, int64_t, int64_t) const {
    if constexpr (kAbs) return combine(a, std::abs(x));
    else return combine(a, x);
  }
  __device__ void write(int64_t j, L a) const { out[j] = static_cast<Out>(a); }
};

template <class L, bool kAll>
struct LogicalP {
  using Acc = bool;
  bool* out;
  __device__ bool init() const { return kAll; }
  __device__ bool step(bool a, L x, int64_t, int64_t) const { return kAll ? (a && x != L(0)) : (a || x != L(0)); }
  __device__ bool combine(bool a, bool b) const { return kAll ? (a && b) : (a || b); }
  __device__ void write(int64_t j, bool a) const { out[j] = a; }
};

// (value, index) of the first max/min; NaN counts as the extreme. i < 0: nothing seen yet.
template <class L>
struct IdxAcc {
  L v;
  int64_t i;
};
template <class A>
__device__ __forceinline__ A shfl_acc(A a, int delta, int width) { return shfl_down(a, delta, width); }
template <class L>
__device__ __forceinline__ IdxAcc<L> shfl_acc(IdxAcc<L> a, int delta, int width) {
  return {shfl_down(a.v, delta, width), shfl_down(a.i, delta, width)};
}

template <class T, bool kMax>
struct IndexP {
  using L = load_t<T>;
  using Acc = IdxAcc<L>;
  const T* x;  // rows, to store the element itself as the value
  int64_t R;
  T* values;   // may be null
  int64_t* indices;
  __device__ Acc init() const { return {L(0), -1}; }
  // Order-independent: a total order on (value, index), so splits and shuffles can't change it.
  __device__ Acc combine(Acc a, Acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = a.v != a.v, bn = b.v != b.v;
    bool a_wins;
    if (an || bn) a_wins = an && (!bn || a.i < b.i);
    else if (a.v != b.v) a_wins = kMax ? a.v > b.v : a.v < b.v;
    else a_wins = a.i < b.i;
    return a_wins ? a : b;
  }
  __device__ Acc step(Acc a, L v, int64_t r, int64_t) const { return combine(a, Acc{v, r}); }
  __device__ void write(int64_t j, Acc a) const {
    indices[j] = a.i;
    if (values) values[j] = x[j * R + a.i];
  }
};

// ---------------------------------------------------------------- the engine

struct Layout {
  int64_t R, I, OI, chunk;  // chunk: R positions per gridDim.y split
  int bo, br;               // outputs per block, lanes along R (bo * br == kBlock)
  bool r_fast;              // lanes along R are the fast thread index (I == 1: rows)
};

// x: (O, R, I) -> p.write(j, reduction over R of x[o, :, i]) for j = o * I + i; with
// gridDim.y > 1 each split writes its partial to ws[(split, j)] instead.
template <class T, class P>
__global__ void __launch_bounds__(kBlock) reduce_kernel(const T* __restrict__ x, Layout g, P p,
                                                        typename P::Acc* __restrict__ ws) {
  using A = typename P::Acc;
  using L = load_t<T>;
  __shared__ alignas(16) unsigned char smem_raw[kBlock * sizeof(A)];
  A* smem = reinterpret_cast<A*>(smem_raw);
  const int tid = threadIdx.x;
  const int ol = g.r_fast ? tid / g.br : tid % g.bo;
  const int rl = g.r_fast ? tid % g.br : tid / g.bo;
  const int64_t j = int64_t(blockIdx.x) * g.bo + ol;
  const int64_t r0 = int64_t(blockIdx.y) * g.chunk;
  const int64_t r1 = r0 + g.chunk < g.R ? r0 + g.chunk : g.R;
  A acc = p.init();
  if (j < g.OI) {
    const T* base = x + (j / g.I) * g.R * g.I + (j % g.I);
    const int64_t st = g.br, I = g.I;
    int64_t r = r0 + rl;
    for (; r + 3 * st < r1; r += 4 * st) {  // four loads in flight, then fold in order
      const L v0 = L(base[r * I]), v1 = L(base[(r + st) * I]), v2 = L(base[(r + 2 * st) * I]),
              v3 = L(base[(r + 3 * st) * I]);
      acc = p.step(acc, v0, r, j);
      acc = p.step(acc, v1, r + st, j);
      acc = p.step(acc, v2, r + 2 * st, j);
      acc = p.step(acc, v3, r + 3 * st, j);
    }
    for (; r < r1; r += st) acc = p.step(acc, L(base[r * I]), r, j);
  }
  if (g.r_fast) {  // lanes of one output are adjacent: shuffles, then smem across warps
    const int w = g.br < 32 ? g.br : 32;
    for (int d = w / 2; d > 0; d >>= 1) acc = p.combine(acc, shfl_acc(acc, d, w));
    if (g.br > 32) {
      if (tid % 32 == 0) smem[tid / 32] = acc;
      __syncthreads();
      if (rl == 0)
        for (int k = 1; k < g.br / 32; ++k) acc = p.combine(acc, smem[tid / 32 + k]);
    }
  } else {  // lanes of one output are bo apart: tree in shared memory
    smem[rl * g.bo + ol] = acc;
    __syncthreads();
    for (int s = g.br / 2; s > 0; s >>= 1) {
      if (rl < s) smem[rl * g.bo + ol] = p.combine(smem[rl * g.bo + ol], smem[(rl + s) * g.bo + ol]);
      __syncthreads();
    }
    acc = smem[ol];
  }
  if (rl == 0 && j < g.OI) {
    if (gridDim.y == 1) p.write(j, acc);
    else ws[int64_t(blockIdx.y) * g.OI + j] = acc;
  }
}

// ws: (splits, OI) partials -> p.write(j, combined in split order).
template <class P>
__global__ void reduce_finish_kernel(const typename P::Acc* __restrict__ ws, int64_t OI, int splits, P p) {
  TT_GRID_STRIDE(j, OI) {
    typename P::Acc acc = ws[j];
    for (int s = 1; s < splits; ++s) acc = p.combine(acc, ws[s * OI + j]);
    p.write(j, acc);
  }
}

// x: (O, R, I) contiguous on the GPU; runs policy p over it.
template <class T, class P>
void launch_reduce(const Tensor& x, int64_t O, int64_t R, int64_t I, const P& p) {
  using A = typename P::Acc;
  const int dev = x.device().index;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(dev);
  Layout g;
  g.R = R;
  g.I = I;
  g.OI = O * I;
  g.r_fast = I == 1;
  if (g.r_fast) {
    g.br = pow2_at_least(R, kBlock);
    g.bo = kBlock / g.br;
  } else {
    g.bo = pow2_at_least(I, 32);
    g.br = kBlock / g.bo;
  }
  const int64_t blocks = (g.OI + g.bo - 1) / g.bo;
  TT_CHECK(blocks < (int64_t(1) << 31), "reduce: too many outputs (", g.OI, ")");
  // Split R when the outputs alone give fewer than ~4 blocks per SM, keeping >= 16 elements a lane.
  const int64_t target = 4 * int64_t(sm_count(dev));
  int64_t splits = 1;
  if (blocks < target) {
    const int64_t by_work = (R + int64_t(g.br) * 16 - 1) / (int64_t(g.br) * 16);
    splits = std::max<int64_t>(1, std::min<int64_t>({(target + blocks - 1) / blocks, by_work, 65535}));
  }
  g.chunk = std::max<int64_t>(1, (R + splits - 1) / splits);
  splits = std::max<int64_t>(1, (R + g.chunk - 1) / g.chunk);
  Tensor ws;
  A* wsp = nullptr;
  if (splits > 1) {
    ws = Tensor::empty({splits * g.OI * int64_t(sizeof(A))}, DType::UInt8, x.device());
    wsp = static_cast<A*>(ws.data_ptr());
  }
  reduce_kernel<T, P><<<dim3(unsigned(blocks), unsigned(splits)), kBlock, 0, stream>>>(x.data<T>(), g, p, wsp);
  TT_CUDA_KERNEL_CHECK();
  if (splits > 1) {
    reduce_finish_kernel<P><<<grid_for(g.OI), kThreads, 0, stream>>>(wsp, g.OI, int(splits), p);
    TT_CUDA_KERNEL_CHECK();
  }
}

// ---------------------------------------------------------------- reduce ops

template <class M> struct Square { __device__ M operator()(M v, int64_t) const { return v * v; } };
template <class M> struct AbsMap { __device__ M operator()(M v, int64_t) const { return std::abs(v); } };
template <class M> struct NonZero { __device__ M operator()(M v, int64_t) const { return M(v != M(0)); } };
template <class M> struct PowAbs {
  M p;
  __device__ M operator()(M v, int64_t) const { return std::pow(std::abs(v), p); }
};
template <class M> struct SqDev {  // (v - mean[j])^2
  const M* mean;
  __device__ M operator()(M v, int64_t j) const { const M d = v - mean[j]; return d * d; }
};
template <class M> __device__ __forceinline__ M lse_shift(M mx) { return std::isinf(mx) ? M(0) : mx; }
template <class M> struct ExpShift {  // exp(v - shift(max[j]))
  const M* mx;
  __device__ M operator()(M v, int64_t j) const { return std::exp(v - lse_shift(mx[j])); }
};
template <class M> struct DivBy {
  M n;
  __device__ M operator()(M a, int64_t) const { return a / n; }
};
template <class M> struct SqrtFin { __device__ M operator()(M a, int64_t) const { return std::sqrt(a); } };
template <class M> struct PowFin {
  M inv_p;
  __device__ M operator()(M a, int64_t) const { return std::pow(a, inv_p); }
};
template <class M> struct VarFin {
  double denom;
  bool is_std;
  __device__ M operator()(M a, int64_t) const {
    const double v = double(a) / denom;
    return M(is_std ? std::sqrt(v) : v);
  }
};
template <class M> struct LseFin {
  const M* mx;
  __device__ M operator()(M a, int64_t j) const { return std::log(a) + lse_shift(mx[j]); }
};

template <class T>
void reduce_typed(ReduceOp op, const Tensor& xt, const Tensor& outt, double arg) {
  using L = load_t<T>;
  using SumOut = std::conditional_t<std::is_integral_v<T>, int64_t, T>;  // integer sums write int64
  const int64_t O = xt.size(0), R = xt.size(1), I = xt.size(2);
  auto run = [&](const auto& p) { launch_reduce<T>(xt, O, R, I, p); };
  switch (op) {
    case ReduceOp::Sum: return run(SumP<L, L, SumOut>{outt.data<SumOut>()});
    case ReduceOp::Prod: return run(ProdP<L, L, SumOut>{outt.data<SumOut>()});
    case ReduceOp::Amax: return run(ExtremeP<L, T, true>{outt.data<T>()});
    case ReduceOp::Amin: return run(ExtremeP<L, T, false>{outt.data<T>()});
    case ReduceOp::All: return run(LogicalP<L, true>{outt.data<bool>()});
    case ReduceOp::Any: return run(LogicalP<L, false>{outt.data<bool>()});
    default: break;
  }
  if constexpr (std::is_floating_point_v<L>) {
    using M = L;
    T* out = outt.data<T>();
    switch (op) {
      case ReduceOp::Mean: return run(SumP<M, M, T, Ident, DivBy<M>>{out, {}, {M(R)}});
      case ReduceOp::Norm:
        if (arg == 2) return run(SumP<M, M, T, Square<M>, SqrtFin<M>>{out});
        if (arg == 1) return run(SumP<M, M, T, AbsMap<M>>{out});
        if (arg == 0) return run(SumP<M, M, T, NonZero<M>>{out});
        if (std::isinf(arg) && arg > 0) return run(ExtremeP<M, T, true, true>{out});
        if (std::isinf(arg)) return run(ExtremeP<M, T, false, true>{out});
        return run(SumP<M, M, T, PowAbs<M>, PowFin<M>>{out, {M(arg)}, {M(1) / M(arg)}});
      case ReduceOp::Var:
      case ReduceOp::Std: {
        TT_CHECK(I == 1, op_name(op), ": kernel expects the reduced dims innermost");
        // Two passes as on the CPU: the row means, then the squared deviations from them.
        Tensor mean = Tensor::empty({O}, dtype_of<M>::value, xt.device());
        run(SumP<M, M, M, Ident, DivBy<M>>{mean.data<M>(), {}, {M(R)}});
        const double denom = std::max(0.0, double(R) - arg);
        return run(SumP<M, M, T, SqDev<M>, VarFin<M>>{out, {mean.data<M>()}, {denom, op == ReduceOp::Std}});
      }
      case ReduceOp::LogSumExp: {
        TT_CHECK(I == 1, op_name(op), ": kernel expects the reduced dims innermost");
        Tensor mx = Tensor::empty({O}, dtype_of<M>::value, xt.device());
        run(ExtremeP<M, M, true>{mx.data<M>()});
        return run(SumP<M, M, T, ExpShift<M>, LseFin<M>>{out, {mx.data<M>()}, {mx.data<M>()}});
      }
      default: break;
    }
  }
  throw TypeError(str_cat(op_name(op), ": not implemented for dtype ", dtype_name(xt.dtype())));
}

void cuda_reduce(ReduceOp op, const Tensor& x, const Tensor& out, double arg) {
  TT_DISPATCH_ALL(x.dtype(), op_name(op), [&] { reduce_typed<scalar_t>(op, x, out, arg); });
}

// x: (N, R) -> values: (N) or undefined, indices: (N) int64.
void cuda_reduce_index(bool is_max, const Tensor& x, const Tensor& values, const Tensor& indices) {
  TT_DISPATCH_ALL(x.dtype(), is_max ? "max" : "min", [&] {
    using T = scalar_t;
    const int64_t N = x.size(0), R = x.size(1);
    T* vals = values.defined() ? values.data<T>() : nullptr;
    if (is_max) launch_reduce<T>(x, N, R, 1, IndexP<T, true>{x.data<T>(), R, vals, indices.data<int64_t>()});
    else launch_reduce<T>(x, N, R, 1, IndexP<T, false>{x.data<T>(), R, vals, indices.data<int64_t>()});
  });
}

// ---------------------------------------------------------------- cumulative sum / product
// Accumulates as the CPU: double for float32 and float64, float for 16-bit floats, int64 else.

template <class A, bool kProd>
__device__ __forceinline__ A scan_op(A a, A b) { return kProd ? a * b : a + b; }

template <class A, bool kProd>
__device__ __forceinline__ A warp_inclusive_scan(A v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const A y = shfl_up(v, d);
    if (lane >= d) v = scan_op<A, kProd>(y, v);
  }
  return v;
}

template <class T> using scan_out_t = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
template <class T> using scan_acc_t = std::conditional_t<std::is_same_v<T, float>, double, load_t<T>>;
template <class Out, class A> __device__ __forceinline__ Out scan_store(A a) { return static_cast<Out>(load_t<Out>(a)); }

// x, out: (rows, L); one warp per row, 32 elements per step, the carry in lane 31.
template <class T, bool kProd>
__global__ void scan_rows_warp_kernel(const T* __restrict__ x, scan_out_t<T>* __restrict__ out, int64_t rows,
                                      int64_t L) {
  using A = scan_acc_t<T>;
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; row < rows; row += warps) {
    A carry = A(kProd ? 1 : 0);
    for (int64_t l0 = 0; l0 < L; l0 += 32) {
      const int64_t l = l0 + lane;
      A v = l < L ? A(x[row * L + l]) : A(kProd ? 1 : 0);
      v = scan_op<A, kProd>(carry, warp_inclusive_scan<A, kProd>(v, lane));
      if (l < L) out[row * L + l] = scan_store<scan_out_t<T>>(v);
      carry = __shfl_sync(0xffffffffu, v, 31);
    }
  }
}

// x, out: (rows, L) with long rows; one block per row, kItems consecutive elements per thread.
constexpr int kScanThreads = 512, kItems = 4;
template <class T, bool kProd>
__global__ void __launch_bounds__(kScanThreads) scan_rows_block_kernel(const T* __restrict__ x,
                                                                       scan_out_t<T>* __restrict__ out,
                                                                       int64_t rows, int64_t L) {
  using A = scan_acc_t<T>;
  __shared__ A warp_tot[kScanThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const A id = A(kProd ? 1 : 0);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    A carry = id;
    for (int64_t t0 = 0; t0 < L; t0 += int64_t(kScanThreads) * kItems) {
      const int64_t l0 = t0 + int64_t(threadIdx.x) * kItems;
      A v[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k) {  // local inclusive scan of this thread's items
        const A e = l0 + k < L ? A(x[row * L + l0 + k]) : id;
        v[k] = k ? scan_op<A, kProd>(v[k - 1], e) : e;
      }
      const A incl = warp_inclusive_scan<A, kProd>(v[kItems - 1], lane);
      if (lane == 31) warp_tot[warp] = incl;
      __syncthreads();
      A prefix = carry;  // everything before this warp, then before this thread
      for (int w = 0; w < warp; ++w) prefix = scan_op<A, kProd>(prefix, warp_tot[w]);
      A excl = shfl_up(incl, 1);
      if (lane > 0) prefix = scan_op<A, kProd>(prefix, excl);
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        if (l0 + k < L) out[row * L + l0 + k] = scan_store<scan_out_t<T>>(scan_op<A, kProd>(prefix, v[k]));
      for (int w = 0; w < kScanThreads / 32; ++w) carry = scan_op<A, kProd>(carry, warp_tot[w]);
      __syncthreads();  // warp_tot is rewritten by the next tile
    }
  }
}

// x, out: (O, L, I), I > 1; one thread per column (coalesced along I).
template <class T, bool kProd>
__global__ void scan_cols_kernel(const T* __restrict__ x, scan_out_t<T>* __restrict__ out, int64_t O, int64_t L,
                                 int64_t I) {
  using A = scan_acc_t<T>;
  TT_GRID_STRIDE(c, O * I) {
    const int64_t base = (c / I) * L * I + c % I;
    A acc = A(kProd ? 1 : 0);
    for (int64_t l = 0; l < L; ++l) {
      acc = scan_op<A, kProd>(acc, A(x[base + l * I]));
      out[base + l * I] = scan_store<scan_out_t<T>>(acc);
    }
  }
}

template <class T, bool kProd>
void scan_rows(const Tensor& x, const Tensor& out, int64_t rows, int64_t L, cudaStream_t stream) {
  using Out = scan_out_t<T>;
  if (L <= 1024) {
    const int64_t blocks = std::min<int64_t>((rows + 7) / 8, 65535LL * 8);
    scan_rows_warp_kernel<T, kProd><<<unsigned(blocks), 256, 0, stream>>>(x.data<T>(), out.data<Out>(), rows, L);
  } else {
    const int64_t blocks = std::min<int64_t>(rows, 65535LL * 8);
    scan_rows_block_kernel<T, kProd><<<unsigned(blocks), kScanThreads, 0, stream>>>(x.data<T>(), out.data<Out>(),
                                                                                    rows, L);
  }
  TT_CUDA_KERNEL_CHECK();
}

template <class T, bool kProd>
void cumulative_typed(const Tensor& x, const Tensor& out) {
  const int64_t O = x.size(0), L = x.size(1), I = x.size(2);
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  if (I == 1) return scan_rows<T, kProd>(x, out, O, L, stream);
  if (O * I < 2048 && L > 4096) {
    // Few long columns: one thread each would be serial; transpose to rows, scan, transpose back.
    Tensor xr = x.transpose(1, 2).contiguous();
    Tensor outr = Tensor::empty({O, I, L}, out.dtype(), out.device());
    scan_rows<T, kProd>(xr, outr, O * I, L, stream);
    copy_kernel[out.device()](outr, out.transpose(1, 2));
    return;
  }
  scan_cols_kernel<T, kProd><<<grid_for(O * I), kThreads, 0, stream>>>(x.data<T>(), out.data<scan_out_t<T>>(), O,
                                                                       L, I);
  TT_CUDA_KERNEL_CHECK();
}

void cuda_cumulative(bool is_prod, const Tensor& x, const Tensor& out) {
  TT_DISPATCH_ALL(x.dtype(), is_prod ? "cumprod" : "cumsum", [&] {
    if (is_prod) cumulative_typed<scalar_t, true>(x, out);
    else cumulative_typed<scalar_t, false>(x, out);
  });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, reduce, reduce_index, cumulative)

}  // namespace tt::cuda
