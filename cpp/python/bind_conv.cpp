// conv2d forward and backward as _C functions.
#include "bind.h"
#include "tinytorch/ops/conv.h"

namespace tt::python {

TT_BIND(10, conv) {
  using P = std::array<int64_t, 2>;
  m.def("conv2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, P stride, P padding, P dilation,
                     int64_t groups) { return conv2d(x, w, opt_tensor(b), stride, padding, dilation, groups); },
        py::arg("x"), py::arg("w"), py::arg("b") = py::none(), py::arg("stride") = P{1, 1},
        py::arg("padding") = P{0, 0}, py::arg("dilation") = P{1, 1}, py::arg("groups") = 1);
  m.def("conv2d_backward", [](const Tensor& g, const Tensor& x, const Tensor& w, P stride, P padding, P dilation,
                              int64_t groups, std::array<bool, 3> needs) {
    auto [gx, gw, gb] = conv2d_backward(g, x, w, stride, padding, dilation, groups, needs);
    return py::make_tuple(none_if_undefined(gx), none_if_undefined(gw), none_if_undefined(gb));
  }, py::arg("grad_out"), py::arg("x"), py::arg("w"), py::arg("stride") = P{1, 1}, py::arg("padding") = P{0, 0},
        py::arg("dilation") = P{1, 1}, py::arg("groups") = 1,
        py::arg("needs") = std::array<bool, 3>{true, true, true});
}

}  // namespace tt::python
