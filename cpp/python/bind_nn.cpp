// NN ops: conv2d, pooling, embedding, losses (forward and backward).
#include "bind.h"
#include "tinytorch/ops/conv.h"
#include "tinytorch/ops/nn.h"

namespace tt::python {
namespace {
py::object opt(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }
Tensor un(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }
}  // namespace

TT_BIND(10, nn) {
  using P = std::array<int64_t, 2>;
  m.def("conv2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, P stride, P padding, P dilation,
                     int64_t groups) { return conv2d(x, w, un(b), stride, padding, dilation, groups); },
        py::arg("x"), py::arg("w"), py::arg("b") = py::none(), py::arg("stride") = P{1, 1},
        py::arg("padding") = P{0, 0}, py::arg("dilation") = P{1, 1}, py::arg("groups") = 1);
  m.def("conv2d_backward", [](const Tensor& g, const Tensor& x, const Tensor& w, P stride, P padding, P dilation,
                              int64_t groups, std::array<bool, 3> needs) {
    auto [gx, gw, gb] = conv2d_backward(g, x, w, stride, padding, dilation, groups, needs);
    return py::make_tuple(opt(gx), opt(gw), opt(gb));
  }, py::arg("grad_out"), py::arg("x"), py::arg("w"), py::arg("stride") = P{1, 1}, py::arg("padding") = P{0, 0},
        py::arg("dilation") = P{1, 1}, py::arg("groups") = 1,
        py::arg("needs") = std::array<bool, 3>{true, true, true});

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

  m.def("embedding", &embedding, py::arg("weight"), py::arg("indices"));
  m.def("embedding_backward", &embedding_backward, py::arg("grad"), py::arg("indices"), py::arg("num_weights"),
        py::arg("padding_idx") = py::none());

  m.def("nll_loss", [](const Tensor& x, const Tensor& t, std::optional<Tensor> w, int64_t red, int64_t ign) {
    return nll_loss(x, t, un(w), red, ign);
  }, py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("reduction") = 1,
        py::arg("ignore_index") = -100);
  m.def("nll_loss_backward", [](const Tensor& g, const Tensor& x, const Tensor& t, std::optional<Tensor> w,
                                int64_t red, int64_t ign) { return nll_loss_backward(g, x, t, un(w), red, ign); },
        py::arg("grad_out"), py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
        py::arg("reduction") = 1, py::arg("ignore_index") = -100);
  m.def("cross_entropy", [](const Tensor& x, const Tensor& t, std::optional<Tensor> w, int64_t red, int64_t ign,
                            double ls) { return cross_entropy(x, t, un(w), red, ign, ls); },
        py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("reduction") = 1,
        py::arg("ignore_index") = -100, py::arg("label_smoothing") = 0.0);
  m.def("cross_entropy_backward", [](const Tensor& g, const Tensor& x, const Tensor& t, std::optional<Tensor> w,
                                     int64_t red, int64_t ign, double ls) {
    return cross_entropy_backward(g, x, t, un(w), red, ign, ls);
  }, py::arg("grad_out"), py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
        py::arg("reduction") = 1, py::arg("ignore_index") = -100, py::arg("label_smoothing") = 0.0);
}

}  // namespace tt::python
