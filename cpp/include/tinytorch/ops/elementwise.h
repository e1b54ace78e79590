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
Tensor& fill_(Tensor& x, double value);
Tensor full(const Shape& shape, double value, DType dtype, Device device = Device());
// A Python number as a 0-dim CPU tensor marked as a wrapped number.
Tensor scalar_tensor(double value, DType dtype);

}  // namespace tt
