// _C.TensorImpl: metadata, views, copies and numpy interop.
#include "bind.h"
#include "tinytorch/ops/elementwise.h"

namespace tt::python {
namespace {

py::tuple to_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

// numpy spells every dtype as tinytorch does, except bfloat16 and float8, which numpy lacks.
bool numpy_has(DType d) { return d != DType::BFloat16 && !is_float8(d); }

py::dtype numpy_dtype(DType d) {
  TT_CHECK_TYPE(numpy_has(d), "Got unsupported ScalarType ", dtype_name(d),
                " for numpy(); convert with .float() first");
  return py::dtype(dtype_name(d));
}

DType dtype_from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const size_t size = dt.itemsize();
  for (int c = 0; c < kNumDTypes; ++c) {
    const auto d = static_cast<DType>(c);
    const char ours = d == DType::Bool ? 'b' : is_floating(d) ? 'f' : is_complex(d) ? 'c' : is_unsigned(d) ? 'u' : 'i';
    if (numpy_has(d) && ours == kind && itemsize(d) == size) return d;
  }
  throw TypeError(str_cat("can't convert np.ndarray of type ", std::string(py::str(dt)),
                          ". The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
                          "int16, int8, uint64, uint32, uint16, uint8, and bool."));
}

// Zero-copy: the tensor borrows the array's memory and keeps the array alive.
Tensor from_numpy(py::array arr) {
  DType dtype = dtype_from_numpy(arr.dtype());
  int64_t isz = static_cast<int64_t>(itemsize(dtype));
  Shape shape(arr.ndim()), strides(arr.ndim());
  int64_t max_offset = 0;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    shape[i] = arr.shape(i);
    py::ssize_t st = arr.strides(i);
    TT_CHECK_VALUE(st >= 0, "At least one stride in the given numpy array is negative, and tensors with negative "
                   "strides are not currently supported. (You can probably work around this by making a copy of "
                   "your array with array.copy().)");
    TT_CHECK_VALUE(st % isz == 0, "given numpy array strides not a multiple of the element byte size. Copy the "
                   "numpy array to reallocate the memory.");
    strides[i] = st / isz;
    if (shape[i] > 0) max_offset += (shape[i] - 1) * strides[i];
  }
  size_t nbytes = shape_numel(shape) == 0 ? 0 : static_cast<size_t>(max_offset + 1) * isz;
  auto* handle = arr.ptr();
  Py_INCREF(handle);
  std::shared_ptr<void> owner(handle, [](void* p) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
  auto storage = std::make_shared<Storage>(arr.mutable_data(), nbytes, Device(), std::move(owner));
  return Tensor(std::move(storage), shape, strides, 0, dtype);
}

py::array to_numpy(const Tensor& t) {
  TT_CHECK_TYPE(t.device().is_cpu(), "can't convert ", t.device().str(),
                " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
  Shape byte_strides(t.strides());
  for (auto& s : byte_strides) s *= static_cast<int64_t>(t.itemsize());
  return py::array(numpy_dtype(t.dtype()), t.shape(), byte_strides, t.data_ptr(), py::cast(t));
}

// One element as a Python number (a template: each branch compiles only for its types).
template <class T>
py::object py_number(T v) {
  if constexpr (std::is_same_v<T, bool>) return py::bool_(v);
  else if constexpr (std::is_unsigned_v<T>) return py::int_(static_cast<uint64_t>(v));
  else if constexpr (std::is_integral_v<T>) return py::int_(static_cast<int64_t>(v));
  else if constexpr (std::is_same_v<T, Complex64> || std::is_same_v<T, Complex128>)
    return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(double(v.re), double(v.im)));
  else return py::float_(static_cast<double>(static_cast<opmath_t<T>>(v)));
}

py::object item(const Tensor& t) {
  TT_CHECK_VALUE(t.numel() == 1, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  TT_CHECK(!t.device().is_meta(), "Tensor.item() cannot be called on meta tensors");  // PyTorch's words and type
  Tensor c = t.device().is_cpu() ? t : t.to(Device());
  return TT_DISPATCH_STORAGE(c.dtype(), "item", [&]() -> py::object { return py_number(*c.data<scalar_t>()); });
}

}  // namespace

TT_BIND(0, tensor) {
  py::class_<Device>(m, "Device")
      .def(py::init<const std::string&>())
      .def(py::init([](int type, int index) { return Device(static_cast<DeviceType>(type), index); }))
      .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : d.is_meta() ? "meta" : "cuda"; })
      .def_readonly("index", &Device::index)
      .def("__str__", &Device::str)
      .def("__eq__", &Device::operator==);

  py::class_<Tensor>(m, "TensorImpl")
      .def_property_readonly("shape", [](const Tensor& t) { return to_tuple(t.shape()); })
      .def("stride", [](const Tensor& t) { return to_tuple(t.strides()); })
      .def_property_readonly("storage_offset", &Tensor::offset)
      // (shape, dtype code) in one call: what autograd records about each input
      .def_property_readonly("meta", [](const Tensor& t) {
        return py::make_tuple(to_tuple(t.shape()), static_cast<int>(t.dtype()));
      })
      .def_property_readonly("dtype_code", [](const Tensor& t) { return static_cast<int>(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("device_str", [](const Tensor& t) { return t.device().str(); })
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("numel", &Tensor::numel)
      .def_property_readonly("itemsize", &Tensor::itemsize)
      .def_property_readonly("version", &Tensor::version)
      .def_property_readonly("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def_property_readonly("storage_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data()); })
      .def_property_readonly("storage_nbytes", [](const Tensor& t) { return t.storage()->nbytes(); })
      // how many tensors (views, saved tensors, ...) share the storage: AccumulateGrad steals a
      // gradient nothing else holds
      .def_property_readonly("storage_use_count", [](const Tensor& t) { return t.storage().use_count(); })
      .def_property_readonly("is_wrapped_number", &Tensor::is_wrapped_number)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("bump_version", &Tensor::bump_version)
      .def("size", &Tensor::size)
      .def("describe", &Tensor::describe)
      .def("as_strided", &Tensor::as_strided, py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none())
      .def("view", &Tensor::view)
      .def("reshape", &Tensor::reshape)
      .def("transpose", &Tensor::transpose)
      .def("permute", &Tensor::permute)
      .def("expand", &Tensor::expand)
      .def("slice", &Tensor::slice, py::arg("dim"), py::arg("start"), py::arg("stop"), py::arg("step") = 1)
      .def("narrow", &Tensor::narrow)
      .def("select", &Tensor::select)
      .def("squeeze", py::overload_cast<>(&Tensor::squeeze, py::const_))
      .def("squeeze", py::overload_cast<const Shape&>(&Tensor::squeeze, py::const_))
      .def("unsqueeze", &Tensor::unsqueeze)
      .def("flatten", &Tensor::flatten)
      .def("unfold", &Tensor::unfold)
      .def("diagonal", &Tensor::diagonal)
      .def("view_dtype", [](const Tensor& t, int code) { return t.view_dtype(dtype_from_code(code)); })
      .def("view_as_real", &Tensor::view_as_real)
      .def("view_as_complex", &Tensor::view_as_complex)
      .def("alias", &Tensor::alias)
      .def("contiguous", &Tensor::contiguous)
      .def("clone", &Tensor::clone)
      .def("to_dtype", [](const Tensor& t, int code, bool copy) { return t.to(dtype_from_code(code), copy); },
           py::arg("dtype"), py::arg("copy") = false)
      .def("to_device", [](const Tensor& t, const Device& d, bool copy, bool non_blocking) {
             return t.to(d, copy, non_blocking); }, py::arg("device"), py::arg("copy") = false,
           py::arg("non_blocking") = false)
      .def("copy_", [](Tensor& t, const Tensor& src, bool non_blocking) { t.copy_(src, non_blocking); },
           py::arg("src"), py::arg("non_blocking") = false)
      .def("numpy", &to_numpy)
      .def("item", &item);

  m.def("from_numpy", &from_numpy);
  m.def("empty", [](const Shape& shape, int code, const Device& d) { return Tensor::empty(shape, dtype_from_code(code), d); });
  m.def("full", [](const Shape& shape, double v, int code, const Device& d) { return full(shape, v, dtype_from_code(code), d); });
  m.def("scalar_tensor", [](double v, int code) { return scalar_tensor(v, dtype_from_code(code)); });
  // a Python complex number as an operand: a 0-dim complex128 wrapped number, as PyTorch's
  m.def("complex_scalar_tensor", [](double re, double im) {
    Tensor t = scalar_tensor(0.0, DType::Complex128);
    *t.data<Complex128>() = Complex128(re, im);
    return t;
  });
  m.def("promote_types", [](int a, int b) { return static_cast<int>(promote_types(dtype_from_code(a), dtype_from_code(b))); });
  m.def("result_type", [](const Tensor& a, const Tensor& b) { return static_cast<int>(result_type({&a, &b})); });
  m.def("can_cast", [](int a, int b) { return can_cast(dtype_from_code(a), dtype_from_code(b)); });
  m.def("dtype_name", [](int code) { return dtype_name(dtype_from_code(code)); });
  m.def("itemsize", [](int code) { return itemsize(dtype_from_code(code)); });
}

}  // namespace tt::python
