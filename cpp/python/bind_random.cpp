// Random numbers: _C.Generator (Philox4x32-10 seed + offset), default generators, random ops.
#include "bind.h"
#include "tinytorch/ops/random.h"

namespace tt::python {
namespace {

// Python ints of any sign become a uint64 seed (mod 2^64), as torch.manual_seed accepts.
uint64_t to_seed(const py::int_& v) { return PyLong_AsUnsignedLongLongMask(v.ptr()); }

Device device_or_cpu(const std::optional<Device>& d) { return d.value_or(Device()); }

}  // namespace

TT_BIND(10, random) {
  py::class_<Generator>(m, "Generator")
      .def(py::init([](std::optional<py::int_> seed, std::optional<Device> device) {
             auto g = std::make_unique<Generator>(67280421310721ull, device_or_cpu(device));
             if (seed) g->manual_seed(to_seed(*seed));
             return g;
           }), py::arg("seed") = py::none(), py::arg("device") = py::none())
      .def("manual_seed", [](Generator& g, const py::int_& s) -> Generator& { g.manual_seed(to_seed(s)); return g; },
           py::return_value_policy::reference)
      .def("seed", &Generator::seed)
      .def("initial_seed", &Generator::initial_seed)
      .def_property_readonly("device", &Generator::device)
      .def("get_state", [](const Generator& g) { return py::bytes(g.get_state_bytes()); })
      .def("get_state_tuple", &Generator::get_state)
      .def("set_state", [](Generator& g, const py::object& state) -> Generator& {
             if (py::isinstance<py::bytes>(state)) g.set_state_bytes(state.cast<std::string>());
             else if (py::isinstance<py::tuple>(state) && py::len(state) == 2)
               g.set_state(to_seed(state[py::int_(0)]), to_seed(state[py::int_(1)]));
             else throw TypeError("Generator.set_state: expected 16 bytes or a (seed, offset) tuple");
             return g;
           }, py::return_value_policy::reference);

  m.def("default_generator", [](std::optional<Device> d) -> Generator& { return default_generator(device_or_cpu(d)); },
        py::arg("device") = py::none(), py::return_value_policy::reference);
  m.def("manual_seed", [](const py::int_& s) { manual_seed(to_seed(s)); }, py::arg("seed"));
  m.def("seed", []() { uint64_t s = default_generator().seed(); manual_seed(s); return s; });
  m.def("initial_seed", []() { return default_generator().initial_seed(); });

  m.def("uniform_", [](Tensor& x, double lo, double hi, Generator* g) { uniform_(x, lo, hi, g); }, py::arg("x"),
        py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("generator") = nullptr);
  m.def("normal_", [](Tensor& x, double mean, double std, Generator* g) { normal_(x, mean, std, g); }, py::arg("x"),
        py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("generator") = nullptr);
  m.def("bernoulli_", [](Tensor& x, double p, Generator* g) { bernoulli_(x, p, g); }, py::arg("x"),
        py::arg("p") = 0.5, py::arg("generator") = nullptr);
  m.def("bernoulli", &bernoulli, py::arg("probs"), py::arg("generator") = nullptr);
  m.def("randint", [](int64_t lo, int64_t hi, const Shape& shape, int dtype, std::optional<Device> d, Generator* g) {
    return randint(lo, hi, shape, dtype_from_code(dtype), device_or_cpu(d), g); }, py::arg("low"), py::arg("high"),
        py::arg("shape"), py::arg("dtype") = static_cast<int>(DType::Int64), py::arg("device") = py::none(),
        py::arg("generator") = nullptr);
  m.def("randperm", [](int64_t n, int dtype, std::optional<Device> d, Generator* g) {
    return randperm(n, dtype_from_code(dtype), device_or_cpu(d), g); }, py::arg("n"),
        py::arg("dtype") = static_cast<int>(DType::Int64), py::arg("device") = py::none(),
        py::arg("generator") = nullptr);
  m.def("rand", [](const Shape& shape, int dtype, std::optional<Device> d, Generator* g) {
    return rand(shape, dtype_from_code(dtype), device_or_cpu(d), g); }, py::arg("shape"),
        py::arg("dtype") = static_cast<int>(DType::Float32), py::arg("device") = py::none(),
        py::arg("generator") = nullptr);
  m.def("randn", [](const Shape& shape, int dtype, std::optional<Device> d, Generator* g) {
    return randn(shape, dtype_from_code(dtype), device_or_cpu(d), g); }, py::arg("shape"),
        py::arg("dtype") = static_cast<int>(DType::Float32), py::arg("device") = py::none(),
        py::arg("generator") = nullptr);
}

}  // namespace tt::python
