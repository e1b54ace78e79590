// Optimizer step ops: argument checks and step-dependent scalars; the math is in the kernels.
#include "tinytorch/ops/optim.h"
#include <cmath>
#include <string>

namespace tt {

TT_DEFINE_KERNEL(sgd_step)
TT_DEFINE_KERNEL(adam_step)
TT_DEFINE_KERNEL(adadelta_step)
TT_DEFINE_KERNEL(adagrad_step)
TT_DEFINE_KERNEL(rmsprop_step)
TT_DEFINE_KERNEL(adamax_step)
TT_DEFINE_KERNEL(nadam_step)
TT_DEFINE_KERNEL(radam_step)

namespace {

// "exp_avg" for single-tensor ops, "exp_avg of tensor 3" for the multi-tensor forms.
std::string label(const char* name, int64_t index) {
  return index < 0 ? std::string(name) : str_cat(name, " of tensor ", index);
}

void check_param(const char* op, const Tensor& p, int64_t index) {
  TT_CHECK(p.defined(), op, ": ", label("param", index), " is undefined");
  TT_CHECK_TYPE(is_floating(p.dtype()), op, ": ", label("param", index),
                " must be a floating point tensor, got ", p.describe());
  TT_CHECK(p.is_contiguous(), op, ": ", label("param", index), " must be contiguous (", p.describe(),
           "); optimizers update parameters in place");
}

// Same shape/dtype/device as param; returned contiguous (a copy only if it was not).
Tensor check_grad(const char* op, const Tensor& p, const Tensor& g, int64_t index) {
  TT_CHECK(g.defined(), op, ": ", label("grad", index), " is undefined");
  TT_CHECK(g.shape() == p.shape(), op, ": ", label("grad", index), " has shape ", shape_str(g.shape()),
           " but its param has shape ", shape_str(p.shape()));
  TT_CHECK(g.dtype() == p.dtype(), op, ": ", label("grad", index), " has dtype ", dtype_name(g.dtype()),
           " but its param has dtype ", dtype_name(p.dtype()));
  TT_CHECK(g.device() == p.device(), op, ": ", label("grad", index), " is on ", g.device().str(),
           " but its param is on ", p.device().str());
  return g.contiguous();
}

void check_state(const char* op, const char* name, const Tensor& p, const Tensor& s, int64_t index) {
  TT_CHECK(s.defined(), op, ": ", label(name, index), " is missing");
  TT_CHECK(s.shape() == p.shape(), op, ": ", label(name, index), " has shape ", shape_str(s.shape()),
           " but its param has shape ", shape_str(p.shape()));
  TT_CHECK(s.dtype() == p.dtype(), op, ": ", label(name, index), " has dtype ", dtype_name(s.dtype()),
           " but its param has dtype ", dtype_name(p.dtype()));
  TT_CHECK(s.device() == p.device(), op, ": ", label(name, index), " is on ", s.device().str(),
           " but its param is on ", p.device().str());
  TT_CHECK(s.is_contiguous(), op, ": ", label(name, index), " must be contiguous (", s.describe(), ")");
  TT_CHECK(s.storage() != p.storage(), op, ": ", label(name, index), " shares memory with its param");
}

void check_scalar_state(const char* op, const char* name, const Tensor& s, int64_t index) {
  TT_CHECK(s.defined() && s.numel() == 1 && s.device().is_cpu() &&
               (s.dtype() == DType::Float32 || s.dtype() == DType::Float64 || s.dtype() == DType::Int64),
           op, ": ", label(name, index), " must be a one-element float32/float64/int64 CPU tensor, got ",
           s.defined() ? s.describe() : std::string("undefined"));
}

double read_scalar(const Tensor& s) {
  switch (s.dtype()) {
    case DType::Float32: return *s.data<float>();
    case DType::Float64: return *s.data<double>();
    default: return static_cast<double>(*s.data<int64_t>());
  }
}

void write_scalar(const Tensor& s, double v) {
  switch (s.dtype()) {
    case DType::Float32: *s.data<float>() = static_cast<float>(v); break;
    case DType::Float64: *s.data<double>() = v; break;
    default: *s.data<int64_t>() = static_cast<int64_t>(v); break;
  }
  s.bump_version();
}

// step += 1 in place; returns the new value as stored.
double increment_step(const Tensor& s) {
  write_scalar(s, read_scalar(s) + 1);
  return read_scalar(s);
}

void check_count(const char* op, const char* name, size_t got, size_t want) {
  TT_CHECK(got == want, op, ": expected ", want, " ", name, " (one per param), got ", got);
}

void check_lr(const char* op, double lr) { TT_CHECK_VALUE(lr >= 0, op, ": Invalid learning rate: ", lr); }
void check_beta(const char* op, const char* name, double b) {
  TT_CHECK_VALUE(b >= 0 && b < 1, op, ": Invalid ", name, " parameter: ", b);
}

void bump(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->defined()) t->bump_version();
}

Tensor at_or_undef(const TensorList& l, size_t i) { return l.empty() ? Tensor() : l[i]; }

}  // namespace

// ------------------------------------------------------------------------------------- SGD

static void sgd_impl(const char* op, const TensorList& params, const TensorList& grads, const TensorList& bufs,
                     const SgdCoeffs& c, bool single) {
  check_lr(op, c.lr);
  TT_CHECK_VALUE(c.momentum >= 0, op, ": Invalid momentum value: ", c.momentum);
  TT_CHECK_VALUE(!c.nesterov || (c.momentum > 0 && c.dampening == 0), op,
                 ": Nesterov momentum requires a momentum and zero dampening");
  check_count(op, "grads", grads.size(), params.size());
  if (c.momentum != 0) check_count(op, "momentum buffers", bufs.size(), params.size());
  std::vector<Tensor> gs(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    int64_t idx = single ? -1 : static_cast<int64_t>(i);
    check_param(op, params[i], idx);
    gs[i] = check_grad(op, params[i], grads[i], idx);
    if (c.momentum != 0) check_state(op, "momentum_buffer", params[i], bufs[i], idx);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor buf = c.momentum != 0 ? bufs[i] : Tensor();
    sgd_step_kernel[params[i].device()](params[i], gs[i], buf, c);
    bump({&params[i], &buf});
  }
}

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buf, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov, bool maximize, bool first_step) {
  SgdCoeffs c{lr, momentum, dampening, weight_decay, nesterov, maximize, first_step};
  TensorList bufs;
  if (momentum != 0) bufs.push_back(momentum_buf);
  TT_CHECK(momentum == 0 || momentum_buf.defined(), "sgd_step_: momentum_buf is required when momentum != 0");
  sgd_impl("sgd_step_", {param}, {grad}, bufs, c, true);
}

void sgd_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& momentum_bufs, double lr,
                     double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
                     bool first_step) {
  SgdCoeffs c{lr, momentum, dampening, weight_decay, nesterov, maximize, first_step};
  sgd_impl("sgd_step_multi_", params, grads, momentum_bufs, c, false);
}

// ------------------------------------------------------------------------------------- Adam

static void check_adam_hyper(const char* op, double lr, double beta1, double beta2, double eps, double wd) {
  check_lr(op, lr);
  TT_CHECK_VALUE(eps >= 0, op, ": Invalid epsilon value: ", eps);
  check_beta(op, "beta parameter at index 0", beta1);
  check_beta(op, "beta parameter at index 1", beta2);
  TT_CHECK_VALUE(wd >= 0, op, ": Invalid weight_decay value: ", wd);
}

static AdamCoeffs adam_coeffs(double step, double lr, double beta1, double beta2, double eps, double wd,
                              bool amsgrad, bool maximize, bool decoupled) {
  AdamCoeffs c;
  c.lr = lr; c.beta1 = beta1; c.beta2 = beta2; c.eps = eps; c.weight_decay = wd;
  c.amsgrad = amsgrad; c.maximize = maximize; c.decoupled_weight_decay = decoupled;
  double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
  c.step_size = lr / bc1;
  c.bias_correction2_sqrt = std::sqrt(bc2);
  return c;
}

static void adam_impl(const char* op, const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                      const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList* steps,
                      int64_t step, double lr, double beta1, double beta2, double eps, double wd, bool amsgrad,
                      bool maximize, bool decoupled, bool single) {
  check_adam_hyper(op, lr, beta1, beta2, eps, wd);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "exp_avgs", exp_avgs.size(), n);
  check_count(op, "exp_avg_sqs", exp_avg_sqs.size(), n);
  if (amsgrad) check_count(op, "max_exp_avg_sqs", max_exp_avg_sqs.size(), n);
  if (steps) check_count(op, "state_steps", steps->size(), n);
  else TT_CHECK_VALUE(step >= 1, op, ": step must be >= 1 (the step number after incrementing), got ", step);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t idx = single ? -1 : static_cast<int64_t>(i);
    check_param(op, params[i], idx);
    gs[i] = check_grad(op, params[i], grads[i], idx);
    check_state(op, "exp_avg", params[i], exp_avgs[i], idx);
    check_state(op, "exp_avg_sq", params[i], exp_avg_sqs[i], idx);
    if (amsgrad) check_state(op, "max_exp_avg_sq", params[i], max_exp_avg_sqs[i], idx);
    if (steps) check_scalar_state(op, "state_step", (*steps)[i], idx);
  }
  for (size_t i = 0; i < n; ++i) {
    double s = steps ? increment_step((*steps)[i]) : static_cast<double>(step);
    AdamCoeffs c = adam_coeffs(s, lr, beta1, beta2, eps, wd, amsgrad, maximize, decoupled);
    Tensor mx = amsgrad ? max_exp_avg_sqs[i] : Tensor();
    adam_step_kernel[params[i].device()](params[i], gs[i], exp_avgs[i], exp_avg_sqs[i], mx, c);
    bump({&params[i], &exp_avgs[i], &exp_avg_sqs[i], &mx});
  }
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, int64_t step, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay) {
  TensorList mx;
  if (amsgrad) mx.push_back(max_exp_avg_sq);
  adam_impl("adam_step_", {param}, {grad}, {exp_avg}, {exp_avg_sq}, mx, nullptr, step, lr, beta1, beta2, eps,
            weight_decay, amsgrad, maximize, decoupled_weight_decay, true);
}

void adam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                      const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& state_steps,
                      double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
                      bool maximize, bool decoupled_weight_decay) {
  adam_impl("adam_step_multi_", params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, &state_steps, 0, lr, beta1,
            beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay, false);
}

// --------------------------------------------------------------------------------- Adadelta

static void adadelta_impl(const char* op, const TensorList& params, const TensorList& grads,
                          const TensorList& square_avgs, const TensorList& acc_deltas, const TensorList* steps,
                          const AdadeltaCoeffs& c, bool single) {
  check_lr(op, c.lr);
  TT_CHECK_VALUE(c.rho >= 0 && c.rho <= 1, op, ": Invalid rho value: ", c.rho);
  TT_CHECK_VALUE(c.eps >= 0, op, ": Invalid epsilon value: ", c.eps);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "square_avgs", square_avgs.size(), n);
  check_count(op, "acc_deltas", acc_deltas.size(), n);
  if (steps) check_count(op, "state_steps", steps->size(), n);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t idx = single ? -1 : static_cast<int64_t>(i);
    check_param(op, params[i], idx);
    gs[i] = check_grad(op, params[i], grads[i], idx);
    check_state(op, "square_avg", params[i], square_avgs[i], idx);
    check_state(op, "acc_delta", params[i], acc_deltas[i], idx);
    if (steps) check_scalar_state(op, "state_step", (*steps)[i], idx);
  }
  for (size_t i = 0; i < n; ++i) {
    if (steps) increment_step((*steps)[i]);
    adadelta_step_kernel[params[i].device()](params[i], gs[i], square_avgs[i], acc_deltas[i], c);
    bump({&params[i], &square_avgs[i], &acc_deltas[i]});
  }
}

void adadelta_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                    double lr, double rho, double eps, double weight_decay, bool maximize) {
  adadelta_impl("adadelta_step_", {param}, {grad}, {square_avg}, {acc_delta}, nullptr,
                AdadeltaCoeffs{lr, rho, eps, weight_decay, maximize}, true);
}

void adadelta_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                          const TensorList& acc_deltas, const TensorList& state_steps, double lr, double rho,
                          double eps, double weight_decay, bool maximize) {
  adadelta_impl("adadelta_step_multi_", params, grads, square_avgs, acc_deltas, &state_steps,
                AdadeltaCoeffs{lr, rho, eps, weight_decay, maximize}, false);
}

// ---------------------------------------------------------------------------------- Adagrad

void adagrad_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                         const TensorList& state_steps, double lr, double lr_decay, double weight_decay, double eps,
                         bool maximize) {
  const char* op = "adagrad_step_multi_";
  check_lr(op, lr);
  TT_CHECK_VALUE(lr_decay >= 0, op, ": Invalid lr_decay value: ", lr_decay);
  TT_CHECK_VALUE(eps >= 0, op, ": Invalid epsilon value: ", eps);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "state_sums", state_sums.size(), n);
  check_count(op, "state_steps", state_steps.size(), n);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    gs[i] = check_grad(op, params[i], grads[i], i);
    check_state(op, "sum", params[i], state_sums[i], i);
    check_scalar_state(op, "state_step", state_steps[i], i);
  }
  for (size_t i = 0; i < n; ++i) {
    double step = increment_step(state_steps[i]);
    AdagradCoeffs c{lr / (1 + (step - 1) * lr_decay), eps, weight_decay, maximize};
    adagrad_step_kernel[params[i].device()](params[i], gs[i], state_sums[i], c);
    bump({&params[i], &state_sums[i]});
  }
}

// ---------------------------------------------------------------------------------- RMSprop

void rmsprop_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                         const TensorList& momentum_buffers, const TensorList& grad_avgs,
                         const TensorList& state_steps, double lr, double alpha, double eps, double weight_decay,
                         double momentum, bool centered, bool maximize) {
  const char* op = "rmsprop_step_multi_";
  check_lr(op, lr);
  TT_CHECK_VALUE(alpha >= 0, op, ": Invalid alpha value: ", alpha);
  TT_CHECK_VALUE(eps >= 0, op, ": Invalid epsilon value: ", eps);
  TT_CHECK_VALUE(momentum >= 0, op, ": Invalid momentum value: ", momentum);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "square_avgs", square_avgs.size(), n);
  if (momentum > 0) check_count(op, "momentum_buffers", momentum_buffers.size(), n);
  if (centered) check_count(op, "grad_avgs", grad_avgs.size(), n);
  check_count(op, "state_steps", state_steps.size(), n);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    gs[i] = check_grad(op, params[i], grads[i], i);
    check_state(op, "square_avg", params[i], square_avgs[i], i);
    if (momentum > 0) check_state(op, "momentum_buffer", params[i], momentum_buffers[i], i);
    if (centered) check_state(op, "grad_avg", params[i], grad_avgs[i], i);
    check_scalar_state(op, "state_step", state_steps[i], i);
  }
  RmspropCoeffs c{lr, alpha, eps, weight_decay, momentum, centered, maximize};
  for (size_t i = 0; i < n; ++i) {
    increment_step(state_steps[i]);
    Tensor buf = momentum > 0 ? momentum_buffers[i] : Tensor();
    Tensor ga = centered ? grad_avgs[i] : Tensor();
    rmsprop_step_kernel[params[i].device()](params[i], gs[i], square_avgs[i], buf, ga, c);
    bump({&params[i], &square_avgs[i], &buf, &ga});
  }
}

// ----------------------------------------------------------------------------------- Adamax

void adamax_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                        const TensorList& exp_infs, const TensorList& state_steps, double lr, double beta1,
                        double beta2, double eps, double weight_decay, bool maximize) {
  const char* op = "adamax_step_multi_";
  check_adam_hyper(op, lr, beta1, beta2, eps, weight_decay);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "exp_avgs", exp_avgs.size(), n);
  check_count(op, "exp_infs", exp_infs.size(), n);
  check_count(op, "state_steps", state_steps.size(), n);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    gs[i] = check_grad(op, params[i], grads[i], i);
    check_state(op, "exp_avg", params[i], exp_avgs[i], i);
    check_state(op, "exp_inf", params[i], exp_infs[i], i);
    check_scalar_state(op, "state_step", state_steps[i], i);
  }
  for (size_t i = 0; i < n; ++i) {
    double step = increment_step(state_steps[i]);
    AdamaxCoeffs c{lr / (1 - std::pow(beta1, step)), beta1, beta2, eps, weight_decay, maximize};
    adamax_step_kernel[params[i].device()](params[i], gs[i], exp_avgs[i], exp_infs[i], c);
    bump({&params[i], &exp_avgs[i], &exp_infs[i]});
  }
}

// ------------------------------------------------------------------------------------ NAdam

void nadam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                       const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& state_steps,
                       double lr, double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                       bool decoupled_weight_decay, bool maximize) {
  const char* op = "nadam_step_multi_";
  check_adam_hyper(op, lr, beta1, beta2, eps, weight_decay);
  TT_CHECK_VALUE(momentum_decay >= 0, op, ": Invalid momentum_decay value: ", momentum_decay);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "exp_avgs", exp_avgs.size(), n);
  check_count(op, "exp_avg_sqs", exp_avg_sqs.size(), n);
  check_count(op, "mu_products", mu_products.size(), n);
  check_count(op, "state_steps", state_steps.size(), n);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    gs[i] = check_grad(op, params[i], grads[i], i);
    check_state(op, "exp_avg", params[i], exp_avgs[i], i);
    check_state(op, "exp_avg_sq", params[i], exp_avg_sqs[i], i);
    check_scalar_state(op, "mu_product", mu_products[i], i);
    check_scalar_state(op, "state_step", state_steps[i], i);
  }
  for (size_t i = 0; i < n; ++i) {
    double step = increment_step(state_steps[i]);
    double mu = beta1 * (1 - 0.5 * std::pow(0.96, step * momentum_decay));
    double mu_next = beta1 * (1 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
    write_scalar(mu_products[i], read_scalar(mu_products[i]) * mu);
    double mu_product = read_scalar(mu_products[i]);
    NadamCoeffs c;
    c.lr = lr; c.beta1 = beta1; c.beta2 = beta2; c.eps = eps; c.weight_decay = weight_decay;
    c.bias_correction2 = 1 - std::pow(beta2, step);
    c.coef_grad = -lr * (1 - mu) / (1 - mu_product);
    c.coef_avg = -lr * mu_next / (1 - mu_product * mu_next);
    c.decoupled_weight_decay = decoupled_weight_decay;
    c.maximize = maximize;
    nadam_step_kernel[params[i].device()](params[i], gs[i], exp_avgs[i], exp_avg_sqs[i], c);
    bump({&params[i], &exp_avgs[i], &exp_avg_sqs[i]});
  }
}

// ------------------------------------------------------------------------------------ RAdam

void radam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                       const TensorList& exp_avg_sqs, const TensorList& state_steps, double lr, double beta1,
                       double beta2, double eps, double weight_decay, bool decoupled_weight_decay, bool maximize) {
  const char* op = "radam_step_multi_";
  check_adam_hyper(op, lr, beta1, beta2, eps, weight_decay);
  size_t n = params.size();
  check_count(op, "grads", grads.size(), n);
  check_count(op, "exp_avgs", exp_avgs.size(), n);
  check_count(op, "exp_avg_sqs", exp_avg_sqs.size(), n);
  check_count(op, "state_steps", state_steps.size(), n);
  std::vector<Tensor> gs(n);
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    gs[i] = check_grad(op, params[i], grads[i], i);
    check_state(op, "exp_avg", params[i], exp_avgs[i], i);
    check_state(op, "exp_avg_sq", params[i], exp_avg_sqs[i], i);
    check_scalar_state(op, "state_step", state_steps[i], i);
  }
  for (size_t i = 0; i < n; ++i) {
    double step = increment_step(state_steps[i]);
    RadamCoeffs c;
    c.lr = lr; c.beta1 = beta1; c.beta2 = beta2; c.eps = eps; c.weight_decay = weight_decay;
    c.decoupled_weight_decay = decoupled_weight_decay;
    c.maximize = maximize;
    double bc2 = 1 - std::pow(beta2, step);
    c.bias_correction1 = 1 - std::pow(beta1, step);
    c.bias_correction2_sqrt = std::sqrt(bc2);
    double rho_inf = 2 / (1 - beta2) - 1;
    double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bc2;
    c.rect = rho_t > 5 ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0;
    radam_step_kernel[params[i].device()](params[i], gs[i], exp_avgs[i], exp_avg_sqs[i], c);
    bump({&params[i], &exp_avgs[i], &exp_avg_sqs[i]});
  }
}

}  // namespace tt
