// Matrix products: _C.matmul / mm / bmm / linear / addmm.
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
  m.def("addmm", &addmm, py::arg("input"), py::arg("m1"), py::arg("m2"), py::arg("beta") = 1.0,
        py::arg("alpha") = 1.0);
}

}  // namespace tt::python
