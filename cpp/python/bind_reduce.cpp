// Reductions, scans, softmax and normalization as _C functions. Dims are a list of ints or
// None (= all dims); dtypes are int codes (the DType enum order); None = the default.
#include "bind.h"
#include "tinytorch/ops/reduce.h"

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

TT_BIND(10, reduce) {
  auto dims = py::arg("dims") = py::none();
  m.def("sum", [](const Tensor& x, OptDims d, bool keepdim, std::optional<int> dt) { return sum(x, d, keepdim, opt_dtype(dt)); },
        py::arg("x"), dims, py::arg("keepdim") = false, py::arg("dtype_code") = py::none());
  m.def("prod", [](const Tensor& x, OptDims d, bool keepdim, std::optional<int> dt) { return prod(x, d, keepdim, opt_dtype(dt)); },
        py::arg("x"), dims, py::arg("keepdim") = false, py::arg("dtype_code") = py::none());
  m.def("mean", [](const Tensor& x, OptDims d, bool keepdim, std::optional<int> dt) { return mean(x, d, keepdim, opt_dtype(dt)); },
        py::arg("x"), dims, py::arg("keepdim") = false, py::arg("dtype_code") = py::none());
  m.def("amax", &amax, py::arg("x"), dims, py::arg("keepdim") = false);
  m.def("amin", &amin, py::arg("x"), dims, py::arg("keepdim") = false);
  m.def("all", &all, py::arg("x"), dims, py::arg("keepdim") = false);
  m.def("any", &any, py::arg("x"), dims, py::arg("keepdim") = false);
  m.def("var", &var, py::arg("x"), dims, py::arg("correction") = 1.0, py::arg("keepdim") = false);
  m.def("std", &std, py::arg("x"), dims, py::arg("correction") = 1.0, py::arg("keepdim") = false);
  m.def("var_mean", &var_mean, py::arg("x"), dims, py::arg("correction") = 1.0, py::arg("keepdim") = false);
  m.def("logsumexp", &logsumexp, py::arg("x"), dims, py::arg("keepdim") = false);
  m.def("norm", &norm, py::arg("x"), py::arg("p") = 2.0, dims, py::arg("keepdim") = false);

  m.def("max_dim", &max_dim, py::arg("x"), py::arg("dim"), py::arg("keepdim") = false);
  m.def("min_dim", &min_dim, py::arg("x"), py::arg("dim"), py::arg("keepdim") = false);
  m.def("max_all", &max_all, py::arg("x"));
  m.def("min_all", &min_all, py::arg("x"));
  m.def("argmax", &argmax, py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("argmin", &argmin, py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);

  m.def("cumsum", [](const Tensor& x, int64_t dim, std::optional<int> dt) { return cumsum(x, dim, opt_dtype(dt)); },
        py::arg("x"), py::arg("dim"), py::arg("dtype_code") = py::none());
  m.def("cumprod", [](const Tensor& x, int64_t dim, std::optional<int> dt) { return cumprod(x, dim, opt_dtype(dt)); },
        py::arg("x"), py::arg("dim"), py::arg("dtype_code") = py::none());

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
}

}  // namespace tt::python
