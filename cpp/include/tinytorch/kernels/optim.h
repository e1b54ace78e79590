#pragma once
// Fused optimizer step kernels. Each updates one parameter and its state tensors IN PLACE
// (no allocation). Kernels receive validated operands: param, grad and every state tensor
// share shape, dtype and device and are contiguous; math runs in opmath_t (float for 16-bit
// floats), each value rounded once on store. Step-dependent scalars (bias corrections, ...)
// are computed by the op layer (ops/optim.h) and passed here ready to use. The update rules,
// one per Coeffs struct, are in tinytorch/optim_math.h.
#include <cstddef>
#include <tuple>
#include <utility>
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

struct SgdCoeffs {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false, first_step = false;
};

struct AdamCoeffs {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double step_size = 0, bias_correction2_sqrt = 1;  // lr / (1 - beta1^step), sqrt(1 - beta2^step)
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;
};

struct AdadeltaCoeffs {
  double lr = 0, rho = 0, eps = 0, weight_decay = 0;
  bool maximize = false;
};

struct AdagradCoeffs {
  double clr = 0;  // lr / (1 + (step - 1) * lr_decay)
  double eps = 0, weight_decay = 0;
  bool maximize = false;
};

struct RmspropCoeffs {
  double lr = 0, alpha = 0, eps = 0, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};

struct AdamaxCoeffs {
  double clr = 0;  // lr / (1 - beta1^step)
  double beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  bool maximize = false;
};

struct NadamCoeffs {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double bias_correction2 = 1, coef_grad = 0, coef_avg = 0;
  bool decoupled_weight_decay = false, maximize = false;
};

struct RadamCoeffs {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double bias_correction1 = 1, bias_correction2_sqrt = 1, rect = 0;
  bool decoupled_weight_decay = false, maximize = false;
};

// Calls f(coeffs, param, grad, state...) for kernel arguments (param, grad, state..., coeffs):
// each backend then registers one function template per update rule (cpu/optim.cpp, optim.cu).
template <class F, class Tuple, size_t... I>
void call_coeffs_first_impl(const F& f, const Tuple& args, std::index_sequence<I...>) {
  f(std::get<sizeof...(I)>(args), std::get<I>(args)...);
}
template <class F, class... Args>
void call_coeffs_first(const F& f, const Args&... args) {
  call_coeffs_first_impl(f, std::tie(args...), std::make_index_sequence<sizeof...(Args) - 1>{});
}

// buf is undefined when momentum == 0.
TT_DECLARE_KERNEL(sgd_step, const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c)
// max_exp_avg_sq is undefined unless amsgrad.
TT_DECLARE_KERNEL(adam_step, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, const AdamCoeffs& c)
// Adam for CUDA graphs (capturable=True): step (a one-element float32 tensor on the param's
// device) is incremented on the device, then the bias corrections are computed there from it;
// lr, when defined, is a one-element float32/float64 device tensor read there (else c.lr). c's
// step_size and bias_correction2_sqrt are unused. CUDA only.
TT_DECLARE_KERNEL(adam_device_step, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, const Tensor& step, const Tensor& lr,
                  const AdamCoeffs& c)
TT_DECLARE_KERNEL(adadelta_step, const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                  const Tensor& acc_delta, const AdadeltaCoeffs& c)
TT_DECLARE_KERNEL(adagrad_step, const Tensor& param, const Tensor& grad, const Tensor& state_sum,
                  const AdagradCoeffs& c)
// momentum_buffer undefined unless momentum > 0; grad_avg undefined unless centered.
TT_DECLARE_KERNEL(rmsprop_step, const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                  const Tensor& momentum_buffer, const Tensor& grad_avg, const RmspropCoeffs& c)
TT_DECLARE_KERNEL(adamax_step, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_inf, const AdamaxCoeffs& c)
TT_DECLARE_KERNEL(nadam_step, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, const NadamCoeffs& c)
TT_DECLARE_KERNEL(radam_step, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, const RadamCoeffs& c)

}  // namespace tt
