// CUDA fused optimizer steps: one pass over contiguous param/grad/state, in place, 16-byte
// vector loads and stores when every operand is aligned. The update rules are
// tinytorch/optim_math.h's (as on the CPU); this file supplies the loops. Options are read at
// run time (optim::Flags), so each rule is one kernel per dtype.
//
// Capturable Adam/AdamW (adam_device_step) reads its step count and lr on the device instead.
//
// One launch per tensor: the multi-tensor ops (ops/optim.cpp) compute per-tensor coefficients
// (each param has its own step count) and call the per-tensor kernel table, so a fused
// multi-tensor launch would need a new kernel table and op-layer changes (not done here).
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/optim.h"
#include "tinytorch/optim_math.h"

namespace tt::cuda {
namespace {

using optim::Flags;

// Slot 0 is the param, slot 1 the grad (read-only), slots 2.. state; null slots are unused.
template <class T, int K>
struct Slots {
  T* p[K];
};

// Element e of every slot: v[k] = slot k (0 where null), rule(v), then every non-null slot
// but the grad stored back.
template <class T, int K, class Rule>
__device__ __forceinline__ void step_one(const Slots<T, K>& s, int64_t e, const Rule& rule, Flags f) {
  using M = opmath_t<T>;
  M v[K];
#pragma unroll
  for (int k = 0; k < K; ++k) v[k] = s.p[k] ? static_cast<M>(s.p[k][e]) : M(0);
  rule(v, f);
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (k != 1 && s.p[k]) s.p[k][e] = static_cast<T>(v[k]);
}

// n elements, one per thread.
template <class T, int K, class Rule>
__device__ __forceinline__ void scalar_loop(int64_t n, const Slots<T, K>& s, const Rule& rule, Flags f) {
  TT_GRID_STRIDE(i, n) { step_one(s, i, rule, f); }
}

// The same, V elements per thread through 16-byte loads/stores (all slots 16-byte aligned).
template <class T, int K, int V, class Rule>
__device__ __forceinline__ void vec_loop(int64_t n, const Slots<T, K>& s, const Rule& rule, Flags f) {
  using M = opmath_t<T>;
  int64_t nvec = n / V;
  TT_GRID_STRIDE(iv, nvec) {
    Vec<T, V> in[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (s.p[k]) in[k] = reinterpret_cast<const Vec<T, V>*>(s.p[k])[iv];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      M v[K];
#pragma unroll
      for (int k = 0; k < K; ++k) v[k] = s.p[k] ? static_cast<M>(in[k].v[j]) : M(0);
      rule(v, f);
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (k != 1) in[k].v[j] = static_cast<T>(v[k]);
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (k != 1 && s.p[k]) reinterpret_cast<Vec<T, V>*>(s.p[k])[iv] = in[k];
  }
  TT_GRID_STRIDE(i, n - nvec * V) { step_one(s, nvec * V + i, rule, f); }
}

template <class T, int K, int V, class Rule>
__global__ void optim_kernel(int64_t n, Slots<T, K> s, Rule rule, Flags f) {
  if constexpr (V > 1) vec_loop<T, K, V>(n, s, rule, f);
  else scalar_loop<T, K>(n, s, rule, f);
}

// Adam with the step count (and the learning rate, when given as a tensor) read on the device,
// so a CUDA graph replays it with the current values: the host-made rule's step-dependent
// fields are recomputed per thread from *step, as the op layer computes them on the host.
struct DeviceStep {
  const float* step;    // one element, already incremented
  const float* lr32;    // lr as a one-element float32 / float64 tensor, or both null (host lr)
  const double* lr64;
  double lr, beta1, beta2, weight_decay;
};

template <class T, int K, int V, class Rule>
__global__ void adam_device_step_kernel(int64_t n, Slots<T, K> s, Rule host_rule, Flags f, DeviceStep d) {
  using M = opmath_t<T>;
  double t = *d.step;
  double lr = d.lr32 ? double(*d.lr32) : d.lr64 ? *d.lr64 : d.lr;
  Rule rule = host_rule;
  rule.step_size = M(lr / (1 - pow(d.beta1, t)));
  rule.inv_bc2s = M(1.0 / sqrt(1 - pow(d.beta2, t)));
  rule.pro.decay = M(1.0 - lr * d.weight_decay);
  if constexpr (V > 1) vec_loop<T, K, V>(n, s, rule, f);
  else scalar_loop<T, K>(n, s, rule, f);
}

// step: (1,) float32; += 1 before the update reads it (one thread: stream-ordered).
__global__ void increment_step_kernel(float* step) { *step += 1.0f; }

template <class T>
T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

// Runs Rule over param.numel() elements of (param, grad, state...).
template <template <class> class Rule, class C, class... Ts>
void step(const C& c, const Tensor& param, const Ts&... slots) {
  TT_DISPATCH_FLOATING(param.dtype(), Rule<float>::kName, [&] {
    using T = scalar_t;
    using R = Rule<opmath_t<T>>;
    constexpr int K = R::kSlots;
    static_assert(K == sizeof...(Ts) + 1, "one tensor per slot");
    int64_t n = param.numel();
    if (n == 0) return;
    Slots<T, K> s{{param.data<T>(), ptr_or_null<T>(slots)...}};
    bool aligned = true;
    for (int k = 0; k < K; ++k) aligned = aligned && (!s.p[k] || aligned16(s.p[k]));
    const R rule(c);
    const Flags f{R::flags(c)};
    DeviceGuard guard(param.device());
    cudaStream_t stream = current_stream(param.device().index);
    constexpr int V = vec_width<T>();
    if (aligned && V > 1) optim_kernel<T, K, V><<<grid_for(n, V), kThreads, 0, stream>>>(n, s, rule, f);
    else optim_kernel<T, K, 1><<<grid_for(n), kThreads, 0, stream>>>(n, s, rule, f);
    TT_CUDA_KERNEL_CHECK();
  });
}

// Adam with its step count on the device (kernels/optim.h: adam_device_step).
void adam_device_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                      const Tensor& max_exp_avg_sq, const Tensor& step, const Tensor& lr, const AdamCoeffs& c) {
  DeviceGuard guard(param.device());
  cudaStream_t stream = current_stream(param.device().index);
  increment_step_kernel<<<1, 1, 0, stream>>>(step.data<float>());
  TT_CUDA_KERNEL_CHECK();
  DeviceStep d{step.data<float>(), nullptr, nullptr, c.lr, c.beta1, c.beta2, c.weight_decay};
  if (lr.defined()) {
    if (lr.dtype() == DType::Float64) d.lr64 = lr.data<double>();
    else d.lr32 = lr.data<float>();
  }
  TT_DISPATCH_FLOATING(param.dtype(), "adam_device_step", [&] {
    using T = scalar_t;
    using R = optim::AdamRule<opmath_t<T>>;
    constexpr int K = R::kSlots;
    int64_t n = param.numel();
    if (n == 0) return;
    Slots<T, K> s{{param.data<T>(), grad.data<T>(), exp_avg.data<T>(), exp_avg_sq.data<T>(),
                   ptr_or_null<T>(max_exp_avg_sq)}};
    bool aligned = true;
    for (int k = 0; k < K; ++k) aligned = aligned && (!s.p[k] || aligned16(s.p[k]));
    const R rule(c);
    const Flags f{R::flags(c)};
    constexpr int V = vec_width<T>();
    if (aligned && V > 1)
      adam_device_step_kernel<T, K, V><<<grid_for(n, V), kThreads, 0, stream>>>(n, s, rule, f, d);
    else
      adam_device_step_kernel<T, K, 1><<<grid_for(n), kThreads, 0, stream>>>(n, s, rule, f, d);
    TT_CUDA_KERNEL_CHECK();
  });
}

// The kernel entry of Rule: the arguments as kernels/optim.h declares them.
template <template <class> class Rule, class... Args>
void step_kernel(const Args&... args) {
  call_coeffs_first([](const auto&... a) { step<Rule>(a...); }, args...);
}

}  // namespace

TT_REGISTER_KERNEL(adam_device_step, CUDA, adam_device_step)
#define TT_REGISTER_STEP(NAME, RULE) TT_REGISTER_KERNEL(NAME, CUDA, step_kernel<optim::RULE>)
TT_OPTIM_STEP_RULES(TT_REGISTER_STEP)
#undef TT_REGISTER_STEP

}  // namespace tt::cuda
