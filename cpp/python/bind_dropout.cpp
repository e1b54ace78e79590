// dropout forward and backward as _C functions.
#include "bind.h"
#include "tinytorch/ops/dropout.h"

namespace tt::python {

// After random (order 10): the generator argument is a _C.Generator.
TT_BIND(11, dropout) {
  m.def("dropout", &dropout, py::arg("x"), py::arg("p"), py::arg("train") = true, py::arg("generator") = nullptr);
  m.def("dropout_backward", &dropout_backward, py::arg("grad"), py::arg("mask"), py::arg("p"));
}

}  // namespace tt::python
