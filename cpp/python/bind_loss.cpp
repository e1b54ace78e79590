// nll_loss and cross_entropy (forward and backward) as _C functions.
#include "bind.h"
#include "tinytorch/ops/loss.h"

namespace tt::python {

TT_BIND(10, loss) {
  m.def("nll_loss", [](const Tensor& x, const Tensor& t, std::optional<Tensor> w, int64_t red, int64_t ign) {
    return nll_loss(x, t, opt_tensor(w), red, ign);
  }, py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("reduction") = 1,
        py::arg("ignore_index") = -100);
  m.def("nll_loss_backward", [](const Tensor& g, const Tensor& x, const Tensor& t, std::optional<Tensor> w,
                                int64_t red, int64_t ign) { return nll_loss_backward(g, x, t, opt_tensor(w), red, ign); },
        py::arg("grad_out"), py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
        py::arg("reduction") = 1, py::arg("ignore_index") = -100);
  m.def("cross_entropy", [](const Tensor& x, const Tensor& t, std::optional<Tensor> w, int64_t red, int64_t ign,
                            double ls, std::optional<int> dtype) {
    return cross_entropy(x, t, opt_tensor(w), red, ign, ls,
                         dtype ? std::optional<DType>(dtype_from_code(*dtype)) : std::nullopt);
  }, py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("reduction") = 1,
        py::arg("ignore_index") = -100, py::arg("label_smoothing") = 0.0, py::arg("dtype") = py::none());
  m.def("cross_entropy_backward", [](const Tensor& g, const Tensor& x, const Tensor& t, std::optional<Tensor> w,
                                     int64_t red, int64_t ign, double ls) {
    return cross_entropy_backward(g, x, t, opt_tensor(w), red, ign, ls);
  }, py::arg("grad_out"), py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
        py::arg("reduction") = 1, py::arg("ignore_index") = -100, py::arg("label_smoothing") = 0.0);
}

}  // namespace tt::python
