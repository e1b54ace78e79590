// Joining/shape ops and factories. cat/stack/flip/roll/repeat/eye are expressed as views plus
// the copy/fill kernels, so every backend gets them for free; tril/triu/arange/linspace call
// the kernels of tinytorch/kernels/shape.h.
#include "tinytorch/ops/shape.h"
#include <algorithm>
#include <cmath>
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/index.h"

namespace tt {

TT_DEFINE_KERNEL(triu_tril)
TT_DEFINE_KERNEL(arange)
TT_DEFINE_KERNEL(linspace)

namespace {
bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }  // skipped by cat, as in PyTorch
}  // namespace

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  TT_CHECK_VALUE(!ts.empty(), "cat(): expected a non-empty list of Tensors");
  size_t ref = 0;
  while (ref < ts.size() && legacy_empty(ts[ref])) ++ref;
  if (ref == ts.size()) ref = 0;
  const Tensor& r = ts[ref];
  TT_CHECK(r.dim() > 0, "cat(): zero-dimensional tensor (at position ", ref, ") cannot be concatenated");
  dim = wrap_dim(dim, r.dim(), "cat");
  DType dtype = ts[0].dtype();
  Shape shape = r.shape();
  shape[dim] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    check_same_device("cat", r, t);
    dtype = promote_types(dtype, t.dtype());
    if (legacy_empty(t) && r.dim() != 1) continue;
    TT_CHECK(t.dim() == r.dim(), "cat(): Tensors must have same number of dimensions: got ", r.dim(), " and ",
             t.dim(), " (tensor at position ", i, ", ", t.describe(), ")");
    for (int64_t d = 0; d < r.dim(); ++d)
      TT_CHECK(d == dim || t.shape()[d] == r.shape()[d], "cat(): Sizes of tensors must match except in dimension ",
               dim, ". Expected size ", r.shape()[d], " but got size ", t.shape()[d], " for tensor number ", i,
               " in the list (", t.describe(), ").");
    shape[dim] += t.shape()[dim];
  }
  Tensor out = Tensor::empty(shape, dtype, r.device());
  int64_t off = 0;
  for (const Tensor& t : ts) {
    if (legacy_empty(t) && r.dim() != 1) continue;
    int64_t n = t.shape()[dim];
    if (n > 0) copy_kernel[out.device()](t, out.narrow(dim, off, n));
    off += n;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  TT_CHECK_VALUE(!ts.empty(), "stack expects a non-empty TensorList");
  dim = wrap_dim(dim, ts[0].dim() + 1, "stack");
  std::vector<Tensor> us;
  for (size_t i = 0; i < ts.size(); ++i) {
    TT_CHECK(ts[i].shape() == ts[0].shape(), "stack expects each tensor to be equal size, but got ",
             shape_str(ts[0].shape()), " at entry 0 and ", shape_str(ts[i].shape()), " at entry ", i);
    us.push_back(ts[i].unsqueeze(dim));
  }
  return cat(us, dim);
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  Shape strides = x.strides();
  int64_t offset = x.offset();
  std::vector<bool> seen(std::max<int64_t>(x.dim(), 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, x.dim(), "flip");
    TT_CHECK(!seen[w], "flip: dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (x.dim() == 0 || x.shape()[w] == 0) continue;
    // A negative-stride view walking dim w backwards; the copy kernels take signed strides.
    offset += (x.shape()[w] - 1) * strides[w];
    strides[w] = -strides[w];
  }
  Tensor rev(x.storage(), x.shape(), strides, offset, x.dtype());
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  copy_kernel[x.device()](rev, out);
  return out;
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  if (dims.empty()) {
    TT_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align. shifts: ", shifts.size(), ", dims: 0");
    return roll(x.flatten(), shifts, {0}).view(x.shape());
  }
  TT_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align. shifts: ", shifts.size(),
           ", dims: ", dims.size());
  Tensor cur = x;
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t d = wrap_dim(dims[k], x.dim(), "roll");
    int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[k] % n) + n) % n;
    if (s == 0) continue;
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    copy_kernel[x.device()](cur.narrow(d, n - s, s), out.narrow(d, 0, s));
    copy_kernel[x.device()](cur.narrow(d, 0, n - s), out.narrow(d, s, n - s));
    cur = out;
  }
  return cur.is_same(x) ? x.clone() : cur;
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& reps) {
  TT_CHECK(static_cast<int64_t>(reps.size()) >= x.dim(), "repeat: Number of dimensions of repeat dims (",
           reps.size(), ") can not be smaller than number of dimensions of tensor (", x.dim(), ")");
  for (int64_t r : reps) TT_CHECK(r >= 0, "repeat: Trying to create tensor with negative dimension ", r);
  size_t k = reps.size(), lead = k - x.dim();
  Shape padded(k), ones_shape, expanded, out_shape(k);
  for (size_t i = 0; i < k; ++i) {
    padded[i] = i < lead ? 1 : x.shape()[i - lead];
    ones_shape.insert(ones_shape.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {reps[i], padded[i]});
    out_shape[i] = reps[i] * padded[i];
  }
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  // (s0, s1, ...) viewed as (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...) = out's memory order
  copy_kernel[x.device()](x.reshape(ones_shape).expand(expanded), out.view(expanded));
  return out;
}

static Tensor tri(const Tensor& x, int64_t k, bool upper, const char* op) {
  TT_CHECK(x.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got ", x.describe());
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  triu_tril_kernel[x.device()](x.contiguous(), k, upper, out);
  return out;
}
Tensor tril(const Tensor& x, int64_t diagonal) { return tri(x, diagonal, false, "tril"); }
Tensor triu(const Tensor& x, int64_t diagonal) { return tri(x, diagonal, true, "triu"); }

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  TT_CHECK(indices.dtype() == DType::Int64, "one_hot is only applicable to index tensor of type int64, got ",
           dtype_name(indices.dtype()));
  Tensor h = indices.to(Device()).contiguous();  // range checks read the values on the host
  const int64_t* p = h.data<int64_t>();
  int64_t lo = 0, hi = -1;
  if (h.numel() > 0) {
    lo = *std::min_element(p, p + h.numel());
    hi = *std::max_element(p, p + h.numel());
  }
  if (num_classes < 0) {
    TT_CHECK(h.numel() > 0, "one_hot: Can not infer total number of classes from empty tensor.");
    num_classes = hi + 1;
  }
  TT_CHECK(lo >= 0, "one_hot: Class values must be non-negative, got ", lo);
  TT_CHECK(hi < num_classes, "one_hot: Class values must be smaller than num_classes (", num_classes, "), got ", hi);
  Shape shape = indices.shape();
  shape.push_back(num_classes);
  Tensor out = full(shape, 0, DType::Int64, indices.device());
  if (out.numel() > 0) scatter_(out, -1, indices.unsqueeze(-1), 1.0);
  return out;
}

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  TT_CHECK(step != 0, "arange: step must be nonzero");
  TT_CHECK(std::isfinite(start) && std::isfinite(end), "arange: unsupported range: ", start, " -> ", end);
  TT_CHECK((step > 0 && end >= start) || (step < 0 && end <= start),
           "arange: upper bound and larger bound inconsistent with step sign (start ", start, ", end ", end,
           ", step ", step, ")");
  double n = std::ceil((end - start) / step);
  TT_CHECK(n < 9.2e18, "arange: result too large: ", n, " elements");
  Tensor out = Tensor::empty({static_cast<int64_t>(n)}, dtype, device);
  RangeArgs args;
  args.start = start;
  args.step = step;
  arange_kernel[device](out, args);
  return out;
}

Tensor arange(int64_t start, int64_t end, int64_t step, DType dtype, Device device) {
  TT_CHECK(step != 0, "arange: step must be nonzero");
  TT_CHECK((step > 0 && end >= start) || (step < 0 && end <= start),
           "arange: upper bound and larger bound inconsistent with step sign (start ", start, ", end ", end,
           ", step ", step, ")");
  // exact ceil((end - start) / step) in integers (the range may exceed 2^53)
  __int128 span = static_cast<__int128>(end) - start;
  __int128 n = (span + step + (step > 0 ? -1 : 1)) / step;
  Tensor out = Tensor::empty({static_cast<int64_t>(n)}, dtype, device);
  RangeArgs args;
  args.start = static_cast<double>(start);
  args.step = static_cast<double>(step);
  args.istart = start;
  args.istep = step;
  args.integral = true;
  arange_kernel[device](out, args);
  return out;
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  TT_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  Tensor out = Tensor::empty({steps}, dtype, device);
  linspace_kernel[device](out, start, end);
  return out;
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (m < 0) m = n;
  TT_CHECK(n >= 0, "eye: n must be greater or equal to 0, got ", n);
  Tensor out = full({n, m}, 0, dtype, device);
  fill_kernel[device](out.diagonal(), 1);
  return out;
}

}  // namespace tt
