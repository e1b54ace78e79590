// Elementwise ops: one _C function per UnaryOp/BinaryOp (the schema's rows), plus in-place forms.
#include "bind.h"
#include "tinytorch/ops/elementwise.h"

namespace tt::python {

TT_BIND(10, elementwise) {
#define TT_DEF_UNARY(Name, name, cls)                                                                        \
  m.def(#name, [](const Tensor& x, double a, double b) { return unary(UnaryOp::Name, x, {a, b}); },     \
        py::arg("x"), py::arg("a") = 0.0, py::arg("b") = 0.0);                                          \
  m.def(#name "_", [](Tensor& x, double a, double b) { unary_(UnaryOp::Name, x, {a, b}); },            \
        py::arg("x"), py::arg("a") = 0.0, py::arg("b") = 0.0);
  TT_UNARY_OPS(TT_DEF_UNARY)
#undef TT_DEF_UNARY

#define TT_DEF_BINARY(Name, name, cls)                                                                         \
  m.def(#name, [](const Tensor& x, const Tensor& y, double a, double b) {                                 \
    return binary(BinaryOp::Name, x, y, {a, b}); }, py::arg("a"), py::arg("b"), py::arg("s0") = 1.0,     \
        py::arg("s1") = 0.0);                                                                             \
  m.def(#name "_", [](Tensor& x, const Tensor& y, double a, double b) {                                   \
    binary_(BinaryOp::Name, x, y, {a, b}); }, py::arg("a"), py::arg("b"), py::arg("s0") = 1.0,           \
        py::arg("s1") = 0.0);
  TT_BINARY_OPS(TT_DEF_BINARY)
#undef TT_DEF_BINARY

  m.def("where", &where);
  m.def("clamp", [](const Tensor& x, std::optional<Tensor> lo, std::optional<Tensor> hi) {
    return clamp(x, lo.value_or(Tensor()), hi.value_or(Tensor()));
  });
  m.def("fill_", [](Tensor& x, double v) { fill_(x, v); });
}

}  // namespace tt::python
