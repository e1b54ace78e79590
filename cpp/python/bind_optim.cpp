// Fused optimizer steps (ops/optim.h): in place on params and state, versions bumped.
#include "bind.h"
#include "tinytorch/ops/grad_clip.h"
#include "tinytorch/ops/optim.h"

namespace tt::python {

TT_BIND(10, optim) {
  m.def("sgd_step_multi_", &sgd_step_multi_, py::arg("params"), py::arg("grads"), py::arg("momentum_bufs"),
        py::arg("lr"), py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"),
        py::arg("maximize"), py::arg("first_step"));

  m.def("adam_step_multi_", &adam_step_multi_, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"),
        py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"), py::arg("state_steps"), py::arg("lr"), py::arg("beta1"),
        py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"), py::arg("amsgrad"), py::arg("maximize"),
        py::arg("decoupled_weight_decay"));

  m.def(
      "adam_step_capturable_multi_",
      [](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs, const TensorList& exp_avg_sqs,
         const TensorList& max_exp_avg_sqs, const TensorList& state_steps, std::optional<Tensor> lr_tensor, double lr,
         double beta1, double beta2, double eps, double weight_decay, bool amsgrad, bool maximize,
         bool decoupled_weight_decay) {
        adam_step_capturable_multi_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                                    lr_tensor.value_or(Tensor()), lr, beta1, beta2, eps, weight_decay, amsgrad,
                                    maximize, decoupled_weight_decay);
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
      py::arg("state_steps"), py::arg("lr_tensor"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("amsgrad"), py::arg("maximize"),
      py::arg("decoupled_weight_decay"));

  m.def("adadelta_step_multi_", &adadelta_step_multi_, py::arg("params"), py::arg("grads"), py::arg("square_avgs"),
        py::arg("acc_deltas"), py::arg("state_steps"), py::arg("lr"), py::arg("rho"), py::arg("eps"),
        py::arg("weight_decay"), py::arg("maximize"));

  m.def("adagrad_step_multi_", &adagrad_step_multi_, py::arg("params"), py::arg("grads"), py::arg("state_sums"),
        py::arg("state_steps"), py::arg("lr"), py::arg("lr_decay"), py::arg("weight_decay"), py::arg("eps"),
        py::arg("maximize"));

  m.def("rmsprop_step_multi_", &rmsprop_step_multi_, py::arg("params"), py::arg("grads"), py::arg("square_avgs"),
        py::arg("momentum_buffers"), py::arg("grad_avgs"), py::arg("state_steps"), py::arg("lr"), py::arg("alpha"),
        py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"), py::arg("centered"), py::arg("maximize"));

  m.def("adamax_step_multi_", &adamax_step_multi_, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"),
        py::arg("exp_infs"), py::arg("state_steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
        py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"));

  m.def("nadam_step_multi_", &nadam_step_multi_, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"),
        py::arg("exp_avg_sqs"), py::arg("mu_products"), py::arg("state_steps"), py::arg("lr"), py::arg("beta1"),
        py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"), py::arg("momentum_decay"),
        py::arg("decoupled_weight_decay"), py::arg("maximize"));

  m.def("radam_step_multi_", &radam_step_multi_, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"),
        py::arg("exp_avg_sqs"), py::arg("state_steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
        py::arg("eps"), py::arg("weight_decay"), py::arg("decoupled_weight_decay"), py::arg("maximize"));

  // nn.utils.clip_grad_norm_'s multi-tensor pair (ops/grad_clip.h)
  m.def("multi_sum_squares", &multi_sum_squares, py::arg("tensors"));
  m.def("multi_scale_", &multi_scale_, py::arg("tensors"), py::arg("coef"));
}

}  // namespace tt::python
