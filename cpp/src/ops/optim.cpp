// Optimizer step ops: argument checks and step-dependent scalars; the per-element math is in
// the kernels (tinytorch/optim_math.h).
#include "tinytorch/ops/optim.h"
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

namespace tt {

TT_DEFINE_KERNEL(sgd_step)
TT_DEFINE_KERNEL(adam_step)
TT_DEFINE_KERNEL(adam_device_step)
TT_DEFINE_KERNEL(adadelta_step)
TT_DEFINE_KERNEL(adagrad_step)
TT_DEFINE_KERNEL(rmsprop_step)
TT_DEFINE_KERNEL(adamax_step)
TT_DEFINE_KERNEL(nadam_step)
TT_DEFINE_KERNEL(radam_step)

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A hyperparameter must lie in [0, hi] ([0, hi) when hi_open); messages as PyTorch's.
struct Hyper {
  const char* what;  // "learning rate", "beta parameter at index 0", ...
  double value;
  double hi = kInf;
  bool hi_open = false;
};

void check_hypers(const char* op, std::initializer_list<Hyper> hypers) {
  for (const Hyper& h : hypers)
    TT_CHECK_VALUE(h.value >= 0 && (h.hi_open ? h.value < h.hi : h.value <= h.hi), op, ": Invalid ", h.what, ": ",
                   h.value);
}

// Adam, Adamax, NAdam and RAdam share these.
void check_adam_hypers(const char* op, double lr, double beta1, double beta2, double eps, double wd) {
  check_hypers(op, {{"learning rate", lr},
                    {"epsilon value", eps},
                    {"beta parameter at index 0", beta1, 1, true},
                    {"beta parameter at index 1", beta2, 1, true},
                    {"weight_decay value", wd}});
}

// What a list passed along with the params holds, one tensor per param.
enum class Kind {
  Grad,    // same shape/dtype/device as its param; copied when not contiguous
  State,   // the same, contiguous and apart from its param: updated in place
  Scalar,  // a one-element float32/float64/int64 CPU tensor (step counts, NAdam's mu_product)
};

struct ListArg {
  const char* list;  // "exp_avgs": the argument, in count messages
  const char* item;  // "exp_avg": one of its tensors
  const TensorList& tensors;
  Kind kind = Kind::State;
  bool used = true;  // optional lists (momentum buffers, max_exp_avg_sqs, ...) are empty when off
};

std::string label(const char* name, size_t index) { return str_cat(name, " of tensor ", index); }

void check_param(const char* op, const Tensor& p, size_t i) {
  TT_CHECK(p.defined(), op, ": ", label("param", i), " is undefined");
  TT_CHECK_TYPE(is_floating(p.dtype()), op, ": ", label("param", i), " must be a floating point tensor, got ",
                p.describe());
  TT_CHECK(p.is_contiguous(), op, ": ", label("param", i), " must be contiguous (", p.describe(),
           "); optimizers update parameters in place");
}

// The checks build their messages (label(...)) only on failure: they run for every tensor of
// every step.
void check_like_param(const char* op, const char* item, size_t i, const Tensor& p, const Tensor& t) {
  TT_CHECK(t.shape() == p.shape(), op, ": ", label(item, i), " has shape ", shape_str(t.shape()),
           " but its param has shape ", shape_str(p.shape()));
  TT_CHECK(t.dtype() == p.dtype(), op, ": ", label(item, i), " has dtype ", dtype_name(t.dtype()),
           " but its param has dtype ", dtype_name(p.dtype()));
  TT_CHECK(t.device() == p.device(), op, ": ", label(item, i), " is on ", t.device().str(), " but its param is on ",
           p.device().str());
}

bool is_step_dtype(DType d) { return d == DType::Float32 || d == DType::Float64 || d == DType::Int64; }

// Returns the tensor the kernel gets: a grad made contiguous, else t itself.
Tensor check_one(const char* op, const ListArg& l, const Tensor& p, const Tensor& t, size_t i) {
  if (l.kind == Kind::Scalar) {
    TT_CHECK(t.defined() && t.numel() == 1 && t.device().is_cpu() && is_step_dtype(t.dtype()), op, ": ",
             label(l.item, i), " must be a one-element float32/float64/int64 CPU tensor, got ",
             t.defined() ? t.describe() : std::string("undefined"));
    return t;
  }
  TT_CHECK(t.defined(), op, ": ", label(l.item, i), l.kind == Kind::Grad ? " is undefined" : " is missing");
  check_like_param(op, l.item, i, p, t);
  if (l.kind == Kind::Grad) return t.contiguous();
  TT_CHECK(t.is_contiguous(), op, ": ", label(l.item, i), " must be contiguous (", t.describe(), ")");
  TT_CHECK(t.storage() != p.storage(), op, ": ", label(l.item, i), " shares memory with its param");
  return t;
}

// Checks the counts, then each param with its tensors of every used list; returns the grads
// (the one Kind::Grad list), made contiguous.
TensorList check_lists(const char* op, const TensorList& params, std::initializer_list<ListArg> lists) {
  size_t n = params.size();
  for (const ListArg& l : lists)
    TT_CHECK(!l.used || l.tensors.size() == n, op, ": expected ", n, " ", l.list, " (one per param), got ",
             l.tensors.size());
  TensorList grads(n);
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    for (const ListArg& l : lists) {
      if (!l.used) continue;
      Tensor t = check_one(op, l, params[i], l.tensors[i], i);
      if (l.kind == Kind::Grad) grads[i] = std::move(t);
    }
  }
  return grads;
}

ListArg grads_arg(const TensorList& grads) { return {"grads", "grad", grads, Kind::Grad}; }
ListArg steps_arg(const TensorList& steps) { return {"state_steps", "state_step", steps, Kind::Scalar}; }

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

// list[i], or undefined for an unused optional list.
Tensor item_or_undef(const TensorList& list, bool used, size_t i) { return used ? list[i] : Tensor(); }

// Runs one param's kernel and bumps the versions of the tensors it updated.
template <class Fn, class C, class... Ts>
void launch(const KernelTable<Fn>& kernel, const C& c, const Tensor& param, const Tensor& grad, const Ts&... state) {
  kernel[param.device()](param, grad, state..., c);
  param.bump_version();
  (..., (state.defined() ? state.bump_version() : void()));
}

}  // namespace

void sgd_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& momentum_bufs, double lr,
                     double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
                     bool first_step) {
  const char* op = "sgd_step_multi_";
  check_hypers(op, {{"learning rate", lr}, {"momentum value", momentum}});
  TT_CHECK_VALUE(!nesterov || (momentum > 0 && dampening == 0), op,
                 ": Nesterov momentum requires a momentum and zero dampening");
  bool has_buf = momentum != 0;
  TensorList gs = check_lists(
      op, params, {grads_arg(grads), {"momentum buffers", "momentum_buffer", momentum_bufs, Kind::State, has_buf}});
  SgdCoeffs c{lr, momentum, dampening, weight_decay, nesterov, maximize, first_step};
  for (size_t i = 0; i < params.size(); ++i)
    launch(sgd_step_kernel, c, params[i], gs[i], item_or_undef(momentum_bufs, has_buf, i));
}

void adam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                      const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& state_steps,
                      double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
                      bool maximize, bool decoupled_weight_decay) {
  const char* op = "adam_step_multi_";
  check_adam_hypers(op, lr, beta1, beta2, eps, weight_decay);
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"exp_avgs", "exp_avg", exp_avgs},
                                           {"exp_avg_sqs", "exp_avg_sq", exp_avg_sqs},
                                           {"max_exp_avg_sqs", "max_exp_avg_sq", max_exp_avg_sqs, Kind::State, amsgrad},
                                           steps_arg(state_steps)});
  for (size_t i = 0; i < params.size(); ++i) {
    double step = increment_step(state_steps[i]);
    AdamCoeffs c;
    c.lr = lr; c.beta1 = beta1; c.beta2 = beta2; c.eps = eps; c.weight_decay = weight_decay;
    c.amsgrad = amsgrad; c.maximize = maximize; c.decoupled_weight_decay = decoupled_weight_decay;
    c.step_size = lr / (1 - std::pow(beta1, step));
    c.bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
    launch(adam_step_kernel, c, params[i], gs[i], exp_avgs[i], exp_avg_sqs[i],
           item_or_undef(max_exp_avg_sqs, amsgrad, i));
  }
}

void adam_step_capturable_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                                 const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
                                 const TensorList& state_steps, const Tensor& lr_tensor, double lr, double beta1,
                                 double beta2, double eps, double weight_decay, bool amsgrad, bool maximize,
                                 bool decoupled_weight_decay) {
  const char* op = "adam_step_capturable_multi_";
  Tensor lr_dev;  // a device lr, read by the kernels; a CPU one is read here
  if (lr_tensor.defined()) {
    TT_CHECK(lr_tensor.numel() == 1 && (lr_tensor.dtype() == DType::Float32 || lr_tensor.dtype() == DType::Float64),
             op, ": lr must be a one-element float32/float64 tensor, got ", lr_tensor.describe());
    if (lr_tensor.device().is_cpu()) lr = read_scalar(lr_tensor);
    else lr_dev = lr_tensor;
  }
  check_adam_hypers(op, lr_dev.defined() ? 0.0 : lr, beta1, beta2, eps, weight_decay);
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"exp_avgs", "exp_avg", exp_avgs},
                                           {"exp_avg_sqs", "exp_avg_sq", exp_avg_sqs},
                                           {"max_exp_avg_sqs", "max_exp_avg_sq", max_exp_avg_sqs, Kind::State, amsgrad}});
  TT_CHECK(state_steps.size() == params.size(), op, ": expected ", params.size(), " state_steps (one per param), got ",
           state_steps.size());
  AdamCoeffs c;
  c.lr = lr; c.beta1 = beta1; c.beta2 = beta2; c.eps = eps; c.weight_decay = weight_decay;
  c.amsgrad = amsgrad; c.maximize = maximize; c.decoupled_weight_decay = decoupled_weight_decay;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const Tensor& st = state_steps[i];
    Tensor max_sq = item_or_undef(max_exp_avg_sqs, amsgrad, i);
    if (p.device().is_cpu()) {  // nothing to capture on the CPU: the host step
      TT_CHECK(st.defined() && st.numel() == 1 && st.device().is_cpu() && is_step_dtype(st.dtype()), op, ": ",
               label("state_step", i), " must be a one-element float32/float64/int64 CPU tensor, got ",
               st.defined() ? st.describe() : std::string("undefined"));
      TT_CHECK(!lr_dev.defined(), op, ": lr is on ", lr_dev.device().str(), " but param ", i, " is on the CPU");
      double step = increment_step(st);
      c.step_size = c.lr / (1 - std::pow(beta1, step));
      c.bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
      launch(adam_step_kernel, c, p, gs[i], exp_avgs[i], exp_avg_sqs[i], max_sq);
      continue;
    }
    TT_CHECK(st.defined() && st.numel() == 1 && st.dtype() == DType::Float32 && st.device() == p.device(), op, ": ",
             label("state_step", i), " must be a one-element float32 tensor on ", p.device().str(), " (capturable), got ",
             st.defined() ? st.describe() : std::string("undefined"));
    TT_CHECK(!lr_dev.defined() || lr_dev.device() == p.device(), op, ": lr is on ", lr_dev.device().str(),
             " but param ", i, " is on ", p.device().str());
    adam_device_step_kernel[p.device()](p, gs[i], exp_avgs[i], exp_avg_sqs[i], max_sq, st, lr_dev, c);
    p.bump_version();
    exp_avgs[i].bump_version();
    exp_avg_sqs[i].bump_version();
    if (max_sq.defined()) max_sq.bump_version();
    st.bump_version();
  }
}

void adadelta_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                          const TensorList& acc_deltas, const TensorList& state_steps, double lr, double rho,
                          double eps, double weight_decay, bool maximize) {
  const char* op = "adadelta_step_multi_";
  check_hypers(op, {{"learning rate", lr}, {"rho value", rho, 1}, {"epsilon value", eps}});
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"square_avgs", "square_avg", square_avgs},
                                           {"acc_deltas", "acc_delta", acc_deltas},
                                           steps_arg(state_steps)});
  AdadeltaCoeffs c{lr, rho, eps, weight_decay, maximize};
  for (size_t i = 0; i < params.size(); ++i) {
    increment_step(state_steps[i]);
    launch(adadelta_step_kernel, c, params[i], gs[i], square_avgs[i], acc_deltas[i]);
  }
}

void adagrad_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                         const TensorList& state_steps, double lr, double lr_decay, double weight_decay, double eps,
                         bool maximize) {
  const char* op = "adagrad_step_multi_";
  check_hypers(op, {{"learning rate", lr}, {"lr_decay value", lr_decay}, {"epsilon value", eps}});
  TensorList gs = check_lists(op, params, {grads_arg(grads), {"state_sums", "sum", state_sums},
                                           steps_arg(state_steps)});
  for (size_t i = 0; i < params.size(); ++i) {
    double step = increment_step(state_steps[i]);
    AdagradCoeffs c{lr / (1 + (step - 1) * lr_decay), eps, weight_decay, maximize};
    launch(adagrad_step_kernel, c, params[i], gs[i], state_sums[i]);
  }
}

void rmsprop_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                         const TensorList& momentum_buffers, const TensorList& grad_avgs,
                         const TensorList& state_steps, double lr, double alpha, double eps, double weight_decay,
                         double momentum, bool centered, bool maximize) {
  const char* op = "rmsprop_step_multi_";
  check_hypers(op,
               {{"learning rate", lr}, {"alpha value", alpha}, {"epsilon value", eps}, {"momentum value", momentum}});
  bool has_buf = momentum > 0;
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"square_avgs", "square_avg", square_avgs},
                                           {"momentum_buffers", "momentum_buffer", momentum_buffers, Kind::State,
                                            has_buf},
                                           {"grad_avgs", "grad_avg", grad_avgs, Kind::State, centered},
                                           steps_arg(state_steps)});
  RmspropCoeffs c{lr, alpha, eps, weight_decay, momentum, centered, maximize};
  for (size_t i = 0; i < params.size(); ++i) {
    increment_step(state_steps[i]);
    launch(rmsprop_step_kernel, c, params[i], gs[i], square_avgs[i], item_or_undef(momentum_buffers, has_buf, i),
           item_or_undef(grad_avgs, centered, i));
  }
}

void adamax_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                        const TensorList& exp_infs, const TensorList& state_steps, double lr, double beta1,
                        double beta2, double eps, double weight_decay, bool maximize) {
  const char* op = "adamax_step_multi_";
  check_adam_hypers(op, lr, beta1, beta2, eps, weight_decay);
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"exp_avgs", "exp_avg", exp_avgs},
                                           {"exp_infs", "exp_inf", exp_infs},
                                           steps_arg(state_steps)});
  for (size_t i = 0; i < params.size(); ++i) {
    double step = increment_step(state_steps[i]);
    AdamaxCoeffs c{lr / (1 - std::pow(beta1, step)), beta1, beta2, eps, weight_decay, maximize};
    launch(adamax_step_kernel, c, params[i], gs[i], exp_avgs[i], exp_infs[i]);
  }
}

void nadam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                       const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& state_steps,
                       double lr, double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                       bool decoupled_weight_decay, bool maximize) {
  const char* op = "nadam_step_multi_";
  check_adam_hypers(op, lr, beta1, beta2, eps, weight_decay);
  check_hypers(op, {{"momentum_decay value", momentum_decay}});
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"exp_avgs", "exp_avg", exp_avgs},
                                           {"exp_avg_sqs", "exp_avg_sq", exp_avg_sqs},
                                           {"mu_products", "mu_product", mu_products, Kind::Scalar},
                                           steps_arg(state_steps)});
  for (size_t i = 0; i < params.size(); ++i) {
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
    launch(nadam_step_kernel, c, params[i], gs[i], exp_avgs[i], exp_avg_sqs[i]);
  }
}

void radam_step_multi_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                       const TensorList& exp_avg_sqs, const TensorList& state_steps, double lr, double beta1,
                       double beta2, double eps, double weight_decay, bool decoupled_weight_decay, bool maximize) {
  const char* op = "radam_step_multi_";
  check_adam_hypers(op, lr, beta1, beta2, eps, weight_decay);
  TensorList gs = check_lists(op, params, {grads_arg(grads),
                                           {"exp_avgs", "exp_avg", exp_avgs},
                                           {"exp_avg_sqs", "exp_avg_sq", exp_avg_sqs},
                                           steps_arg(state_steps)});
  for (size_t i = 0; i < params.size(); ++i) {
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
    launch(radam_step_kernel, c, params[i], gs[i], exp_avgs[i], exp_avg_sqs[i]);
  }
}

}  // namespace tt
