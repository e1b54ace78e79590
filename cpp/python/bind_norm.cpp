// softmax / log_softmax, layer_norm / rms_norm and batch_norm (forward and backward) as _C functions.
// dtypes are int codes (the DType enum order); None = the default.
#include "bind.h"
#include "tinytorch/ops/norm.h"

namespace tt::python {
namespace {

// normalized_shape given as an int k (the last k dims of x) or as a shape.
Shape normalized(const Tensor& x, const py::object& spec) {
  if (py::isinstance<py::int_>(spec)) {
    int64_t k = spec.cast<int64_t>();
    TT_CHECK_VALUE(k >= 1 && k <= x.dim(), "normalized_ndim must be in [1, ", x.dim(), "], got ", k);
    return Shape(x.shape().end() - k, x.shape().end());
  }
  return spec.cast<Shape>();
}

}  // namespace

TT_BIND(10, norm) {
  m.def("softmax", [](const Tensor& x, int64_t dim, std::optional<int> dt) { return softmax(x, dim, opt_dtype(dt)); },
        py::arg("x"), py::arg("dim"), py::arg("dtype_code") = py::none());
  m.def("log_softmax", [](const Tensor& x, int64_t dim, std::optional<int> dt) { return log_softmax(x, dim, opt_dtype(dt)); },
        py::arg("x"), py::arg("dim"), py::arg("dtype_code") = py::none());
  m.def("softmax_backward", &softmax_backward, py::arg("grad"), py::arg("out"), py::arg("dim"));
  m.def("log_softmax_backward", &log_softmax_backward, py::arg("grad"), py::arg("out"), py::arg("dim"));

  m.def("layer_norm", [](const Tensor& x, const py::object& shape, std::optional<Tensor> w, std::optional<Tensor> b,
                         double eps) { return layer_norm(x, normalized(x, shape), opt_tensor(w), opt_tensor(b), eps); },
        py::arg("x"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("eps") = 1e-5);
  m.def("layer_norm_backward", [](const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                  std::optional<Tensor> w, std::optional<bool> has_bias) {
          auto [gx, gw, gb] = layer_norm_backward(gy, x, mean, rstd, opt_tensor(w), has_bias.value_or(w.has_value()));
          return py::make_tuple(gx, none_if_undefined(gw), none_if_undefined(gb));
        },
        py::arg("grad_y"), py::arg("x"), py::arg("mean"), py::arg("rstd"), py::arg("weight") = py::none(),
        py::arg("has_bias") = py::none());
  m.def("rms_norm", [](const Tensor& x, const py::object& shape, std::optional<Tensor> w, double eps) {
          return rms_norm(x, normalized(x, shape), opt_tensor(w), eps);
        },
        py::arg("x"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("eps") = 1e-6);
  m.def("rms_norm_backward", [](const Tensor& gy, const Tensor& x, const Tensor& rstd, std::optional<Tensor> w) {
          auto [gx, gw] = rms_norm_backward(gy, x, rstd, opt_tensor(w));
          return py::make_tuple(gx, none_if_undefined(gw));
        },
        py::arg("grad_y"), py::arg("x"), py::arg("rstd"), py::arg("weight") = py::none());
  m.def("batch_norm", [](const Tensor& x, std::optional<Tensor> w, std::optional<Tensor> b,
                         std::optional<Tensor> rm, std::optional<Tensor> rv, bool training, double eps) {
          return batch_norm(x, opt_tensor(w), opt_tensor(b), opt_tensor(rm), opt_tensor(rv), training, eps);
        },
        py::arg("x"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("running_mean") = py::none(), py::arg("running_var") = py::none(), py::arg("training") = true,
        py::arg("eps") = 1e-5);
  m.def("batch_norm_backward", [](const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                                  std::optional<Tensor> w, bool training, std::array<bool, 3> needs) {
          auto [gx, gw, gb] = batch_norm_backward(gy, x, mean, invstd, opt_tensor(w), training, needs);
          return py::make_tuple(none_if_undefined(gx), none_if_undefined(gw), none_if_undefined(gb));
        },
        py::arg("grad_y"), py::arg("x"), py::arg("mean"), py::arg("invstd"), py::arg("weight") = py::none(),
        py::arg("training") = true, py::arg("needs") = std::array<bool, 3>{true, true, true});
}

}  // namespace tt::python
