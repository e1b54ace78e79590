// Fused scaled-dot-product attention (forward, backward, the dropout mask) as _C functions.
#include "bind.h"
#include "tinytorch/ops/attention.h"

namespace tt::python {

// After random (order 10): the generator argument is a _C.Generator.
TT_BIND(12, attention) {
  m.def("scaled_dot_product_attention",
        [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask, bool is_causal,
           std::optional<double> scale, double dropout_p, Generator* gen) {
          auto [out, lse, seed, offset] =
              scaled_dot_product_attention_forward(q, k, v, opt_tensor(mask), {is_causal, scale, dropout_p}, gen);
          return py::make_tuple(out, lse, seed, offset);
        },
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
        py::arg("is_causal") = false, py::arg("scale") = py::none(), py::arg("dropout_p") = 0.0,
        py::arg("generator") = nullptr);
  m.def("scaled_dot_product_attention_backward",
        [](const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask,
           const Tensor& out, const Tensor& lse, bool is_causal, std::optional<double> scale, double dropout_p,
           uint64_t seed, uint64_t offset) {
          auto [gq, gk, gv] = scaled_dot_product_attention_backward(grad_out, q, k, v, opt_tensor(mask), out, lse,
                                                                    {is_causal, scale, dropout_p}, seed, offset);
          return py::make_tuple(gq, gk, gv);
        },
        py::arg("grad_out"), py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask"),
        py::arg("out"), py::arg("lse"), py::arg("is_causal"), py::arg("scale"), py::arg("dropout_p"),
        py::arg("seed"), py::arg("offset"));
  m.def("attention_dropout_mask", &attention_dropout_mask, py::arg("shape"), py::arg("dropout_p"), py::arg("seed"),
        py::arg("offset"), py::arg("device") = Device());
}

}  // namespace tt::python
