// Factorizations and solvers: _C.lu_factor_ex / lu_solve / cholesky_ex / qr / eigh / svd /
// solve_triangular. Info results come back as tensors; tinytorch/_ops/decomposition.pyx checks them.
#include "bind.h"
#include "tinytorch/ops/decomposition.h"

namespace tt::python {

TT_BIND(10, decomposition) {
  m.def("lu_factor_ex", [](const Tensor& A) {
    auto [lu, piv, info] = lu_factor_ex(A);
    return py::make_tuple(lu, piv, info);
  }, py::arg("A"));
  m.def("lu_solve", &lu_solve, py::arg("LU"), py::arg("pivots"), py::arg("B"), py::arg("adjoint") = false);
  m.def("cholesky_ex", [](const Tensor& A, bool upper) {
    auto [L, info] = cholesky_ex(A, upper);
    return py::make_tuple(L, info);
  }, py::arg("A"), py::arg("upper") = false);
  m.def("qr", [](const Tensor& A, const std::string& mode) {
    auto [Q, R] = qr(A, mode);
    return py::make_tuple(Q, R);
  }, py::arg("A"), py::arg("mode") = "reduced");
  m.def("eigh", [](const Tensor& A, bool upper, bool vectors) {
    auto [w, V, info] = eigh(A, upper, vectors);
    return py::make_tuple(w, none_if_undefined(V), info);
  }, py::arg("A"), py::arg("upper") = false, py::arg("vectors") = true);
  m.def("svd", [](const Tensor& A, bool full_matrices, bool compute_uv) {
    auto [U, S, Vh, info] = svd(A, full_matrices, compute_uv);
    return py::make_tuple(none_if_undefined(U), S, none_if_undefined(Vh), info);
  }, py::arg("A"), py::arg("full_matrices") = true, py::arg("compute_uv") = true);
  m.def("solve_triangular", &solve_triangular, py::arg("A"), py::arg("B"), py::arg("upper"),
        py::arg("left") = true, py::arg("unitriangular") = false);
}

}  // namespace tt::python
