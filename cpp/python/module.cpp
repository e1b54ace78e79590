// tinytorch._C: the pybind11 face of libtinytorch_core.
#include <algorithm>
#include <tuple>
#include <vector>
#include "bind.h"
#include "tinytorch/host_wait.h"
#include "tinytorch/parallel.h"

namespace tt::python {

static std::vector<std::tuple<int, const char*, BindFn>>& binders() {
  static std::vector<std::tuple<int, const char*, BindFn>> list;
  return list;
}

bool add_binder(int order, const char* name, BindFn fn) {
  binders().emplace_back(order, name, fn);
  return true;
}

}  // namespace tt::python

PYBIND11_MODULE(_C, m) {
  m.doc() = "tinytorch C++ core: tensors, views, kernels";
  py::register_exception<tt::TypeError>(m, "TypeError", PyExc_TypeError);
  py::register_exception<tt::NotImplementedError>(m, "NotImplementedError", PyExc_NotImplementedError);
  auto& list = tt::python::binders();
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (auto& [order, name, fn] : list) fn(m);
  // Blocking waits in the C++ layers (tinytorch/host_wait.h) let other Python threads run.
  tt::set_host_wait_hooks({[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
                           [](void* s) { PyEval_RestoreThread(static_cast<PyThreadState*>(s)); }});
  m.def("get_num_threads", &tt::get_num_threads);
  m.def("set_num_threads", &tt::set_num_threads);
}
