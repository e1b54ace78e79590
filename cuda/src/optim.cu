// CUDA fused optimizer steps: one pass over contiguous param/grad/state, in place, 16-byte
// vector loads and stores when every operand is aligned. Math in opmath_t and in the same
// order as the CPU kernels (cpu/optim.cpp), each value rounded once on store.
//
// One launch per tensor: the multi-tensor ops (ops/optim.cpp) compute per-tensor coefficients
// (each param has its own step count) and call the per-tensor kernel table, so a fused
// multi-tensor launch would need a new kernel table and op-layer changes (not done here).
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/optim.h"

namespace tt::cuda {
namespace {

__device__ __forceinline__ float dsqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double dsqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float dabs(float v) { return fabsf(v); }
__device__ __forceinline__ double dabs(double v) { return fabs(v); }
// std::max(a, b) as the CPU spells it: a unless a < b (NaN handling included).
template <class M>
__device__ __forceinline__ M smax(M a, M b) { return a < b ? b : a; }

// Slot 0 is the param, slot 1 the grad (read-only), slots 2.. state; null slots are unused.
template <class T, int K>
struct Slots {
  T* p[K];
};

// v[k] = op-updated values of element i; every non-null slot but the grad is stored back.
template <class T, int K, class Op>
__global__ void optim_scalar_kernel(int64_t n, Slots<T, K> s, Op op) {
  using M = opmath_t<T>;
  TT_GRID_STRIDE(i, n) {
    M v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = s.p[k] ? static_cast<M>(s.p[k][i]) : M(0);
    op(v);
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (k != 1 && s.p[k]) s.p[k][i] = static_cast<T>(v[k]);
  }
}

// The same, V elements per thread through 16-byte loads/stores (all slots 16-byte aligned).
template <class T, int K, int V, class Op>
__global__ void optim_vec_kernel(int64_t n, Slots<T, K> s, Op op) {
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
      op(v);
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (k != 1) in[k].v[j] = static_cast<T>(v[k]);
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (k != 1 && s.p[k]) reinterpret_cast<Vec<T, V>*>(s.p[k])[iv] = in[k];
  }
  TT_GRID_STRIDE(i, n - nvec * V) {
    int64_t e = nvec * V + i;
    M v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = s.p[k] ? static_cast<M>(s.p[k][e]) : M(0);
    op(v);
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (k != 1 && s.p[k]) s.p[k][e] = static_cast<T>(v[k]);
  }
}

template <class T>
T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

// Launches op over param.numel() elements of the given tensors (param, grad, state...).
template <class T, class Op, class... Ts>
void apply(const Tensor& param, Op op, const Ts&... ts) {
  constexpr int K = sizeof...(Ts);
  int64_t n = param.numel();
  if (n == 0) return;
  Slots<T, K> s{{ptr_or_null<T>(ts)...}};
  bool aligned = true;
  for (int k = 0; k < K; ++k) aligned = aligned && (!s.p[k] || aligned16(s.p[k]));
  DeviceGuard guard(param.device());
  cudaStream_t stream = current_stream(param.device().index);
  constexpr int V = vec_width<T>();
  if (aligned && V > 1) optim_vec_kernel<T, K, V><<<grid_for(n, V), kThreads, 0, stream>>>(n, s, op);
  else optim_scalar_kernel<T, K><<<grid_for(n), kThreads, 0, stream>>>(n, s, op);
  TT_CUDA_KERNEL_CHECK();
}

// Shared prologue: g = maximize ? -grad : grad; weight decay (coupled into g, or decoupled p *= decay).
template <class M>
struct Prologue {
  M wd, decay;
  bool maximize, has_wd, decoupled;
  __device__ __forceinline__ void operator()(M& pv, M& gv) const {
    if (maximize) gv = -gv;
    if (has_wd) {
      if (decoupled) pv *= decay;
      else gv += wd * pv;
    }
  }
};

template <class M>
Prologue<M> prologue(double lr, double wd, bool maximize, bool decoupled) {
  return {M(wd), M(1.0 - lr * wd), maximize, wd != 0, decoupled};
}

// [p, g, buf]
template <class M>
struct SgdOp {
  Prologue<M> pro;
  M lr, mom, damp1;
  bool has_buf, first, nesterov;
  __device__ void operator()(M (&v)[3]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    if (has_buf) {
      M bv = first ? gv : mom * v[2] + damp1 * gv;
      v[2] = bv;
      gv = nesterov ? gv + mom * bv : bv;
    }
    v[0] = pv - lr * gv;
  }
};

void cuda_sgd_step(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "sgd_step_", [&] {
    using M = opmath_t<scalar_t>;
    SgdOp<M> op{prologue<M>(c.lr, c.weight_decay, c.maximize, false), M(c.lr), M(c.momentum), M(1.0 - c.dampening),
                buf.defined(), c.first_step, c.nesterov};
    apply<scalar_t>(param, op, param, grad, buf);
  });
}

// [p, g, exp_avg, exp_avg_sq, max_exp_avg_sq]
template <class M>
struct AdamOp {
  Prologue<M> pro;
  M omb1, b2, omb2, step_size, inv_bc2s, eps;
  bool amsgrad;
  __device__ void operator()(M (&v)[5]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M m = v[2];
    m += omb1 * (gv - m);
    v[2] = m;
    M vv = b2 * v[3] + omb2 * gv * gv;
    v[3] = vv;
    if (amsgrad) {
      vv = smax(v[4], vv);
      v[4] = vv;
    }
    M denom = dsqrt(vv) * inv_bc2s + eps;
    v[0] = pv - step_size * (m / denom);
  }
};

void cuda_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                    const Tensor& max_exp_avg_sq, const AdamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adam_step_", [&] {
    using M = opmath_t<scalar_t>;
    AdamOp<M> op{prologue<M>(c.lr, c.weight_decay, c.maximize, c.decoupled_weight_decay), M(1.0 - c.beta1), M(c.beta2),
                 M(1.0 - c.beta2), M(c.step_size), M(1.0 / c.bias_correction2_sqrt), M(c.eps), c.amsgrad};
    apply<scalar_t>(param, op, param, grad, exp_avg, exp_avg_sq, c.amsgrad ? max_exp_avg_sq : Tensor());
  });
}

// [p, g, square_avg, acc_delta]
template <class M>
struct AdadeltaOp {
  Prologue<M> pro;
  M lr, rho, omr, eps;
  __device__ void operator()(M (&v)[4]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M sv = rho * v[2] + omr * gv * gv;
    v[2] = sv;
    M a = v[3];
    M delta = dsqrt(a + eps) / dsqrt(sv + eps) * gv;
    v[3] = rho * a + omr * delta * delta;
    v[0] = pv - lr * delta;
  }
};

void cuda_adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                        const AdadeltaCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adadelta_step_", [&] {
    using M = opmath_t<scalar_t>;
    AdadeltaOp<M> op{prologue<M>(c.lr, c.weight_decay, c.maximize, false), M(c.lr), M(c.rho), M(1.0 - c.rho),
                     M(c.eps)};
    apply<scalar_t>(param, op, param, grad, square_avg, acc_delta);
  });
}

// [p, g, state_sum]
template <class M>
struct AdagradOp {
  Prologue<M> pro;
  M clr, eps;
  __device__ void operator()(M (&v)[3]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M sv = v[2] + gv * gv;
    v[2] = sv;
    v[0] = pv - clr * (gv / (dsqrt(sv) + eps));
  }
};

void cuda_adagrad_step(const Tensor& param, const Tensor& grad, const Tensor& state_sum, const AdagradCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adagrad_step_", [&] {
    using M = opmath_t<scalar_t>;
    // The CPU kernel's coupled weight decay uses weight_decay alone (no lr in the decay factor).
    AdagradOp<M> op{prologue<M>(0.0, c.weight_decay, c.maximize, false), M(c.clr), M(c.eps)};
    apply<scalar_t>(param, op, param, grad, state_sum);
  });
}

// [p, g, square_avg, momentum_buffer, grad_avg]
template <class M>
struct RmspropOp {
  Prologue<M> pro;
  M lr, alpha, oma, eps, mom;
  bool centered, has_momentum;
  __device__ void operator()(M (&v)[5]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M sv = alpha * v[2] + oma * gv * gv;
    v[2] = sv;
    M avg;
    if (centered) {
      M a = v[4];
      a += oma * (gv - a);
      v[4] = a;
      avg = dsqrt(sv - a * a) + eps;
    } else {
      avg = dsqrt(sv) + eps;
    }
    if (has_momentum) {
      M bv = mom * v[3] + gv / avg;
      v[3] = bv;
      v[0] = pv - lr * bv;
    } else {
      v[0] = pv - lr * (gv / avg);
    }
  }
};

void cuda_rmsprop_step(const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                       const Tensor& momentum_buffer, const Tensor& grad_avg, const RmspropCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "rmsprop_step_", [&] {
    using M = opmath_t<scalar_t>;
    RmspropOp<M> op{prologue<M>(c.lr, c.weight_decay, c.maximize, false), M(c.lr), M(c.alpha), M(1.0 - c.alpha),
                    M(c.eps), M(c.momentum), c.centered, c.momentum > 0};
    apply<scalar_t>(param, op, param, grad, square_avg, c.momentum > 0 ? momentum_buffer : Tensor(),
                    c.centered ? grad_avg : Tensor());
  });
}

// [p, g, exp_avg, exp_inf]
template <class M>
struct AdamaxOp {
  Prologue<M> pro;
  M clr, omb1, b2, eps;
  __device__ void operator()(M (&v)[4]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M m = v[2];
    m += omb1 * (gv - m);
    v[2] = m;
    M uv = smax(b2 * v[3], dabs(gv) + eps);
    v[3] = uv;
    v[0] = pv - clr * (m / uv);
  }
};

void cuda_adamax_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                      const AdamaxCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "adamax_step_", [&] {
    using M = opmath_t<scalar_t>;
    AdamaxOp<M> op{prologue<M>(0.0, c.weight_decay, c.maximize, false), M(c.clr), M(1.0 - c.beta1), M(c.beta2),
                   M(c.eps)};
    apply<scalar_t>(param, op, param, grad, exp_avg, exp_inf);
  });
}

// [p, g, exp_avg, exp_avg_sq]
template <class M>
struct NadamOp {
  Prologue<M> pro;
  M omb1, b2, omb2, eps, inv_bc2, cg, ca;
  __device__ void operator()(M (&v)[4]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M m = v[2];
    m += omb1 * (gv - m);
    v[2] = m;
    M vv = b2 * v[3] + omb2 * gv * gv;
    v[3] = vv;
    M denom = dsqrt(vv * inv_bc2) + eps;
    pv += cg * (gv / denom);
    pv += ca * (m / denom);
    v[0] = pv;
  }
};

void cuda_nadam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                     const NadamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "nadam_step_", [&] {
    using M = opmath_t<scalar_t>;
    NadamOp<M> op{prologue<M>(c.lr, c.weight_decay, c.maximize, c.decoupled_weight_decay), M(1.0 - c.beta1),
                  M(c.beta2), M(1.0 - c.beta2), M(c.eps), M(1.0 / c.bias_correction2), M(c.coef_grad), M(c.coef_avg)};
    apply<scalar_t>(param, op, param, grad, exp_avg, exp_avg_sq);
  });
}

// [p, g, exp_avg, exp_avg_sq]
template <class M>
struct RadamOp {
  Prologue<M> pro;
  M omb1, b2, omb2, eps, lr, inv_bc1, bc2s, rect;
  bool adaptive;
  __device__ void operator()(M (&v)[4]) const {
    M pv = v[0], gv = v[1];
    pro(pv, gv);
    M m = v[2];
    m += omb1 * (gv - m);
    v[2] = m;
    M vv = b2 * v[3] + omb2 * gv * gv;
    v[3] = vv;
    M corrected = m * inv_bc1;
    if (adaptive) v[0] = pv - corrected * lr * (bc2s / (dsqrt(vv) + eps)) * rect;
    else v[0] = pv - corrected * lr;
  }
};

void cuda_radam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                     const RadamCoeffs& c) {
  TT_DISPATCH_FLOATING(param.dtype(), "radam_step_", [&] {
    using M = opmath_t<scalar_t>;
    RadamOp<M> op{prologue<M>(c.lr, c.weight_decay, c.maximize, c.decoupled_weight_decay), M(1.0 - c.beta1),
                  M(c.beta2), M(1.0 - c.beta2), M(c.eps), M(c.lr), M(1.0 / c.bias_correction1),
                  M(c.bias_correction2_sqrt), M(c.rect), c.rect > 0};
    apply<scalar_t>(param, op, param, grad, exp_avg, exp_avg_sq);
  });
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
