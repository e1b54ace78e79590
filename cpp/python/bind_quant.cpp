// Quantized-weight (llama.cpp block) ops as _C functions.
#include "bind.h"
#include "tinytorch/ops/quant.h"

namespace tt::python {

TT_BIND(10, quant) {
  m.def("quant_row_bytes", &quant_row_bytes, py::arg("qtype"), py::arg("in_features"));
  m.def(
      "quant_dequantize",
      [](const Tensor& weight, int64_t qtype, int64_t out_features, int64_t in_features, int dtype) {
        return quant_dequantize(weight, qtype, out_features, in_features, dtype_from_code(dtype));
      },
      py::arg("weight"), py::arg("qtype"), py::arg("out_features"), py::arg("in_features"), py::arg("dtype"));
  m.def(
      "quant_linear",
      [](const Tensor& input, const Tensor& weight, int64_t qtype, int64_t out_features, int64_t in_features,
         const std::optional<Tensor>& bias) {
        return quant_linear(input, weight, qtype, out_features, in_features, opt_tensor(bias));
      },
      py::arg("input"), py::arg("weight"), py::arg("qtype"), py::arg("out_features"), py::arg("in_features"),
      py::arg("bias") = py::none());
  m.def("set_quant_int8_activations", &set_quant_int8_activations, py::arg("on"));
  m.def("quant_int8_activations", static_cast<bool (*)()>(&quant_int8_activations));
}

}  // namespace tt::python
