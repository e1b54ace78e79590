// matmul / mm / bmm / linear / addmm: shape checks and batch bookkeeping; all arithmetic is
// the gemm kernel. Strided operands go to BLAS as (possibly transposed) views, no copies.
#include "tinytorch/ops/linalg.h"
#include <algorithm>
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/ops/reduce.h"

namespace tt {

TT_DEFINE_KERNEL(gemm)

BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
  // Row-major: unit column stride, rows at least `cols` apart (size-1 dims have free strides).
  if ((cols <= 1 || sc == 1) && (rows <= 1 || sr >= std::max<int64_t>(1, cols)))
    return {true, false, rows <= 1 ? std::max<int64_t>(1, cols) : sr};
  // Column-major (a transposed row-major matrix).
  if ((rows <= 1 || sr == 1) && (cols <= 1 || sc >= std::max<int64_t>(1, rows)))
    return {true, true, cols <= 1 ? std::max<int64_t>(1, rows) : sc};
  return {};
}

namespace {

std::string mat_str(const Shape& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  TT_CHECK(a.defined() && b.defined(), op, ": undefined tensor argument");
  check_same_device(op, a, b);
  TT_CHECK(a.dtype() == b.dtype(), op, ": expected m1 and m2 to have the same dtype, but got: ",
           dtype_name(a.dtype()), " != ", dtype_name(b.dtype()));
  if (a.dtype() == DType::Bool) throw_unsupported_dtype(op, a.dtype());
}

// A 2-D (rows, cols) operand as BLAS sees it; `t` is replaced by a contiguous copy if needed.
BlasLayout operand_layout(Tensor& t) {
  int64_t d = t.dim();
  BlasLayout l = blas_layout(t.size(d - 2), t.size(d - 1), t.stride(d - 2), t.stride(d - 1));
  if (l.ok) return l;
  t = t.contiguous();
  return blas_layout(t.size(d - 2), t.size(d - 1), t.stride(d - 2), t.stride(d - 1));
}

// out (n, p) = alpha * a (n, m) @ b (m, p) + beta * out; out contiguous rows.
void mm_into(Tensor a, Tensor b, const Tensor& out, double beta, double alpha, const Tensor& bias = Tensor()) {
  BlasLayout la = operand_layout(a), lb = operand_layout(b);
  GemmArgs g;
  g.a = a, g.b = b, g.c = out;
  g.trans_a = la.trans, g.trans_b = lb.trans;
  g.m = a.size(0), g.n = b.size(1), g.k = a.size(1);
  g.lda = la.ld, g.ldb = lb.ld, g.ldc = std::max<int64_t>(1, out.stride(0));
  g.alpha = alpha, g.beta = beta;
  g.bias = bias;
  gemm_kernel[out.device()](g);
}

// Collapses (j, ..., n, m) leading dims into one (J*n, m) view when strides allow it.
bool fold_leading(const Tensor& a, Tensor& folded) {
  int64_t d = a.dim();
  int64_t rows = 1;
  for (int64_t i = 0; i < d - 1; ++i) rows *= a.size(i);
  for (int64_t i = 0; i + 2 < d; ++i)
    if (a.size(i) != 1 && a.stride(i) != a.stride(i + 1) * a.size(i + 1)) return false;
  folded = a.as_strided({rows, a.size(d - 1)}, {a.stride(d - 2), a.stride(d - 1)});
  return true;
}

// out (batch..., n, p) = a (batch_a..., n, m) @ b (batch_b..., m, p), batch dims broadcast.
void batched_into(Tensor a, Tensor b, const Shape& batch, const Tensor& out) {
  if (out.numel() == 0) return;
  int64_t n = a.size(a.dim() - 2), m = a.size(a.dim() - 1), p = b.size(b.dim() - 1);
  if (m == 0) return fill_kernel[out.device()](out, 0.0);
  BlasLayout la = operand_layout(a), lb = operand_layout(b);
  Shape sa = batch, sb = batch;
  sa.push_back(n), sa.push_back(m), sb.push_back(m), sb.push_back(p);
  Tensor ae = a.expand(sa), be = b.expand(sb);
  // Batch dims as (size, stride_a, stride_b, stride_c), size-1 dims dropped, mergeable
  // neighbours merged; the largest group becomes the kernel's batch, the rest are looped here.
  struct Dim { int64_t size, sa, sb, sc; };
  std::vector<Dim> dims;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] == 1) continue;
    Dim d{batch[i], ae.stride(i), be.stride(i), out.stride(i)};
    if (!dims.empty()) {
      Dim& o = dims.back();
      if (o.sa == d.sa * d.size && o.sb == d.sb * d.size && o.sc == d.sc * d.size) {
        o = Dim{o.size * d.size, d.sa, d.sb, d.sc};
        continue;
      }
    }
    dims.push_back(d);
  }
  if (dims.empty()) dims.push_back(Dim{1, 0, 0, 0});
  size_t kb = 0;
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i].size > dims[kb].size) kb = i;
  Dim inner = dims[kb];
  dims.erase(dims.begin() + static_cast<int64_t>(kb));
  int64_t outer = 1;
  for (auto& d : dims) outer *= d.size;
  GemmArgs g;
  g.trans_a = la.trans, g.trans_b = lb.trans;
  g.m = n, g.n = p, g.k = m, g.lda = la.ld, g.ldb = lb.ld, g.ldc = std::max<int64_t>(1, p);
  g.batch = inner.size, g.stride_a = inner.sa, g.stride_b = inner.sb, g.stride_c = inner.sc;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rem = o, oa = 0, ob = 0, oc = 0;
    for (size_t i = dims.size(); i-- > 0;) {
      int64_t idx = rem % dims[i].size;
      rem /= dims[i].size;
      oa += idx * dims[i].sa, ob += idx * dims[i].sb, oc += idx * dims[i].sc;
    }
    g.a = ae.as_strided({}, {}, ae.offset() + oa);
    g.b = be.as_strided({}, {}, be.offset() + ob);
    g.c = out.as_strided({}, {}, out.offset() + oc);
    gemm_kernel[out.device()](g);
  }
}

void check_inner(const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  TT_CHECK(ka == kb, op, ": mat1 and mat2 shapes cannot be multiplied (", mat_str(a.shape()), " and ",
           mat_str(b.shape()), ")");
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_pair("mm", a, b);
  TT_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected 2-D tensors, got ", a.describe(), " and ", b.describe());
  check_inner("mm", a, b, a.size(1), b.size(0));
  Tensor out = Tensor::empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  if (out.numel() > 0) mm_into(a, b, out, 0.0, 1.0);  // k == 0 gives zeros
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_pair("bmm", a, b);
  TT_CHECK(a.dim() == 3 && b.dim() == 3, "bmm: expected 3-D tensors, got ", a.describe(), " and ", b.describe());
  TT_CHECK(a.size(0) == b.size(0), "bmm: batch sizes differ: ", a.describe(), " and ", b.describe());
  check_inner("bmm", a, b, a.size(2), b.size(1));
  Tensor out = Tensor::empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  batched_into(a, b, {a.size(0)}, out);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_pair("matmul", a, b);
  int64_t da = a.dim(), db = b.dim();
  TT_CHECK(da >= 1 && db >= 1, "matmul: both arguments to matmul need to be at least 1D, but they are ", da,
           "D and ", db, "D");
  if (da == 1 && db == 1) {
    TT_CHECK(a.size(0) == b.size(0), "matmul: inconsistent tensor size, expected tensor ", shape_str(a.shape()),
             " and src ", shape_str(b.shape()), " to have the same number of elements, but got ", a.size(0), " and ",
             b.size(0), " elements respectively");
    return mm(a.unsqueeze(0), b.unsqueeze(1)).view({});
  }
  if (da <= 2 && db <= 2) {
    Tensor a2 = da == 1 ? a.unsqueeze(0) : a, b2 = db == 1 ? b.unsqueeze(1) : b;
    check_inner("matmul", a2, b2, a2.size(1), b2.size(0));
    Tensor out = mm(a2, b2);
    if (da == 1) return out.squeeze({0});
    if (db == 1) return out.squeeze({1});
    return out;
  }
  Tensor a1 = da == 1 ? a.unsqueeze(0) : a, b1 = db == 1 ? b.unsqueeze(1) : b;
  int64_t n = a1.size(a1.dim() - 2), m = a1.size(a1.dim() - 1), p = b1.size(b1.dim() - 1);
  check_inner("matmul", a1, b1, m, b1.size(b1.dim() - 2));
  Shape out_shape;
  // (..., n, m) @ (m, p): one tall GEMM when a's leading dims fold into rows.
  Tensor folded;
  if (db <= 2 && fold_leading(a1, folded)) {
    out_shape.assign(a1.shape().begin(), a1.shape().end() - 1);
    out_shape.push_back(p);
    Tensor out = mm(folded, b1).view(out_shape);
    return db == 1 ? out.squeeze({out.dim() - 1}) : out;
  }
  Shape ba(a1.shape().begin(), a1.shape().end() - 2), bb(b1.shape().begin(), b1.shape().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul");
  out_shape = batch;
  out_shape.push_back(n), out_shape.push_back(p);
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  batched_into(a1, b1, batch, out);
  if (da == 1) return out.squeeze({out.dim() - 2});
  if (db == 1) return out.squeeze({out.dim() - 1});
  return out;
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
  check_pair("linear", x, w);
  TT_CHECK(w.dim() == 2, "linear: weight must be 2-D (out_features, in_features), got ", w.describe());
  TT_CHECK(x.dim() >= 1, "linear: input must be at least 1-D, got ", x.describe());
  int64_t in = x.size(x.dim() - 1), out_f = w.size(0);
  Tensor x2;
  if (x.dim() == 1) x2 = x.unsqueeze(0);
  else if (!fold_leading(x, x2)) x2 = x.contiguous().reshape({-1, in});
  TT_CHECK(in == w.size(1), "linear: mat1 and mat2 shapes cannot be multiplied (", mat_str(x2.shape()), " and ",
           w.size(1), "x", out_f, ")");
  Tensor out = Tensor::empty({x2.size(0), out_f}, x.dtype(), x.device());
  Tensor full_bias;  // (out_f,): the GEMM adds it (cuBLASLt's epilogue on CUDA)
  double beta = 0.0;
  if (bias.defined()) {
    check_pair("linear", x, bias);
    TT_CHECK(bias.dim() <= 1 && (bias.numel() == out_f || bias.numel() == 1), "linear: bias ", bias.describe(),
             " does not match out_features ", out_f);
    if (bias.numel() == out_f && in > 0) {
      full_bias = bias.reshape({out_f}).contiguous();
    } else {
      out.copy_(bias);  // broadcast copy; the GEMM then accumulates onto it (beta = 1)
      beta = 1.0;
    }
  }
  if (out.numel() > 0) {
    mm_into(x2, w.transpose(0, 1), out, beta, 1.0, full_bias);
  }
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  shape.push_back(out_f);
  return out.view(shape);
}

std::tuple<Tensor, Tensor, Tensor> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w,
                                                   std::array<bool, 3> needs) {
  Tensor gx, gw, gb;
  if (needs[0]) gx = matmul(g, w);
  if (!needs[1] && !needs[2]) return {gx, gw, gb};
  // batch dims flattened: g (N, out), x (N, in); N spelled out, as -1 is ambiguous when out == 0
  int64_t N = 1;
  for (int64_t d = 0; d + 1 < g.dim(); ++d) N *= g.size(d);
  Tensor g2 = g.dim() == 2 ? g : g.reshape({N, w.size(0)});
  if (needs[1]) gw = mm(g2.transpose(0, 1), x.dim() == 2 ? x : x.reshape({N, w.size(1)}));
  if (needs[2]) gb = sum(g2, Shape{0});
  return {gx, gw, gb};
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta, double alpha) {
  check_pair("addmm", m1, m2);
  check_pair("addmm", input, m1);
  TT_CHECK(m1.dim() == 2 && m2.dim() == 2, "addmm: expected 2-D matrices, got ", m1.describe(), " and ",
           m2.describe());
  check_inner("addmm", m1, m2, m1.size(1), m2.size(0));
  Shape shape{m1.size(0), m2.size(1)};
  TT_CHECK(broadcast_shapes(input.shape(), shape, "addmm") == shape, "addmm: input ", input.describe(),
           " does not broadcast to ", shape_str(shape));
  Tensor out = Tensor::empty(shape, m1.dtype(), m1.device());
  if (beta != 0) out.copy_(input);  // beta == 0 ignores input (NaNs included), as PyTorch
  if (out.numel() > 0) mm_into(m1, m2, out, beta, alpha);  // k == 0: the kernel just scales by beta
  return out;
}

}  // namespace tt
