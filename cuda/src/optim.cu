// CUDA fused optimizer steps: one pass over contiguous param/grad/state, in place, 16-byte
// vector loads and stores when every operand is aligned. The update rules are
// tinytorch/optim_math.h's (as on the CPU); this file supplies the loops. Options are read at
// run time (optim::Flags), so each rule is one kernel per dtype.
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
__global__ void optim_scalar_kernel(int64_t n, Slots<T, K> s, Rule rule, Flags f) {
  TT_GRID_STRIDE(i, n) { step_one(s, i, rule, f); }
}

// The same, V elements per thread through 16-byte loads/stores (all slots 16-byte aligned).
template <class T, int K, int V, class Rule>
__global__ void optim_vec_kernel(int64_t n, Slots<T, K> s, Rule rule, Flags f) {
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
    if (aligned && V > 1) optim_vec_kernel<T, K, V><<<grid_for(n, V), kThreads, 0, stream>>>(n, s, rule, f);
    else optim_scalar_kernel<T, K><<<grid_for(n), kThreads, 0, stream>>>(n, s, rule, f);
    TT_CUDA_KERNEL_CHECK();
  });
}

void cuda_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c) {
  step<optim::SgdRule>(c, param, grad, buf);
}

void cuda_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const Tensor& max_exp_avg_sq, const AdamCoeffs& c) {
  step<optim::AdamRule>(c, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq);
}

void cuda_adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                        const AdadeltaCoeffs& c) {
  step<optim::AdadeltaRule>(c, param, grad, square_avg, acc_delta);
}

void cuda_adagrad_step(const Tensor& param, const Tensor& grad, const Tensor& state_sum, const AdagradCoeffs& c) {
  step<optim::AdagradRule>(c, param, grad, state_sum);
}

void cuda_rmsprop_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                       const Tensor& momentum_buffer, const Tensor& grad_avg, const RmspropCoeffs& c) {
  step<optim::RmspropRule>(c, param, grad, square_avg, momentum_buffer, grad_avg);
}

void cuda_adamax_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                      const AdamaxCoeffs& c) {
  step<optim::AdamaxRule>(c, param, grad, exp_avg, exp_inf);
}

void cuda_nadam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                     const NadamCoeffs& c) {
  step<optim::NadamRule>(c, param, grad, exp_avg, exp_avg_sq);
}

void cuda_radam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                     const RadamCoeffs& c) {
  step<optim::RadamRule>(c, param, grad, exp_avg, exp_avg_sq);
}

}  // namespace

TT_REGISTER_KERNEL(sgd_step, CUDA, cuda_sgd_step)
TT_REGISTER_KERNEL(adam_step, CUDA, cuda_adam_step)
TT_REGISTER_KERNEL(adadelta_step, CUDA, cuda_adadelta_step)
TT_REGISTER_KERNEL(adagrad_step, CUDA, cuda_adagrad_step)
TT_REGISTER_KERNEL(rmsprop_step, CUDA, cuda_rmsprop_step)
TT_REGISTER_KERNEL(adamax_step, CUDA, cuda_adamax_step)
TT_REGISTER_KERNEL(nadam_step, CUDA, cuda_nadam_step)
TT_REGISTER_KERNEL(radam_step, CUDA, cuda_radam_step)

}  // namespace tt::cuda
