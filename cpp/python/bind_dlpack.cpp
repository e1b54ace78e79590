// DLPack export and import (tinytorch._C.to_dlpack / from_dlpack): zero-copy exchange of CPU and
// CUDA tensors with numpy, PyTorch, CuPy, JAX. Stream synchronisation is the Python side's
// (tinytorch/_interop.py); this file only moves the capsule.
#include <algorithm>
#include <cstring>
#include <vector>
#include "bind.h"
#include "tinytorch/dlpack.h"

namespace tt::python {
namespace {

using namespace tt::dlpack;

constexpr const char* kName = "dltensor";
constexpr const char* kUsedName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

DLDataType to_dl_dtype(DType d) {
  const auto bits = static_cast<uint8_t>(8 * itemsize(d));
  if (d == DType::Bool) return {kDLBool, 8, 1};
  if (d == DType::BFloat16) return {kDLBfloat, 16, 1};
  TT_CHECK_TYPE(!is_float8(d), "to_dlpack: ", dtype_name(d), " tensors can't be exported (DLPack has no float8 here)");
  if (is_floating(d)) return {kDLFloat, bits, 1};
  if (is_complex(d)) return {kDLComplex, bits, 1};
  return {is_unsigned(d) ? kDLUInt : kDLInt, bits, 1};
}

DType from_dl_dtype(DLDataType t) {
  TT_CHECK_TYPE(t.lanes == 1, "from_dlpack: vector dtypes (lanes=", t.lanes, ") are not supported");
  for (int c = 0; c < kNumDTypes; ++c) {
    if (is_float8(static_cast<DType>(c))) continue;
    const DLDataType ours = to_dl_dtype(static_cast<DType>(c));
    if (ours.code == t.code && ours.bits == t.bits) return static_cast<DType>(c);
  }
  static const char* names[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
  throw TypeError(str_cat("from_dlpack: unsupported DLPack dtype ", t.code < 7 ? names[t.code] : "code?",
                          static_cast<int>(t.bits), "; tinytorch supports bool, uint8/16/32/64, int8/16/32/64, "
                          "float16, bfloat16, float32, float64, complex64, complex128"));
}

// What an exported capsule owns: a tensor (keeping its storage alive) and the shape/stride
// arrays DLTensor points into.
template <class Managed>
struct ExportContext {
  Managed managed{};
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

template <class Managed>
void fill(ExportContext<Managed>* ctx) {
  const Tensor& t = ctx->tensor;
  ctx->shape.assign(t.shape().begin(), t.shape().end());
  ctx->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = t.storage()->data();  // base pointer + byte_offset, as PyTorch exports
  dl.byte_offset = static_cast<uint64_t>(t.offset()) * t.itemsize();
  dl.device = t.device().is_cuda() ? DLDevice{kDLCUDA, t.device().index} : DLDevice{kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](Managed* self) { delete static_cast<ExportContext<Managed>*>(self->manager_ctx); };
}

// Capsule destructor: deletes the tensor only if no consumer took it (renamed it "used_...").
template <class Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed: the consumer calls the deleter
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
}

py::capsule to_dlpack(const Tensor& t, bool versioned) {
  TT_CHECK_TYPE(!t.device().is_meta(), "to_dlpack: a meta tensor (", t.describe(), ") has no data to share");
  if (versioned) {
    auto ctx = std::make_unique<ExportContext<DLManagedTensorVersioned>>();
    ctx->tensor = t;
    fill(ctx.get());
    ctx->managed.version = {kMajorVersion, kMinorVersion};
    ctx->managed.flags = 0;
    PyObject* cap = PyCapsule_New(&ctx->managed, kVersionedName, [](PyObject* c) {
      capsule_destructor<DLManagedTensorVersioned>(c, kVersionedName);
    });
    if (!cap) throw py::error_already_set();
    ctx.release();
    return py::reinterpret_steal<py::capsule>(cap);
  }
  auto ctx = std::make_unique<ExportContext<DLManagedTensor>>();
  ctx->tensor = t;
  fill(ctx.get());
  PyObject* cap = PyCapsule_New(&ctx->managed, kName, [](PyObject* c) {
    capsule_destructor<DLManagedTensor>(c, kName);
  });
  if (!cap) throw py::error_already_set();
  ctx.release();
  return py::reinterpret_steal<py::capsule>(cap);
}

// The geometry of a capsule's tensor, checked before the capsule is marked consumed (so a refused
// capsule stays the producer's to free).
struct Geometry {
  DType dtype;
  Device device;
  Shape shape, strides;
  char* data;
  size_t nbytes;
};

Geometry check_geometry(const DLTensor& dl) {
  TT_CHECK_VALUE(dl.ndim >= 0, "from_dlpack: negative ndim ", dl.ndim);
  Geometry g{from_dl_dtype(dl.dtype), Device(), Shape(dl.ndim), Shape(dl.ndim), nullptr, 0};
  if (dl.device.device_type == kDLCUDA || dl.device.device_type == kDLCUDAManaged) {
    g.device = Device(DeviceType::CUDA, dl.device.device_id);
  } else {
    TT_CHECK_TYPE(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost,
                  "from_dlpack: unsupported DLPack device type ", dl.device.device_type,
                  " (tinytorch takes CPU and CUDA memory)");
  }
  int64_t isz = static_cast<int64_t>(itemsize(g.dtype));
  int64_t contiguous = 1;
  for (int i = dl.ndim - 1; i >= 0; --i) {
    g.shape[i] = dl.shape[i];
    TT_CHECK_VALUE(g.shape[i] >= 0, "from_dlpack: negative size ", g.shape[i], " in dim ", i);
    g.strides[i] = dl.strides ? dl.strides[i] : contiguous;
    contiguous *= g.shape[i];
  }
  int64_t max_offset = 0;
  for (int i = 0; i < dl.ndim; ++i) {
    if (g.shape[i] <= 1) g.strides[i] = std::max<int64_t>(g.strides[i], 0);  // any stride reads one element
    TT_CHECK_VALUE(g.strides[i] >= 0, "from_dlpack: negative strides are not supported (dim ", i, " has stride ",
                   g.strides[i], "); copy the array first");
    if (g.shape[i] > 0) max_offset += (g.shape[i] - 1) * g.strides[i];
  }
  TT_CHECK_VALUE(dl.byte_offset % isz == 0, "from_dlpack: byte_offset ", dl.byte_offset,
                 " is not a multiple of the element size ", isz);
  g.data = static_cast<char*>(dl.data) + dl.byte_offset;
  g.nbytes = shape_numel(g.shape) == 0 ? 0 : static_cast<size_t>(max_offset + 1) * isz;
  return g;
}

// Wraps the producer's memory; the storage's owner calls the producer's deleter when the last
// view of it dies (with the GIL: numpy's and PyTorch's deleters touch Python objects).
template <class Managed>
Tensor wrap_managed(Managed* m, Geometry g) {
  std::shared_ptr<void> owner(static_cast<void*>(m), [](void* p) {
    auto* managed = static_cast<Managed*>(p);
    if (!managed->deleter) return;
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      managed->deleter(managed);
    } else {
      managed->deleter(managed);
    }
  });
  auto storage = std::make_shared<Storage>(static_cast<void*>(g.data), g.nbytes, g.device, std::move(owner));
  return Tensor(std::move(storage), g.shape, g.strides, 0, g.dtype);
}

[[noreturn]] void already_consumed(const char* name) {
  throw std::runtime_error(str_cat("from_dlpack: this DLPack capsule was already consumed (its name is '", name,
                                   "'); a capsule can be imported only once: call __dlpack__() again for a new one"));
}

Tensor from_dlpack(py::capsule capsule) {
  PyObject* cap = capsule.ptr();
  const char* name = PyCapsule_GetName(cap);
  if (name == nullptr) throw py::error_already_set();
  if (std::strcmp(name, kUsedName) == 0 || std::strcmp(name, kUsedVersionedName) == 0) already_consumed(name);
  if (std::strcmp(name, kVersionedName) == 0) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedName));
    if (!m) throw py::error_already_set();
    TT_CHECK_TYPE(m->version.major <= kMajorVersion, "from_dlpack: DLPack version ", m->version.major, ".",
                  m->version.minor, " is newer than the supported ", kMajorVersion, ".", kMinorVersion);
    TT_CHECK_TYPE(!(m->flags & kFlagReadOnly), "from_dlpack: the producer exported read-only memory, which a "
                  "tinytorch tensor (always writable) can't share; copy it first (e.g. np.array(x))");
    Geometry g = check_geometry(m->dl_tensor);
    if (PyCapsule_SetName(cap, kUsedVersionedName) != 0) throw py::error_already_set();
    return wrap_managed(m, std::move(g));  // owns m from here: the storage releases it
  }
  TT_CHECK_TYPE(std::strcmp(name, kName) == 0, "from_dlpack: expected a 'dltensor' or 'dltensor_versioned' "
                "capsule, got '", name, "'");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kName));
  if (!m) throw py::error_already_set();
  Geometry g = check_geometry(m->dl_tensor);
  if (PyCapsule_SetName(cap, kUsedName) != 0) throw py::error_already_set();
  return wrap_managed(m, std::move(g));
}

}  // namespace

TT_BIND(90, dlpack) {
  m.def("to_dlpack", &to_dlpack, py::arg("tensor"), py::arg("versioned") = false,
        "A DLPack capsule sharing the tensor's memory ('dltensor_versioned' when versioned)");
  m.def("from_dlpack", &from_dlpack, py::arg("capsule"),
        "A tensor sharing the memory of a DLPack capsule, which is marked consumed");
}

}  // namespace tt::python
