#pragma once
// Device-independent optimizer steps: validate operands (shape/dtype/device/contiguity),
// compute the step-dependent scalars, then run the device's fused kernel (kernels/optim.h).
// Every function updates param and state IN PLACE and bumps their version counters.
//
// Each op loops over lists of tensors (one per param) in one call and takes `state_steps`: 0-dim
// CPU tensors (float32, float64 or int64, PyTorch keeps float32) which it increments in place
// before computing the update. Optional state lists (momentum buffers, max_exp_avg_sqs, ...)
// are empty when unused.
#include <vector>
#include "tinytorch/kernels/optim.h"

namespace tt {

using TensorList = std::vector<Tensor>;

// momentum_bufs empty when momentum == 0; first_step: buf = g instead of the decay.
void sgd_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& momentum_bufs, double lr,
                     double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
                     bool first_step);

void adam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                      const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& state_steps,
                      double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
                      bool maximize, bool decoupled_weight_decay);

// capturable=True: on CUDA the step counts (one-element float32 tensors on each param's device)
// are incremented and read on the device, and lr_tensor (undefined: lr) is read there too, so
// the step can be captured in a CUDA graph; CPU params take adam_step_multi_'s host path.
void adam_step_capturable_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                                 const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
                                 const TensorList& state_steps, const Tensor& lr_tensor, double lr, double beta1,
                                 double beta2, double eps, double weight_decay, bool amsgrad, bool maximize,
                                 bool decoupled_weight_decay);

void adadelta_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                          const TensorList& acc_deltas, const TensorList& state_steps, double lr, double rho,
                          double eps, double weight_decay, bool maximize);

void adagrad_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                         const TensorList& state_steps, double lr, double lr_decay, double weight_decay, double eps,
                         bool maximize);

void rmsprop_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                         const TensorList& momentum_buffers, const TensorList& grad_avgs,
                         const TensorList& state_steps, double lr, double alpha, double eps, double weight_decay,
                         double momentum, bool centered, bool maximize);

void adamax_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                        const TensorList& exp_infs, const TensorList& state_steps, double lr, double beta1,
                        double beta2, double eps, double weight_decay, bool maximize);

// mu_products: 0-dim CPU tensors (PyTorch's state["mu_product"]), multiplied by mu_t in place.
void nadam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                       const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& state_steps,
                       double lr, double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                       bool decoupled_weight_decay, bool maximize);

void radam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                       const TensorList& exp_avg_sqs, const TensorList& state_steps, double lr, double beta1,
                       double beta2, double eps, double weight_decay, bool decoupled_weight_decay, bool maximize);

}  // namespace tt
