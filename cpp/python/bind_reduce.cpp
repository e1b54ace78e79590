// Reductions and scans as _C functions. Dims are a list of ints or None (= all dims); dtypes
// are int codes (the DType enum order); None = the default.
#include "bind.h"
#include "tinytorch/ops/reduce.h"

namespace tt::python {

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
}

}  // namespace tt::python
