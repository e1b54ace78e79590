// Indexing and sorting ops: validation, bool-mask -> nonzero conversion, broadcasting of index
// tensors and result-shape rules; the kernels (cpp/src/cpu/index.cpp, index_sort.cpp) only compute.
#include "tinytorch/ops/index.h"
#include "tinytorch/ops/reduce.h"
#include <algorithm>
#include "tinytorch/ops/elementwise.h"

namespace tt {

TT_DEFINE_KERNEL(index_offsets)
TT_DEFINE_KERNEL(index)
TT_DEFINE_KERNEL(index_put)
TT_DEFINE_KERNEL(gather)
TT_DEFINE_KERNEL(scatter)
TT_DEFINE_KERNEL(masked_fill)
TT_DEFINE_KERNEL(count_nonzero)
TT_DEFINE_KERNEL(nonzero)
TT_DEFINE_KERNEL(sort)
TT_DEFINE_KERNEL(topk)

namespace {

// A view of `x`'s memory with an arbitrary (shape, strides): unlike as_strided, it allows
// stride-0 dims of any size and skips the capacity check (callers stay inside x).
Tensor restride(const Tensor& x, const Shape& shape, const Shape& strides) {
  return Tensor(x.storage(), shape, strides, x.offset(), x.dtype());
}

void check_index_dtype(const char* op, const Tensor& index) {
  TT_CHECK(index.dtype() == DType::Int64, op, "(): Expected dtype int64 for index, but got ", dtype_name(index.dtype()));
}

// The iteration plan shared by index() and index_put_().
struct IndexPlan {
  Shape shape;    // result shape
  Tensor src;     // x restrided to `shape` (indexed dims stride 0)
  Tensor offsets; // int64 element offsets, expanded to `shape`
  bool trivial = false;  // no advanced index at all
};

IndexPlan make_index_plan(const Tensor& x, const std::vector<OptTensor>& indices_in, const char* op) {
  // 1. Masks -> int64 index tensors (one per mask dim); int32 -> int64.
  std::vector<OptTensor> idx;
  int64_t cur = 0;
  for (size_t i = 0; i < indices_in.size(); ++i) {
    const OptTensor& t = indices_in[i];
    if (!t || !t->defined()) {
      idx.emplace_back(std::nullopt);
      ++cur;
      continue;
    }
    DType d = t->dtype();
    if (d == DType::Bool || d == DType::UInt8) {
      TT_CHECK_INDEX(t->dim() > 0, op, ": 0-dim boolean indices are not supported");
      TT_CHECK_INDEX(cur + t->dim() <= x.dim(), op, ": too many indices for tensor of dimension ", x.dim());
      for (int64_t j = 0; j < t->dim(); ++j)
        TT_CHECK_INDEX(t->shape()[j] == x.shape()[cur + j], op, ": The shape of the mask ", shape_str(t->shape()),
                       " at index ", j, " does not match the shape of the indexed tensor ", shape_str(x.shape()),
                       " at index ", cur + j);
      Tensor nz = nonzero(*t);  // (n, mask.dim())
      for (int64_t j = 0; j < t->dim(); ++j) idx.emplace_back(nz.select(1, j));
      cur += t->dim();
    } else {
      TT_CHECK_TYPE(d == DType::Int64 || d == DType::Int32, op,
                    ": tensors used as indices must be long, int, byte or bool tensors, got ", dtype_name(d));
      idx.emplace_back(t->to(DType::Int64));
      ++cur;
    }
  }
  TT_CHECK_INDEX(static_cast<int64_t>(idx.size()) <= x.dim(), op, ": too many indices for tensor of dimension ",
                 x.dim(), " (got ", idx.size(), ")");
  idx.resize(x.dim());

  // 2. Broadcast the index tensors together; find where the indexed dims go.
  IndexPlan plan;
  Shape bshape;
  bool any = false;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!idx[d]) continue;
    if (!any) bshape = idx[d]->shape();
    else {
      Shape a = bshape, b = idx[d]->shape();
      size_t n = std::max(a.size(), b.size());
      bool ok = true;
      for (size_t k = 0; k < n && ok; ++k) {
        int64_t u = k < n - a.size() ? 1 : a[k - (n - a.size())], v = k < n - b.size() ? 1 : b[k - (n - b.size())];
        ok = u == v || u == 1 || v == 1;
      }
      TT_CHECK_INDEX(ok, op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ",
                     shape_str(a), ", ", shape_str(b));
      bshape = broadcast_shapes(a, b, op);
    }
    any = true;
    dims.push_back(d);
  }
  if (!any) {
    plan.trivial = true;
    plan.shape = x.shape();
    return plan;
  }
  bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  int64_t pos = adjacent ? dims.front() : 0;  // where the broadcast dims sit in the result

  // 3. Offsets (B) = sum_k wrap(index_k) * stride_k, bounds-checked in the kernel.
  std::vector<Tensor> ids;
  std::vector<int64_t> sizes, strides;
  for (int64_t d : dims) {
    ids.push_back(idx[d]->to(x.device()).expand(bshape).contiguous());
    sizes.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  Tensor offsets = Tensor::empty(bshape, DType::Int64, x.device());
  index_offsets_kernel[x.device()](ids, dims, sizes, strides, offsets);

  // 4. Result shape: the non-indexed dims of x with B inserted at pos.
  Shape rest, rest_strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!idx[d]) { rest.push_back(x.shape()[d]); rest_strides.push_back(x.strides()[d]); }
  Shape shape(rest.begin(), rest.begin() + pos), src_strides(rest_strides.begin(), rest_strides.begin() + pos),
      off_strides(pos, 0);
  Shape bstrides = contiguous_strides(bshape);
  for (size_t k = 0; k < bshape.size(); ++k) {
    shape.push_back(bshape[k]);
    src_strides.push_back(0);
    off_strides.push_back(bstrides[k]);
  }
  for (size_t k = pos; k < rest.size(); ++k) {
    shape.push_back(rest[k]);
    src_strides.push_back(rest_strides[k]);
    off_strides.push_back(0);
  }
  plan.shape = shape;
  plan.src = restride(x, shape, src_strides);
  plan.offsets = restride(offsets, shape, off_strides);
  return plan;
}

}  // namespace

// nonzero's result is sized by the data, which a meta tensor does not have.
void meta_count_nonzero(const Tensor& x, int64_t&) {
  throw NotImplementedError(str_cat("nonzero: the result's size depends on the values, which a meta tensor (",
                                    x.describe(), ") does not have"));
}
TT_REGISTER_KERNEL(count_nonzero, Meta, meta_count_nonzero)

Tensor nonzero(const Tensor& x) {
  Tensor c = x.contiguous();
  int64_t n = 0;
  count_nonzero_kernel[x.device()](c, n);
  Tensor out = Tensor::empty({n, x.dim()}, DType::Int64, x.device());
  nonzero_kernel[x.device()](c, out);
  return out;
}

Tensor index(const Tensor& x, const std::vector<OptTensor>& indices) {
  IndexPlan plan = make_index_plan(x, indices, "index");
  if (plan.trivial) return x.alias();
  Tensor out = Tensor::empty(plan.shape, x.dtype(), x.device());
  index_kernel[x.device()](plan.src, plan.offsets, out);
  return out;
}

Tensor& index_put_(Tensor& x, const std::vector<OptTensor>& indices, const Tensor& values, bool accumulate) {
  check_same_device("index_put_", x, values);
  IndexPlan plan = make_index_plan(x, indices, "index_put_");
  Shape b = values.shape();
  bool ok = b.size() <= plan.shape.size();
  for (size_t k = 0; ok && k < b.size(); ++k) {
    int64_t have = b[b.size() - 1 - k], want = plan.shape[plan.shape.size() - 1 - k];
    ok = have == want || have == 1;
  }
  TT_CHECK(ok, "index_put_: shape mismatch: value tensor of shape ", shape_str(values.shape()),
           " cannot be broadcast to indexing result of shape ", shape_str(plan.shape));
  Tensor v = values.to(x.dtype()).expand(plan.shape);
  if (plan.trivial) {
    if (accumulate) binary_(BinaryOp::Add, x, v, OpScalars{1.0, 0.0});  // a = alpha
    else x.copy_(v);
    return x;
  }
  index_put_kernel[x.device()](plan.src, plan.offsets, v, accumulate);
  x.bump_version();
  return x;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index_t) {
  TT_CHECK_INDEX(index_t.dim() <= 1, "index_select(): Index is supposed to be a vector, got ",
                 shape_str(index_t.shape()));
  TT_CHECK(index_t.dtype() == DType::Int64 || index_t.dtype() == DType::Int32,
           "index_select(): Expected dtype int32/int64 for index, but got ", dtype_name(index_t.dtype()));
  dim = wrap_dim(dim, x.dim(), "index_select");
  TT_CHECK_INDEX(x.dim() > 0 || index_t.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ",
                 index_t.numel(), " value(s)");
  // index() wraps negative indices (x[idx] does); index_select rejects them, as PyTorch. On CPU
  // only: a CUDA check would sync (the kernel's device assert catches indices >= size there).
  if (index_t.numel() > 0 && index_t.device().is_cpu()) {
    const int64_t lo = *amin(index_t).to(DType::Int64).data<int64_t>();
    TT_CHECK_INDEX(lo >= 0, "index_select(): index ", lo, " is out of bounds for dimension ", dim, " with size ",
                   x.dim() == 0 ? 1 : x.size(dim), " (index out of range in self)");
  }
  Tensor xx = x.dim() == 0 ? x.reshape({1}) : x;
  std::vector<OptTensor> idx(dim, std::nullopt);
  idx.emplace_back(index_t.reshape({-1}));
  Tensor out = index(xx, idx);
  return x.dim() == 0 ? out.reshape({}) : out;   // a scalar stays a scalar, as PyTorch
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index_t) {
  check_index_dtype("gather", index_t);
  check_same_device("gather", x, index_t);
  dim = wrap_dim(dim, x.dim(), "gather");
  TT_CHECK(std::max<int64_t>(x.dim(), 1) == std::max<int64_t>(index_t.dim(), 1),
           "gather(): Index tensor must have the same number of dimensions as input tensor (index ",
           shape_str(index_t.shape()), ", input ", shape_str(x.shape()), ")");
  Tensor xx = x.dim() == 0 ? x.reshape({1}) : x, ii = index_t.dim() == 0 ? index_t.reshape({1}) : index_t;
  for (int64_t d = 0; d < xx.dim(); ++d)
    TT_CHECK(d == dim || ii.shape()[d] <= xx.shape()[d], "gather(): Size does not match at dimension ", d,
             " expected index ", shape_str(index_t.shape()), " to be smaller than self ", shape_str(x.shape()),
             " apart from dimension ", dim);
  Tensor out = Tensor::empty(ii.shape(), x.dtype(), x.device());
  gather_kernel[x.device()](xx, dim, ii, out);
  return index_t.dim() == 0 ? out.reshape({}) : out;
}

static Tensor& scatter_impl(Tensor& self, int64_t dim, const Tensor& index_t, const Tensor& src, bool add,
                            const char* op) {
  check_index_dtype(op, index_t);
  check_same_device(op, self, index_t);
  check_same_device(op, self, src);
  dim = wrap_dim(dim, self.dim(), op);
  int64_t nd = std::max<int64_t>(self.dim(), 1);
  TT_CHECK(nd == std::max<int64_t>(index_t.dim(), 1) && nd == std::max<int64_t>(src.dim(), 1), op,
           "(): Index tensor must have the same number of dimensions as self tensor and src tensor (self ",
           shape_str(self.shape()), ", index ", shape_str(index_t.shape()), ", src ", shape_str(src.shape()), ")");
  Tensor s = self.dim() == 0 ? self.reshape({1}) : self;
  Tensor ii = index_t.dim() == 0 ? index_t.reshape({1}) : index_t;
  Tensor v = (src.dim() == 0 ? src.reshape({1}) : src).to(self.dtype());
  for (int64_t d = 0; d < nd; ++d) {
    TT_CHECK(d == dim || ii.shape()[d] <= s.shape()[d], op, "(): Expected index ", shape_str(index_t.shape()),
             " to be smaller than self ", shape_str(self.shape()), " apart from dimension ", dim);
    TT_CHECK(ii.shape()[d] <= v.shape()[d], op, "(): Expected index ", shape_str(index_t.shape()),
             " to be smaller than src ", shape_str(src.shape()));
  }
  scatter_kernel[self.device()](s, dim, ii, v, add);
  self.bump_version();
  return self;
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index_t, const Tensor& src) {
  return scatter_impl(self, dim, index_t, src, false, "scatter_");
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index_t, double value) {
  Tensor v = full({}, value, self.dtype(), self.device()).expand(index_t.shape());
  return scatter_impl(self, dim, index_t, v, false, "scatter_");
}
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index_t, const Tensor& src) {
  return scatter_impl(self, dim, index_t, src, true, "scatter_add_");
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index_t, const Tensor& src) {
  Tensor out = self.clone();
  return scatter_impl(out, dim, index_t, src, false, "scatter");
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index_t, double value) {
  Tensor out = self.clone();
  return scatter_(out, dim, index_t, value);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index_t, const Tensor& src) {
  Tensor out = self.clone();
  return scatter_impl(out, dim, index_t, src, true, "scatter_add");
}

Tensor& masked_fill_(Tensor& x, const Tensor& mask, double value) {
  TT_CHECK(mask.dtype() == DType::Bool, "masked_fill_: only supports boolean masks, but got mask with dtype ",
           dtype_name(mask.dtype()));
  check_same_device("masked_fill_", x, mask);
  Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_fill_");
  TT_CHECK(shape == x.shape(), "masked_fill_: mask of shape ", shape_str(mask.shape()),
           " doesn't broadcast to the self shape ", shape_str(x.shape()));
  check_scalar_fits(value, x.dtype());
  masked_fill_kernel[x.device()](x, mask, value);
  x.bump_version();
  return x;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  TT_CHECK(mask.dtype() == DType::Bool, "masked_fill: only supports boolean masks, but got mask with dtype ",
           dtype_name(mask.dtype()));
  Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  Tensor out = x.expand(shape).clone();
  return masked_fill_(out, mask, value);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  TT_CHECK(mask.dtype() == DType::Bool, "masked_select: expected BoolTensor for mask, but got ",
           dtype_name(mask.dtype()));
  check_same_device("masked_select", x, mask);
  Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  if (shape.empty()) return index(x.reshape({1}), {mask.reshape({1})});
  return index(x.expand(shape), {mask.expand(shape)});
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool /*stable: always stable*/) {
  dim = wrap_dim(dim, x.dim(), "sort");
  if (x.dim() == 0) return {x.clone(), full({}, 0, DType::Int64, x.device())};
  Tensor xt = x.transpose(dim, -1).contiguous();
  Tensor values = Tensor::empty(xt.shape(), x.dtype(), x.device());
  Tensor indices = Tensor::empty(xt.shape(), DType::Int64, x.device());
  sort_kernel[x.device()](xt, descending, values, indices);
  return {values.transpose(dim, -1).contiguous(), indices.transpose(dim, -1).contiguous()};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  return sort(x, dim, descending, stable).second;
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted: always*/) {
  TT_CHECK(x.dtype() != DType::Bool, "topk: does not support bool input (", x.describe(), ")");
  dim = wrap_dim(dim, x.dim(), "topk");
  int64_t n = x.dim() == 0 ? 1 : x.shape()[dim];
  TT_CHECK(k >= 0 && k <= n, "topk: selected index k out of range (k = ", k, ", dimension ", dim, " has size ", n, ")");
  if (x.dim() == 0) return {x.clone(), full({}, 0, DType::Int64, x.device())};
  Tensor xt = x.transpose(dim, -1).contiguous();
  Shape shape = xt.shape();
  shape.back() = k;
  Tensor values = Tensor::empty(shape, x.dtype(), x.device());
  Tensor indices = Tensor::empty(shape, DType::Int64, x.device());
  topk_kernel[x.device()](xt, k, largest, values, indices);
  return {values.transpose(dim, -1).contiguous(), indices.transpose(dim, -1).contiguous()};
}

}  // namespace tt
