#pragma once
// Device-independent elementwise ops: check arguments, promote dtypes, broadcast,
// allocate, then call the kernel for the operands' device.
#include <optional>
#include "tinytorch/kernels/elementwise.h"

namespace tt {

// torch.result_type over tensors (wrapped numbers and 0-dim tensors rank below dim tensors).
DType result_type(std::initializer_list<const Tensor*> operands);
bool can_cast(DType from, DType to);

Tensor unary(UnaryOp op, const Tensor& x, OpScalars s = {});
Tensor& unary_(UnaryOp op, Tensor& x, OpScalars s = {});
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, OpScalars s = {});
void binary_out(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out, OpScalars s = {});
Tensor& binary_(BinaryOp op, Tensor& self, const Tensor& other, OpScalars s = {});
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi);  // lo or hi may be undefined
// RuntimeError when a fill value can't be stored in dtype (PyTorch's checked scalar conversion:
// NaN/inf or out of range for integers, finite overflow for 16/32-bit floats; integral values in
// [-255, 255] wrap into uint8, as a negative Python int does there).
void check_scalar_fits(double value, DType dtype);
// fill_, full and masked_fill(_) check the value with check_scalar_fits.
Tensor& fill_(Tensor& x, double value);
Tensor full(const Shape& shape, double value, DType dtype, Device device = Device());
// A Python number as a 0-dim CPU tensor marked as a wrapped number.
Tensor scalar_tensor(double value, DType dtype);

}  // namespace tt
