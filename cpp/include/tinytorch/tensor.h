#pragma once
// Tensor = Storage + (shape, strides, offset, dtype). Every view shares the Storage:
// writes through a view are seen by its base.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>
#include "tinytorch/device.h"
#include "tinytorch/dtype.h"
#include "tinytorch/error.h"
#include "tinytorch/storage.h"

namespace tt {

using Shape = std::vector<int64_t>;

Shape contiguous_strides(const Shape& shape);
int64_t shape_numel(const Shape& shape);
// Bytes a contiguous tensor of shape/dtype needs; RuntimeError when the count overflows.
size_t storage_nbytes(const Shape& shape, DType dtype);
// Wraps a possibly negative dim into [0, ndim); IndexError naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

class Tensor {
 public:
  Tensor() = default;  // undefined
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype);

  static Tensor empty(const Shape& shape, DType dtype, Device device = Device());

  bool defined() const { return static_cast<bool>(storage_); }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t offset() const { return offset_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  DType dtype() const { return dtype_; }
  size_t itemsize() const { return tt::itemsize(dtype_); }
  Device device() const { return storage_->device(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  void* data_ptr() const { return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(itemsize()); }
  // Typed access to the elements (host code reads them through this): a meta tensor has none.
  template <class T> T* data() const {
    if (device().is_meta()) throw_no_data();
    return static_cast<T*>(data_ptr());
  }
  bool is_contiguous() const;
  bool is_same(const Tensor& o) const { return storage_ == o.storage_ && offset_ == o.offset_ && shape_ == o.shape_ && strides_ == o.strides_; }
  int64_t version() const { return storage_->version(); }
  void bump_version() const { storage_->bump_version(); }
  std::string describe() const;
  [[noreturn]] void throw_no_data() const;  // NotImplementedError: a meta tensor's data was read
  // A Python number turned into a 0-dim tensor: it takes part in type promotion only by
  // category (PyTorch's "wrapped number"), so int8 tensor + 1.5 -> float32, not float64.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }  // "float32[2, 3] on cpu", for error messages

  // ---- views: all alias this tensor's storage ----
  Tensor as_strided(const Shape& shape, const Shape& strides, std::optional<int64_t> offset = std::nullopt) const;
  Tensor view(Shape shape) const;                 // RuntimeError when strides can't express it
  Tensor reshape(Shape shape) const;              // a view when possible, else a copy
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(const Shape& dims) const;
  Tensor expand(const Shape& shape) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor squeeze() const;
  Tensor squeeze(const Shape& dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  Tensor diagonal(int64_t offset = 0, int64_t d0 = 0, int64_t d1 = 1) const;
  Tensor view_dtype(DType dtype) const;           // the same bytes read as another dtype
  Tensor view_as_real() const;                    // complex (..., n) -> real (..., n, 2), same bytes
  Tensor view_as_complex() const;                 // real (..., n, 2) -> complex (..., n), same bytes
  Tensor alias() const { return *this; }

  // ---- copies ----
  Tensor contiguous() const;                        // self when already contiguous
  Tensor clone() const;                             // always a fresh contiguous copy
  Tensor to(DType dtype, bool copy = false) const;  // self when dtype matches and !copy
  Tensor to(Device device, bool copy = false, bool non_blocking = false) const;
  // Any dtype/layout/broadcastable shape, across devices too; non_blocking lets a copy from or to
  // pinned host memory run asynchronously on the current stream.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_, strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 0;
  DType dtype_ = DType::Float32;
  bool wrapped_number_ = false;
};

// Shape both broadcast to, or ValueError naming op and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Raises RuntimeError naming op when the tensors are on different devices.
void check_same_device(const char* op, const Tensor& a, const Tensor& b);

}  // namespace tt
