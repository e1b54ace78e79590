// BitNet b1.58 packed ternary matmul as a _C function (inference only: no gradient).
#include "bind.h"
#include "tinytorch/ops/bitnet.h"

namespace tt::python {

TT_BIND(10, bitnet) {
  m.def("bitnet_matmul", &bitnet_matmul, py::arg("q"), py::arg("packed"), py::arg("mult"));
}

}  // namespace tt::python
