// Fused RNN / LSTM / GRU layers (forward, backpropagation through time) as _C functions.
#include "bind.h"
#include "tinytorch/ops/rnn.h"

namespace tt::python {

TT_BIND(10, rnn) {
  m.def("rnn_layer_forward",
        [](const std::string& mode, const Tensor& x, const Tensor& h0, std::optional<Tensor> c0, const Tensor& w_ih,
           const Tensor& w_hh, std::optional<Tensor> b_ih, std::optional<Tensor> b_hh, bool reverse) {
          auto [out, h_n, c_n, saved] = rnn_layer_forward(mode, x, h0, opt_tensor(c0), w_ih, w_hh,
                                                          opt_tensor(b_ih), opt_tensor(b_hh), reverse);
          return py::make_tuple(out, h_n, c_n.defined() ? py::cast(c_n) : py::none(), saved);
        },
        py::arg("mode"), py::arg("input"), py::arg("h0"), py::arg("c0"), py::arg("weight_ih"), py::arg("weight_hh"),
        py::arg("bias_ih"), py::arg("bias_hh"), py::arg("reverse"));
  m.def("rnn_layer_backward",
        [](const std::string& mode, std::optional<Tensor> grad_out, std::optional<Tensor> grad_h_n,
           std::optional<Tensor> grad_c_n, const Tensor& x, const Tensor& h0, std::optional<Tensor> c0,
           const Tensor& w_ih, const Tensor& w_hh, bool has_bias, const Tensor& out, const Tensor& saved,
           bool reverse) {
          auto g = rnn_layer_backward(mode, opt_tensor(grad_out), opt_tensor(grad_h_n), opt_tensor(grad_c_n), x, h0,
                                      opt_tensor(c0), w_ih, w_hh, has_bias, out, saved, reverse);
          py::tuple r(g.size());
          for (size_t i = 0; i < g.size(); ++i) r[i] = g[i].defined() ? py::cast(g[i]) : py::none();
          return r;
        },
        py::arg("mode"), py::arg("grad_out"), py::arg("grad_h_n"), py::arg("grad_c_n"), py::arg("input"),
        py::arg("h0"), py::arg("c0"), py::arg("weight_ih"), py::arg("weight_hh"), py::arg("has_bias"),
        py::arg("out"), py::arg("saved"), py::arg("reverse"));
}

}  // namespace tt::python
