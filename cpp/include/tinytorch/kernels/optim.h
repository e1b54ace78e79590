#pragma once
// Fused optimizer step kernels. Each updates one parameter and its state tensors IN PLACE
// (no allocation). Kernels receive validated operands: param, grad and every state tensor
// share shape, dtype and device and are contiguous; math runs in opmath_t (float for 16-bit
// floats), each value rounded once on store. Step-dependent scalars (bias corrections, ...)
// are computed by the op layer (ops/optim.h) and passed here ready to use.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

// g = maximize ? -grad : grad; g += weight_decay * p
// momentum != 0: buf = first_step ? g : momentum * buf + (1 - dampening) * g;
//                g = nesterov ? g + momentum * buf : buf
// p -= lr * g
struct SgdCoeffs {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false, first_step = false;
};

// g = maximize ? -grad : grad; weight decay: decoupled ? p *= 1 - lr*wd : g += wd * p
// m += (1 - beta1) * (g - m); v = beta2 * v + (1 - beta2) * g * g
// amsgrad: vmax = max(vmax, v), v' = vmax (else v' = v)
// p -= step_size * m / (sqrt(v') / bias_correction2_sqrt + eps)
struct AdamCoeffs {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double step_size = 0, bias_correction2_sqrt = 1;
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;
};

// sq = rho * sq + (1 - rho) g^2; d = sqrt(acc + eps) / sqrt(sq + eps) * g
// acc = rho * acc + (1 - rho) d^2; p -= lr * d
struct AdadeltaCoeffs {
  double lr = 0, rho = 0, eps = 0, weight_decay = 0;
  bool maximize = false;
};

// sum += g^2; p -= clr * g / (sqrt(sum) + eps)
struct AdagradCoeffs {
  double clr = 0, eps = 0, weight_decay = 0;
  bool maximize = false;
};

// sq = alpha * sq + (1 - alpha) g^2; centered: ga += (1 - alpha)(g - ga), avg = sqrt(sq - ga^2) + eps
// else avg = sqrt(sq) + eps; momentum > 0: buf = momentum * buf + g / avg, p -= lr * buf
// else p -= lr * g / avg
struct RmspropCoeffs {
  double lr = 0, alpha = 0, eps = 0, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};

// m += (1 - beta1)(g - m); u = max(beta2 * u, |g| + eps); p -= clr * m / u
struct AdamaxCoeffs {
  double clr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  bool maximize = false;
};

// m, v as Adam; denom = sqrt(v / bias_correction2) + eps
// p += coef_grad * g / denom + coef_avg * m / denom
struct NadamCoeffs {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double bias_correction2 = 1, coef_grad = 0, coef_avg = 0;
  bool decoupled_weight_decay = false, maximize = false;
};

// m, v as Adam; rect > 0: p -= lr * rect * (m / bc1) * bc2_sqrt / (sqrt(v) + eps)
// else p -= lr * m / bc1
struct RadamCoeffs {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  double bias_correction1 = 1, bias_correction2_sqrt = 1, rect = 0;
  bool decoupled_weight_decay = false, maximize = false;
};

// buf is undefined when momentum == 0.
TT_DECLARE_KERNEL(sgd_step, const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdCoeffs& c)
// max_exp_avg_sq is undefined unless amsgrad.
TT_DECLARE_KERNEL(adam_step, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, const AdamCoeffs& c)
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
