// Matrix products: _C.matmul / mm / bmm / linear (and its backward).
#include "bind.h"
#include "tinytorch/ops/linalg.h"

namespace tt::python {

TT_BIND(10, linalg) {
  m.def("matmul", &matmul, py::arg("a"), py::arg("b"));
  m.def("mm", &mm, py::arg("a"), py::arg("b"));
  m.def("bmm", &bmm, py::arg("a"), py::arg("b"));
  m.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b) {
    return linear(x, w, b.value_or(Tensor()));
  }, py::arg("x"), py::arg("w"), py::arg("b") = py::none());
  m.def("linear_backward", [](const Tensor& g, const Tensor& x, const Tensor& w, std::array<bool, 3> needs) {
    auto [gx, gw, gb] = linear_backward(g, x, w, needs);
    return py::make_tuple(none_if_undefined(gx), none_if_undefined(gw), none_if_undefined(gb));
  }, py::arg("grad_out"), py::arg("x"), py::arg("w"), py::arg("needs"));
}

}  // namespace tt::python
