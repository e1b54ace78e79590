// embedding forward and backward as _C functions.
#include "bind.h"
#include "tinytorch/ops/embedding.h"

namespace tt::python {

TT_BIND(10, embedding) {
  m.def("embedding", &embedding, py::arg("weight"), py::arg("indices"));
  m.def("embedding_backward", &embedding_backward, py::arg("grad"), py::arg("indices"), py::arg("num_weights"),
        py::arg("padding_idx") = py::none());
}

}  // namespace tt::python
