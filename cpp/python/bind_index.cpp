// Indexing, joining/shape, sorting and factory ops. dtype arguments are DType codes.
#include "bind.h"
#include "tinytorch/ops/index.h"
#include "tinytorch/ops/shape.h"

namespace tt::python {

TT_BIND(10, index) {
  // ---- indexing ----
  m.def("index_select", &index_select, py::arg("x"), py::arg("dim"), py::arg("index"));
  m.def("gather", &gather, py::arg("x"), py::arg("dim"), py::arg("index"));
  m.def("scatter", py::overload_cast<const Tensor&, int64_t, const Tensor&, const Tensor&>(&scatter),
        py::arg("x"), py::arg("dim"), py::arg("index"), py::arg("src"));
  m.def("scatter", py::overload_cast<const Tensor&, int64_t, const Tensor&, double>(&scatter),
        py::arg("x"), py::arg("dim"), py::arg("index"), py::arg("value"));
  m.def("scatter_", [](Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) { scatter_(x, dim, index, src); },
        py::arg("x"), py::arg("dim"), py::arg("index"), py::arg("src"));
  m.def("scatter_", [](Tensor& x, int64_t dim, const Tensor& index, double v) { scatter_(x, dim, index, v); },
        py::arg("x"), py::arg("dim"), py::arg("index"), py::arg("value"));
  m.def("scatter_add", &scatter_add, py::arg("x"), py::arg("dim"), py::arg("index"), py::arg("src"));
  m.def("scatter_add_", [](Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
    scatter_add_(x, dim, index, src); }, py::arg("x"), py::arg("dim"), py::arg("index"), py::arg("src"));
  m.def("masked_fill", &masked_fill, py::arg("x"), py::arg("mask"), py::arg("value"));
  m.def("masked_fill_", [](Tensor& x, const Tensor& mask, double v) { masked_fill_(x, mask, v); },
        py::arg("x"), py::arg("mask"), py::arg("value"));
  m.def("masked_select", &masked_select, py::arg("x"), py::arg("mask"));
  m.def("nonzero", &nonzero, py::arg("x"));
  m.def("index", &index, py::arg("x"), py::arg("indices"));
  m.def("index_put_", [](Tensor& x, const std::vector<OptTensor>& indices, const Tensor& values, bool accumulate) {
    index_put_(x, indices, values, accumulate); }, py::arg("x"), py::arg("indices"), py::arg("values"),
        py::arg("accumulate") = false);
  m.def("index_put", [](const Tensor& x, const std::vector<OptTensor>& indices, const Tensor& values, bool accumulate) {
    Tensor out = x.clone();
    index_put_(out, indices, values, accumulate);
    return out; }, py::arg("x"), py::arg("indices"), py::arg("values"), py::arg("accumulate") = false);

  // ---- sorting ----
  m.def("sort", &sort, py::arg("x"), py::arg("dim") = -1, py::arg("descending") = false, py::arg("stable") = false);
  m.def("argsort", &argsort, py::arg("x"), py::arg("dim") = -1, py::arg("descending") = false,
        py::arg("stable") = false);
  m.def("topk", &topk, py::arg("x"), py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true,
        py::arg("sorted") = true);

  // ---- joining / shape ----
  m.def("cat", &cat, py::arg("tensors"), py::arg("dim") = 0);
  m.def("stack", &stack, py::arg("tensors"), py::arg("dim") = 0);
  m.def("flip", &flip, py::arg("x"), py::arg("dims"));
  m.def("roll", &roll, py::arg("x"), py::arg("shifts"), py::arg("dims") = std::vector<int64_t>{});
  m.def("repeat", &repeat, py::arg("x"), py::arg("repeats"));
  m.def("tril", &tril, py::arg("x"), py::arg("diagonal") = 0);
  m.def("triu", &triu, py::arg("x"), py::arg("diagonal") = 0);
  m.def("one_hot", &one_hot, py::arg("indices"), py::arg("num_classes") = -1);

  // ---- factories ----
  // Python ints take the exact int64 path (listed first: pybind tries overloads in order).
  m.def("arange", [](int64_t start, int64_t end, int64_t step, int dtype, const Device& device) {
    return arange(start, end, step, dtype_from_code(dtype), device); }, py::arg("start"), py::arg("end"),
        py::arg("step") = 1, py::arg("dtype") = static_cast<int>(DType::Int64), py::arg("device") = Device());
  m.def("arange", [](double start, double end, double step, int dtype, const Device& device) {
    return arange(start, end, step, dtype_from_code(dtype), device); }, py::arg("start"), py::arg("end"),
        py::arg("step") = 1.0, py::arg("dtype") = static_cast<int>(DType::Int64), py::arg("device") = Device());
  m.def("linspace", [](double start, double end, int64_t steps, int dtype, const Device& device) {
    return linspace(start, end, steps, dtype_from_code(dtype), device); }, py::arg("start"), py::arg("end"),
        py::arg("steps"), py::arg("dtype") = static_cast<int>(DType::Float32), py::arg("device") = Device());
  m.def("eye", [](int64_t n, std::optional<int64_t> mm, int dtype, const Device& device) {
    return eye(n, mm.value_or(-1), dtype_from_code(dtype), device); }, py::arg("n"), py::arg("m") = py::none(),
        py::arg("dtype") = static_cast<int>(DType::Float32), py::arg("device") = Device());
}

}  // namespace tt::python
