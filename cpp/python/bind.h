#pragma once
// Each bind_*.cpp adds its part of tinytorch._C with TT_BIND(order, name) { ... }; module.cpp
// runs them in `order` (the tensor type first), so no central list needs editing.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <functional>
#include <optional>
#include "tinytorch/tensor.h"

namespace py = pybind11;

namespace tt::python {

using BindFn = void (*)(py::module_&);
bool add_binder(int order, const char* name, BindFn fn);

// dtype codes as Python sees them: the DType enum's order.
inline DType dtype_from_code(int code) {
  TT_CHECK_TYPE(code >= 0 && code < kNumDTypes, "invalid dtype code ", code);
  return static_cast<DType>(code);
}
// An optional dtype code (None = the op's default).
inline std::optional<DType> opt_dtype(std::optional<int> code) {
  if (!code) return std::nullopt;
  return dtype_from_code(*code);
}
// Optional tensor arguments and results: None <-> an undefined Tensor.
inline Tensor opt_tensor(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }
inline py::object none_if_undefined(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

}  // namespace tt::python

#define TT_BIND(ORDER, NAME)                                                                  \
  static void tt_bind_##NAME(py::module_& m);                                                 \
  static const bool tt_binder_##NAME = ::tt::python::add_binder(ORDER, #NAME, tt_bind_##NAME); \
  static void tt_bind_##NAME(py::module_& m)
