// Pooling ops (forward and backward) as _C functions.
#include "bind.h"
#include "tinytorch/ops/pool.h"

namespace tt::python {

TT_BIND(10, pool) {
  using P = std::array<int64_t, 2>;
  m.def("max_pool2d", [](const Tensor& x, P k, std::optional<P> s, P pad, P dil, bool ceil) {
    auto [out, idx] = max_pool2d(x, k, s, pad, dil, ceil);
    return py::make_tuple(out, idx);
  }, py::arg("x"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = P{0, 0},
        py::arg("dilation") = P{1, 1}, py::arg("ceil_mode") = false);
  m.def("max_pool2d_backward", &max_pool2d_backward, py::arg("grad_out"), py::arg("indices"),
        py::arg("input_shape"));
  m.def("avg_pool2d", &avg_pool2d, py::arg("x"), py::arg("kernel_size"), py::arg("stride") = py::none(),
        py::arg("padding") = P{0, 0}, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
        py::arg("divisor_override") = py::none());
  m.def("avg_pool2d_backward", &avg_pool2d_backward, py::arg("grad_out"), py::arg("input_shape"),
        py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = P{0, 0},
        py::arg("ceil_mode") = false, py::arg("count_include_pad") = true, py::arg("divisor_override") = py::none());
  m.def("adaptive_avg_pool2d", &adaptive_avg_pool2d, py::arg("x"), py::arg("output_size"));
  m.def("adaptive_avg_pool2d_backward", &adaptive_avg_pool2d_backward, py::arg("grad_out"), py::arg("input_shape"));
}

}  // namespace tt::python
