#include "tinytorch/tensor.h"
#include <algorithm>
#include <numeric>
#include "tinytorch/kernels/elementwise.h"

namespace tt {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

// Every tensor's element count comes through here, views included: a shape whose product overflows
// int64 (expand(2**62, 4), a crafted checkpoint's geometry) is refused, not wrapped to a small count.
int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : shape) overflow |= __builtin_mul_overflow(n, s, &n);
  for (int64_t s : shape) if (s == 0) return 0;   // empty, however large the other dimensions
  TT_CHECK(!overflow, "numel: integer multiplication overflow for sizes ", shape_str(shape));
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  TT_CHECK_INDEX(dim >= lo && dim <= hi, op, ": Dimension out of range (expected to be in range of [", lo, ", ",
                 hi, "], but got ", dim, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

// A dim that indexes shape_ needs a tensor with a dimension (wrap_dim lets 0-d tensors take dim 0
// or -1, as reductions over them do).
static int64_t wrap_indexed_dim(int64_t dim, int64_t ndim, const char* op) {
  TT_CHECK_INDEX(ndim > 0, op, ": dimension specified as ", dim, " but tensor has no dimensions");
  return wrap_dim(dim, ndim, op);
}

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset),
      numel_(shape_numel(shape_)), dtype_(dtype) {}

// shape -> numel -> bytes, each step checked: every allocation of a tensor comes through here.
size_t storage_nbytes(const Shape& shape, DType dtype) {
  for (int64_t s : shape)
    TT_CHECK(s >= 0, "empty: negative dimension ", s, " in shape ", shape_str(shape));
  int64_t n = 1, nbytes = 0;
  bool overflow = false;
  for (int64_t s : shape) overflow |= __builtin_mul_overflow(n, s, &n);
  overflow |= __builtin_mul_overflow(n, static_cast<int64_t>(tt::itemsize(dtype)), &nbytes);
  // A zero dimension makes any shape empty, however large the others.
  for (int64_t s : shape) if (s == 0) return 0;
  TT_CHECK(!overflow, "Storage size calculation overflowed with sizes=", shape_str(shape));
  return static_cast<size_t>(nbytes);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  auto storage = std::make_shared<Storage>(storage_nbytes(shape, dtype), device);
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

int64_t Tensor::size(int64_t d) const { return shape_[wrap_indexed_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides_[wrap_indexed_dim(d, dim(), "stride")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::string Tensor::describe() const {
  return str_cat(dtype_name(dtype_), shape_str(shape_), " on ", device().str());
}

// ---------------------------------------------------------------- views

Tensor Tensor::as_strided(const Shape& shape, const Shape& strides, std::optional<int64_t> offset) const {
  TT_CHECK(shape.size() == strides.size(), "as_strided: mismatch in length of strides and shape (",
           shape.size(), " vs ", strides.size(), ")");
  int64_t off = offset.value_or(offset_);
  TT_CHECK(off >= 0, "as_strided: negative storage offset ", off);
  int64_t max_index = off;
  for (size_t i = 0; i < shape.size(); ++i) {
    TT_CHECK(shape[i] >= 0, "as_strided: negative size ", shape[i]);
    TT_CHECK(strides[i] >= 0, "as_strided: negative strides are not supported, got ", shape_str(strides));
    if (shape[i] == 0) { max_index = -1; break; }
    int64_t reach = 0;   // checked: a wrapped reach would pass the capacity check below
    TT_CHECK(!__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) &&
                 !__builtin_add_overflow(max_index, reach, &max_index),
             "as_strided: sizes ", shape_str(shape), " and strides ", shape_str(strides), " overflow int64");
  }
  int64_t capacity = static_cast<int64_t>(storage_->nbytes() / tt::itemsize(dtype_));
  TT_CHECK(max_index < capacity, "as_strided: setStorage: sizes ", shape_str(shape), ", strides ",
           shape_str(strides), ", storage offset ", off, " require ", max_index + 1,
           " elements, but the storage holds only ", capacity);
  return Tensor(storage_, shape, strides, off, dtype_);
}

// Infers a -1 entry and checks the element count.
static Shape infer_shape(Shape shape, int64_t numel, const char* op) {
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TT_CHECK(infer < 0, op, ": only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      TT_CHECK(shape[i] >= 0, op, ": invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    TT_CHECK(known != 0 && numel % known == 0, op, ": shape '", shape_str(shape), "' is invalid for input of size ", numel);
    shape[infer] = numel / known;
  }
  TT_CHECK(shape_numel(shape) == numel, op, ": shape '", shape_str(shape), "' is invalid for input of size ", numel);
  return shape;
}

// Strides giving `shape` over the same memory as (old_shape, old_strides), if any exist
// (PyTorch's computeStride): each run of merged old dims must be contiguous within itself.
static std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides, const Shape& shape) {
  Shape strides(shape.size());
  if (old_shape.empty()) return Shape(shape.size(), 1);
  int64_t numel = shape_numel(old_shape);
  if (numel == 0) {
    if (old_shape == shape) return old_strides;
    return contiguous_strides(shape);
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

Tensor Tensor::view(Shape shape) const {
  shape = infer_shape(std::move(shape), numel_, "view");
  auto strides = view_strides(shape_, strides_, shape);
  TT_CHECK(strides.has_value(), "view size is not compatible with input tensor's size and stride (at least one "
           "dimension spans across two contiguous subspaces): input ", shape_str(shape_), " with strides ",
           shape_str(strides_), " to ", shape_str(shape), ". Use .reshape(...) instead.");
  return Tensor(storage_, shape, *strides, offset_, dtype_);
}

Tensor Tensor::reshape(Shape shape) const {
  shape = infer_shape(std::move(shape), numel_, "reshape");
  if (auto strides = view_strides(shape_, strides_, shape)) return Tensor(storage_, shape, *strides, offset_, dtype_);
  return clone().view(shape);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  if (dim() == 0) return *this;
  d0 = wrap_dim(d0, dim(), "transpose");
  d1 = wrap_dim(d1, dim(), "transpose");
  Shape shape = shape_, strides = strides_;
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::permute(const Shape& dims) const {
  TT_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute(sparse_coo): number of dimensions in the tensor input "
           "does not match the length of the desired ordering of dimensions i.e. input.dim() = ", dim(),
           " is not equal to len(dims) = ", dims.size());
  Shape shape(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], dim(), "permute");
    TT_CHECK(!seen[d], "permute: repeated dim ", dims[i], " in ", shape_str(dims));
    seen[d] = true;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  TT_CHECK(shape.size() >= shape_.size(), "expand: the number of sizes provided (", shape.size(),
           ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
  size_t lead = shape.size() - shape_.size();
  Shape out_shape(shape.size()), out_strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      TT_CHECK(shape[i] >= 0, "expand: the expanded size ", shape[i], " is not allowed in a leading, non-existing dimension ", i);
      out_shape[i] = shape[i];
      out_strides[i] = 0;
      continue;
    }
    int64_t have = shape_[i - lead], want = shape[i] == -1 ? have : shape[i];
    if (have == want) {
      out_shape[i] = have;
      out_strides[i] = strides_[i - lead];
    } else {
      TT_CHECK(have == 1, "expand: the expanded size of the tensor (", want, ") must match the existing size (",
               have, ") at non-singleton dimension ", i, ".  Target sizes: ", shape_str(shape),
               ".  Tensor sizes: ", shape_str(shape_));
      out_shape[i] = want;
      out_strides[i] = 0;
    }
  }
  return Tensor(storage_, out_shape, out_strides, offset_, dtype_);
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) const {
  d = wrap_indexed_dim(d, dim(), "slice");
  TT_CHECK_VALUE(step > 0, "slice: step must be greater than zero, got ", step);
  int64_t n = shape_[d];
  auto clampi = [n](int64_t v) { if (v < 0) v += n; return std::min(std::max<int64_t>(v, 0), n); };
  int64_t b = start ? clampi(*start) : 0;
  int64_t e = stop ? clampi(*stop) : n;
  int64_t len = e > b ? (e - b + step - 1) / step : 0;
  Shape shape = shape_, strides = strides_;
  shape[d] = len;
  strides[d] *= step;
  return Tensor(storage_, shape, strides, offset_ + b * strides_[d], dtype_);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  d = wrap_indexed_dim(d, dim(), "narrow");
  int64_t n = shape_[d];
  if (start < 0) start += n;
  TT_CHECK_INDEX(start >= 0 && start <= n, "narrow: start (", start, ") out of range for dimension ", d, " of size ", n);
  TT_CHECK(length >= 0 && start + length <= n, "narrow: start (", start, ") + length (", length,
           ") exceeds dimension size (", n, ").");
  return slice(d, start, start + length, 1);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  TT_CHECK_INDEX(dim() > 0, "select: cannot be applied to a 0-dim tensor.");
  d = wrap_dim(d, dim(), "select");
  int64_t n = shape_[d];
  TT_CHECK_INDEX(index >= -n && index < n, "select: index ", index, " is out of bounds for dimension ", d,
                 " with size ", n);
  if (index < 0) index += n;
  Shape shape = shape_, strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, shape, strides, offset_ + index * strides_[d], dtype_);
}

Tensor Tensor::squeeze() const {
  Shape shape, strides;
  for (int64_t i = 0; i < dim(); ++i)
    if (shape_[i] != 1) { shape.push_back(shape_[i]); strides.push_back(strides_[i]); }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::squeeze(const Shape& dims) const {
  std::vector<bool> drop(dim(), false);
  for (int64_t d : dims) {
    d = wrap_dim(d, dim(), "squeeze");
    if (dim() > 0 && shape_[d] == 1) drop[d] = true;
  }
  Shape shape, strides;
  for (int64_t i = 0; i < dim(); ++i)
    if (!drop[i]) { shape.push_back(shape_[i]); strides.push_back(strides_[i]); }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1, "unsqueeze");
  Shape shape = shape_, strides = strides_;
  int64_t st = d < dim() ? shape_[d] * strides_[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  start_dim = wrap_dim(start_dim, dim(), "flatten");
  end_dim = wrap_dim(end_dim, dim(), "flatten");
  TT_CHECK_VALUE(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  Shape shape(shape_.begin(), shape_.begin() + start_dim);
  int64_t n = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) n *= shape_[i];
  shape.push_back(n);
  shape.insert(shape.end(), shape_.begin() + end_dim + 1, shape_.end());
  return reshape(shape);
}

Tensor Tensor::unfold(int64_t d, int64_t size, int64_t step) const {
  d = wrap_dim(d, dim(), "unfold");
  int64_t n = dim() == 0 ? 1 : shape_[d];
  TT_CHECK(size <= n, "unfold: maximum size for tensor at dimension ", d, " is ", n, " but size is ", size);
  TT_CHECK(step > 0, "unfold: step is ", step, " but must be > 0");
  Shape shape = shape_, strides = strides_;
  if (dim() > 0) {
    shape[d] = (n - size) / step + 1;
    strides[d] *= step;
  }
  shape.push_back(size);
  strides.push_back(dim() == 0 ? 1 : strides_[d]);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

// As PyTorch's view(dtype): another element size rescales the last dim (which must be
// contiguous) and every other stride and the offset, which must divide evenly.
Tensor Tensor::view_dtype(DType to) const {
  const int64_t from_size = static_cast<int64_t>(itemsize()), to_size = static_cast<int64_t>(tt::itemsize(to));
  if (from_size == to_size) return Tensor(storage_, shape_, strides_, offset_, to);
  const std::string what = str_cat(" to view ", dtype_name(dtype_), " as ", dtype_name(to), " (different element sizes)");
  TT_CHECK(dim() > 0, "self.dim() cannot be 0", what);
  TT_CHECK(strides_.back() == 1, "self.stride(-1) must be 1", what);
  Shape shape = shape_, strides = strides_;
  int64_t offset = offset_;
  if (from_size > to_size) {
    const int64_t r = from_size / to_size;
    shape.back() *= r;
    for (int64_t i = 0; i + 1 < dim(); ++i) strides[i] *= r;
    offset *= r;
  } else {
    const int64_t r = to_size / from_size;
    TT_CHECK(shape.back() % r == 0, "self.size(-1) must be divisible by ", r, what, ", but got ", shape.back());
    shape.back() /= r;
    for (int64_t i = 0; i + 1 < dim(); ++i) {
      TT_CHECK(strides[i] % r == 0, "self.stride(", i, ") must be divisible by ", r, what, ", but got ", strides[i]);
      strides[i] /= r;
    }
    TT_CHECK(offset % r == 0, "self.storage_offset() must be divisible by ", r, what, ", but got ", offset);
    offset /= r;
  }
  return Tensor(storage_, shape, strides, offset, to);
}

Tensor Tensor::view_as_real() const {
  TT_CHECK(is_complex(dtype_), "view_as_real is only supported for complex tensors (got ", describe(), ")");
  const int64_t r = 2;  // a complex element is two reals: every stride and the offset double
  Shape shape = shape_, strides = strides_;
  for (auto& s : strides) s *= r;
  shape.push_back(2);
  strides.push_back(1);
  return Tensor(storage_, shape, strides, offset_ * r, dtype_ == DType::Complex64 ? DType::Float32 : DType::Float64);
}

Tensor Tensor::view_as_complex() const {
  TT_CHECK(dtype_ == DType::Float32 || dtype_ == DType::Float64, "view_as_complex is only supported for float and "
           "double tensors, but got a tensor of scalar type: ", dtype_name(dtype_), " (", describe(), ")");
  TT_CHECK(dim() > 0, "Input tensor must have one or more dimensions (view_as_complex of ", describe(), ")");
  TT_CHECK(shape_.back() == 2, "Tensor must have a last dimension of size 2 (view_as_complex of ", describe(), ")");
  TT_CHECK(strides_.back() == 1, "Tensor must have a last dimension with stride 1 (view_as_complex of ", describe(), ")");
  Shape shape(shape_.begin(), shape_.end() - 1), strides(strides_.begin(), strides_.end() - 1);
  for (size_t i = 0; i < strides.size(); ++i)
    TT_CHECK(strides[i] % 2 == 0, "Tensor must have a stride divisible by 2 for all but last dimension "
             "(view_as_complex of ", describe(), ")");
  for (auto& s : strides) s /= 2;
  TT_CHECK(offset_ % 2 == 0, "Tensor must have a storage_offset divisible by 2 (view_as_complex of ", describe(), ")");
  return Tensor(storage_, shape, strides, offset_ / 2, dtype_ == DType::Float32 ? DType::Complex64 : DType::Complex128);
}

Tensor Tensor::diagonal(int64_t off, int64_t d0, int64_t d1) const {
  d0 = wrap_dim(d0, dim(), "diagonal");
  d1 = wrap_dim(d1, dim(), "diagonal");
  TT_CHECK(d0 != d1, "diagonal dimensions cannot be identical ", d0, ", ", d1);
  int64_t len, start = offset_;
  if (off >= 0) {
    len = std::max<int64_t>(std::min(shape_[d0], shape_[d1] - off), 0);
    start += off * strides_[d1];
  } else {
    len = std::max<int64_t>(std::min(shape_[d0] + off, shape_[d1]), 0);
    start -= off * strides_[d0];
  }
  if (len == 0) start = offset_;
  Shape shape, strides;
  for (int64_t i = 0; i < dim(); ++i)
    if (i != d0 && i != d1) { shape.push_back(shape_[i]); strides.push_back(strides_[i]); }
  shape.push_back(len);
  strides.push_back(strides_[d0] + strides_[d1]);
  return Tensor(storage_, shape, strides, start, dtype_);
}

// ---------------------------------------------------------------- copies

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, dtype_, device());
  copy_kernel[device()](*this, out);
  return out;
}

Tensor Tensor::to(DType dtype, bool copy) const {
  if (dtype == dtype_ && !copy) return *this;
  Tensor out = empty(shape_, dtype, device());
  copy_kernel[device()](*this, out);
  return out;
}

Tensor Tensor::to(Device dev, bool copy, bool non_blocking) const {
  if (dev == device() && !copy) return *this;
  Tensor out = empty(shape_, dtype_, dev);
  out.copy_(*this, non_blocking);
  return out;
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  TT_CHECK(shape_numel(broadcast_shapes(src.shape(), shape_, "copy_")) == numel_, "copy_: source ", src.describe(),
           " does not broadcast to destination ", describe());
  if (src.device().is_meta() && !device().is_meta()) src.throw_no_data();
  if (device().is_meta()) {
    // nothing to write: a meta destination has no storage
  } else if (src.device() == device()) {
    copy_kernel[device()](src, *this);
  } else {
    Device other = src.device().is_cpu() ? device() : src.device();
    copy_across_devices_kernel[other](src, *this, non_blocking);
  }
  bump_version();
  return *this;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TT_CHECK(x == y || x == 1 || y == 1, op, ": The size of tensor a (", x, ") must match the size of tensor b (", y,
             ") at non-singleton dimension ", i, " (shapes ", shape_str(a), " and ", shape_str(b), ")");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

void Tensor::throw_no_data() const {
  throw NotImplementedError(str_cat("Cannot copy out of meta tensor; no data! (", describe(), ": a meta tensor has a "
                                    "shape and a dtype but no storage: make real ones on another device with "
                                    "Module.to_empty(device=...) or empty_like(t, device=...))"));
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  TT_CHECK(a.device() == b.device(), op, ": Expected all tensors to be on the same device, but found at least two "
           "devices, ", a.device().str(), " and ", b.device().str(), "! (", a.describe(), ", ", b.describe(), ")");
}

}  // namespace tt
