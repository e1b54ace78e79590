#include "tinytorch/ops/elementwise.h"
#include <algorithm>
#include <cmath>
#include "tinytorch/ops/reduce.h"

namespace tt {

#define TT_NAME_ENTRY(Name, name, cls) #name,
const char* op_name(UnaryOp op) {
  static const char* names[] = {TT_UNARY_OPS(TT_NAME_ENTRY)};
  return names[static_cast<int>(op)];
}
const char* op_name(BinaryOp op) {
  static const char* names[] = {TT_BINARY_OPS(TT_NAME_ENTRY)};
  return names[static_cast<int>(op)];
}
#undef TT_NAME_ENTRY


namespace {

bool floating_kind(DType d) { return is_floating(d) || is_float8(d); }

// The complex type of a floating one's precision (PyTorch's toComplexType; no complex32 here).
DType to_complex(DType d) { return d == DType::Float64 ? DType::Complex128 : DType::Complex64; }

// PyTorch's combine_categories: a lower-priority operand only matters if it is of a
// higher category (e.g. int tensor + float scalar -> float, float64 tensor * 1j -> complex128).
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_complex(*higher)) return higher;
  if (is_complex(*lower)) return floating_kind(*higher) ? to_complex(*higher) : *lower;
  if (floating_kind(*higher)) return higher;
  if (*higher == DType::Bool || floating_kind(*lower)) return promote_types(*higher, *lower);
  return higher;
}

DType unary_compute_dtype(UnaryOp op, const Tensor& x, OpScalars s) {
  DType d = x.dtype();
  if (is_storage_only(d)) throw_unsupported_dtype(op_name(op), d);
  if (is_predicate(op) || is_floating(d)) return d;
  if (op == UnaryOp::PowScalar && s.a == static_cast<double>(static_cast<int64_t>(s.a))) {
    TT_CHECK(s.a >= 0, "Integers to negative integer powers are not allowed.");
    return d;
  }
  TT_CHECK_AS(NotImplementedError, op_class(op) != UnaryClass::FloatOnly, "\"", op_name(op),
              "\" not implemented for '", dtype_name(d), "' (", x.describe(), "): it takes floating-point inputs");
  if (op_class(op) == UnaryClass::Integral) {
    TT_CHECK_TYPE(d != DType::Bool, op_name(op), ": not supported on a bool tensor (",
                  x.describe(), "); use logical_not or convert the dtype first");
    return d;
  }
  return DType::Float32;
}

// Inputs on another device are allowed only as 0-dim CPU tensors (scalars), as in PyTorch.
void check_devices(const char* op, Device device, const Tensor& t) {
  TT_CHECK(t.device() == device || (t.dim() == 0 && t.device().is_cpu()), op,
           ": Expected all tensors to be on the same device, but found at least two devices, ", device.str(), " and ",
           t.device().str(), "! (operand ", t.describe(), ")");
}

// The device of the first operand that is not a 0-dim CPU scalar (those may mix in).
Device common_device(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->defined() && !(t->dim() == 0 && t->device().is_cpu())) return t->device();
  return Device();
}

// Moves the operands of a binary op to `device`, except that on CUDA one 0-dim CPU operand
// (a Python number) stays on the host: the CUDA kernel reads its value there and captures it,
// which saves a synchronous host-to-device copy per op. Other backends get both on `device`.
void to_binary_device(Tensor& x, Tensor& y, Device device) {
  const bool keep_y = device.is_cuda() && y.dim() == 0 && y.device().is_cpu();
  const bool keep_x = device.is_cuda() && x.dim() == 0 && x.device().is_cpu() && !keep_y;
  if (x.device() != device && !keep_x) x = x.to(device);
  if (y.device() != device && !keep_y) y = y.to(device);
}

// An operand of an op computed on `device` in `dtype`. A 0-dim CPU operand (a Python scalar) of a
// GPU op is filled on the device by a kernel instead of copied from the host: no blocking copy,
// and a CUDA graph can capture it. Integers beyond 2^53 (not exact in a double) are copied.
Tensor operand_on(const Tensor& t, DType dtype, Device device) {
  if (device.is_cuda() && t.dim() == 0 && t.device().is_cpu()) {
    double v = 0;
    bool exact = true;
    if (is_floating(dtype) || dtype == DType::Bool) {
      v = *t.to(DType::Float64).data<double>();
    } else {
      const int64_t i = *t.to(DType::Int64).data<int64_t>();
      exact = i >= -(int64_t(1) << 53) && i <= (int64_t(1) << 53);
      v = static_cast<double>(i);
    }
    if (exact) {
      Tensor out = Tensor::empty({}, dtype, device);
      fill_kernel[device](out, dtype == DType::Bool ? double(v != 0) : v);
      return out;
    }
  }
  return t.to(dtype).to(device);
}

}  // namespace

DType result_type(std::initializer_list<const Tensor*> operands) {
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const Tensor* t : operands) {
    if (!t || !t->defined()) continue;
    DType d = t->dtype();
    if (t->is_wrapped_number()) {
      if (is_floating(d)) d = DType::Float32;  // the default dtype
      else if (is_complex(d)) d = DType::Complex64;
      else if (d != DType::Bool) d = DType::Int64;
      wrapped_result = wrapped_result ? promote_types(*wrapped_result, d) : d;
    } else if (t->dim() == 0) {
      zero_result = zero_result ? promote_types(*zero_result, d) : d;
    } else {
      dim_result = dim_result ? promote_types(*dim_result, d) : d;
    }
  }
  auto r = combine(dim_result, combine(zero_result, wrapped_result));
  return r.value_or(DType::Float32);
}

bool can_cast(DType from, DType to) {
  if (floating_kind(from) && !floating_kind(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

Tensor unary(UnaryOp op, const Tensor& x, OpScalars s) {
  DType compute = unary_compute_dtype(op, x, s);
  Tensor in = x.to(compute);
  Tensor out = Tensor::empty(x.shape(), is_predicate(op) ? DType::Bool : compute, x.device());
  unary_kernel[x.device()](op, in, out, s);
  return out;
}

Tensor& unary_(UnaryOp op, Tensor& x, OpScalars s) {
  if (is_predicate(op)) {  // a bool result casts to every dtype: written as 0/1 (logical_not_), as PyTorch
    return x.copy_(unary(op, x, s));
  }
  DType compute = unary_compute_dtype(op, x, s);
  TT_CHECK(compute == x.dtype(), op_name(op), "_: result type ", dtype_name(compute),
           " can't be cast to the desired output type ", dtype_name(x.dtype()));
  unary_kernel[x.device()](op, x, x, s);
  x.bump_version();
  return x;
}

// Checks PyTorch makes before an integer kernel runs. Integer //, % and div(rounding_mode='floor')
// by zero raise RuntimeError("ZeroDivisionError") on the CPU; PyTorch does not check on CUDA (it
// would cost a device sync per op), and neither do we. An integer tensor to a negative Python-int
// power raises instead of wrapping the exponent.
static void check_integer_args(BinaryOp op, DType compute, const Tensor& b, const Tensor& y, int64_t numel) {
  if (is_floating(compute) || numel == 0) return;
  if ((op == BinaryOp::Remainder || op == BinaryOp::FloorDivide) && compute != DType::Bool && y.device().is_cpu()) {
    Tensor nonzero = all(y).to(Device());
    TT_CHECK(*nonzero.data<bool>(), "ZeroDivisionError");
  } else if (op == BinaryOp::Pow && b.is_wrapped_number()) {
    TT_CHECK(*b.to(DType::Float64).data<double>() >= 0, "Integers to negative integer powers are not allowed.");
  }
}

static DType binary_compute_dtype(BinaryOp op, const Tensor& a, const Tensor& b) {
  TT_CHECK(op != BinaryOp::Sub || (a.dtype() != DType::Bool && b.dtype() != DType::Bool),
           "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead. (", a.describe(), " - ", b.describe(), ")");
  DType d = result_type({&a, &b});
  if (is_storage_only(d)) throw_unsupported_dtype(op_name(op), d);
  const BinaryClass c = op_class(op);
  if ((c == BinaryClass::TrueDivide || c == BinaryClass::Floating) && !is_floating(d)) return DType::Float32;
  return d;
}

void binary_out(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out, OpScalars s) {
  const char* name = op_name(op);
  check_devices(name, out.device(), a);
  check_devices(name, out.device(), b);
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  TT_CHECK(shape == out.shape(), name, ": output with shape ", shape_str(out.shape()),
           " doesn't match the broadcast shape ", shape_str(shape));
  DType compute = binary_compute_dtype(op, a, b);
  DType result = is_comparison(op) ? DType::Bool : compute;
  TT_CHECK(can_cast(result, out.dtype()), name, ": result type ", dtype_name(result),
           " can't be cast to the desired output type ", dtype_name(out.dtype()));
  Tensor x = a.to(compute), y = b.to(compute);
  to_binary_device(x, y, out.device());
  check_integer_args(op, compute, b, y, out.numel());
  if (out.dtype() == result) {
    binary_kernel[out.device()](op, x, y, out, s);
  } else {
    Tensor tmp = Tensor::empty(shape, result, out.device());
    binary_kernel[out.device()](op, x, y, tmp, s);
    copy_kernel[out.device()](tmp, out);
  }
  out.bump_version();
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, OpScalars s) {
  const char* name = op_name(op);
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Device device = common_device({&a, &b});
  check_devices(name, device, a);
  check_devices(name, device, b);
  DType compute = binary_compute_dtype(op, a, b);
  Tensor x = a.to(compute), y = b.to(compute);
  to_binary_device(x, y, device);
  check_integer_args(op, compute, b, y, shape_numel(shape));
  Tensor out = Tensor::empty(shape, is_comparison(op) ? DType::Bool : compute, device);
  binary_kernel[device](op, x, y, out, s);
  return out;
}

Tensor& binary_(BinaryOp op, Tensor& self, const Tensor& other, OpScalars s) {
  Shape shape = broadcast_shapes(self.shape(), other.shape(), op_name(op));
  TT_CHECK(shape == self.shape(), op_name(op), "_: output with shape ", shape_str(self.shape()),
           " doesn't match the broadcast shape ", shape_str(shape));
  binary_out(op, self, other, self, s);
  return self;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  TT_CHECK_TYPE(cond.dtype() == DType::Bool, "where: expected condition to be a boolean tensor, but got a tensor with dtype ",
                dtype_name(cond.dtype()));
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Device device = common_device({&cond, &a, &b});
  for (const Tensor* t : {&cond, &a, &b}) check_devices("where", device, *t);
  DType compute = result_type({&a, &b});
  Tensor x = operand_on(a, compute, device), y = operand_on(b, compute, device), c = cond.to(device);
  Tensor out = Tensor::empty(shape, compute, device);
  where_kernel[device](c, x, y, out);
  return out;
}

Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  TT_CHECK(lo.defined() || hi.defined(), "clamp: At least one of 'min' or 'max' must not be None");
  DType compute = result_type({&x, &lo, &hi});
  Shape shape = x.shape();
  if (lo.defined()) shape = broadcast_shapes(shape, lo.shape(), "clamp");
  if (hi.defined()) shape = broadcast_shapes(shape, hi.shape(), "clamp");
  Device device = x.device();
  Tensor l, h;
  if (lo.defined()) { check_devices("clamp", device, lo); l = operand_on(lo, compute, device); }
  if (hi.defined()) { check_devices("clamp", device, hi); h = operand_on(hi, compute, device); }
  Tensor out = Tensor::empty(shape, compute, device);
  clamp_tensor_kernel[device](x.to(compute), l, h, out);
  return out;
}

void check_scalar_fits(double v, DType d) {
  bool ok = true;
  const bool integral = std::isfinite(v) && v == std::trunc(v);
  switch (d) {
    case DType::Bool: case DType::Float64: break;
    case DType::UInt8: ok = integral ? (v >= -255 && v <= 255) : (v >= 0 && v <= 255); break;
    case DType::Int8: ok = v >= -128.0 && v <= 127.0; break;
    case DType::Int16: ok = v >= -32768.0 && v <= 32767.0; break;
    case DType::UInt16: ok = integral ? (v >= -65535.0 && v <= 65535.0) : (v >= 0 && v <= 65535.0); break;
    case DType::UInt32: ok = integral ? (v >= -4294967295.0 && v <= 4294967295.0) : (v >= 0 && v <= 4294967295.0); break;
    case DType::UInt64: ok = v > -18446744073709551616.0 && v < 18446744073709551616.0; break;
    case DType::Int32: ok = v >= -2147483648.0 && v <= 2147483647.0; break;
    case DType::Int64: ok = v >= -9223372036854775808.0 && v < 9223372036854775808.0; break;
    case DType::Float16: ok = !std::isfinite(v) || std::abs(v) <= 65504.0; break;
    case DType::BFloat16: ok = !std::isfinite(v) || std::abs(v) <= 3.3895313892515355e38; break;
    case DType::Float32: ok = !std::isfinite(v) || std::abs(v) <= 3.4028234663852886e38; break;
  }
  TT_CHECK(ok, "value cannot be converted to type ", dtype_name(d), " without overflow");
}

Tensor& fill_(Tensor& x, double value) {
  check_scalar_fits(value, x.dtype());
  fill_kernel[x.device()](x, value);
  x.bump_version();
  return x;
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  check_scalar_fits(value, dtype);
  Tensor t = Tensor::empty(shape, dtype, device);
  fill_kernel[device](t, value);
  return t;
}

Tensor scalar_tensor(double value, DType dtype) {  // unchecked: x + 1e300 is inf, not an error
  Tensor t = Tensor::empty({}, dtype, Device());
  fill_kernel[t.device()](t, value);
  t.set_wrapped_number(true);
  return t;
}

}  // namespace tt
