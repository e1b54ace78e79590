// The fused decode step (ops/decode.h) as _C.DecodeLinear / DecodeLayer / DecodeStack.
#include "bind.h"
#include "tinytorch/ops/decode.h"

namespace tt::python {

TT_BIND(10, decode) {
  py::class_<DecodeLinear>(m, "DecodeLinear")
      .def(py::init([](const Tensor& weight, int64_t qtype, int64_t out_features, int64_t in_features,
                       const std::optional<Tensor>& bias) {
             return DecodeLinear{weight, opt_tensor(bias), qtype, out_features, in_features};
           }),
           py::arg("weight"), py::arg("qtype"), py::arg("out_features"), py::arg("in_features"),
           py::arg("bias") = py::none());
  py::class_<DecodeLayer>(m, "DecodeLayer")
      .def(py::init([](const Tensor& input_norm, const Tensor& post_attention_norm, std::vector<DecodeLinear> qkv,
                       std::vector<DecodeLinear> o, std::vector<DecodeLinear> gate_up,
                       std::vector<DecodeLinear> down, const Tensor& keys, const Tensor& values, int64_t window) {
             return DecodeLayer{input_norm, post_attention_norm, std::move(qkv), std::move(o), std::move(gate_up),
                                std::move(down), keys, values, window};
           }),
           py::arg("input_norm"), py::arg("post_attention_norm"), py::arg("qkv"), py::arg("o"), py::arg("gate_up"),
           py::arg("down"), py::arg("keys"), py::arg("values"), py::arg("window") = 0);
  py::class_<DecodeStack>(m, "DecodeStack")
      .def(py::init([](std::vector<DecodeLayer> layers, int64_t heads, int64_t kv_heads, int64_t head_dim,
                       double scale, bool interleaved, double eps) {
             return DecodeStack(std::move(layers), DecodeAttention{heads, kv_heads, head_dim, scale, interleaved},
                                eps);
           }),
           py::arg("layers"), py::arg("heads"), py::arg("kv_heads"), py::arg("head_dim"), py::arg("scale"),
           py::arg("interleaved"), py::arg("eps"))
      .def("step", &DecodeStack::step, py::arg("x"), py::arg("pos"), py::arg("cos"), py::arg("sin"),
           py::call_guard<py::gil_scoped_release>())
      .def("step_at", &DecodeStack::step_at, py::arg("x"), py::arg("position"), py::arg("cos"), py::arg("sin"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("fused", &DecodeStack::fused);
}

}  // namespace tt::python
