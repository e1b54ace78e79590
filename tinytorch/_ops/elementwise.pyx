# cython: language_level=3
"""Elementwise ops and their derivatives (micrograd style: each forward next to its backward).

Gradients of broadcast inputs are reduced to the input's shape by the engine."""
import math

from tinytorch import _C
from tinytorch._core.dtype import DTYPES, is_floating_code
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._core.graph cimport Node, make_node, init_node, should_record, set_history, save_tensors, \
    is_grad_enabled_c
from tinytorch._ops._common cimport operand, as_tensor_like, fused_result, check_inplace, rebase_inplace, \
    is_complex_operand, complex_op


# ------------------------------------------------------------------ unary

cdef class UnaryNode(Node):
    """Node of a unary op: which op and its scalar parameters (C fields, no attribute dict)."""
    cdef public str op
    cdef public double a, b


cdef Tensor _unary(str name, Tensor x, double a=0.0, double b=0.0):
    cdef Tensor out
    try:
        out = wrap(getattr(_C, name)(x._impl, a, b))
    except NotImplementedError:
        if is_complex_operand(x):
            return complex_op(name, (x, a, b))
        raise
    spec = _UNARY_GRAD.get(name)
    if spec is None or not should_record((x,)):
        return out
    cdef UnaryNode n = <UnaryNode>init_node(UnaryNode.__new__(UnaryNode), spec[0], _unary_backward, (x,))
    n.op, n.a, n.b = name, a, b
    reads_input, reads_result = spec[2]
    save_tensors(n, (x if reads_input else None, out if reads_result else None))
    set_history(out, n, 0)
    return out


def _unary_backward(UnaryNode n, g):
    x, y = n.saved_tensors
    return (_UNARY_GRAD[n.op][1](n, g, x, y),)


def _fused(str kernel, g, t, double a=0.0, double b=0.0):
    return fused_result(kernel, getattr(_C, kernel)((<Tensor>g)._impl, (<Tensor>t)._impl, a, b), (g, t))


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


# Pieces of the schema's formulas (codegen/ops.py) too long for one expression.
def _d_gelu(x):              # Phi(x) + x phi(x)
    return (_unary("erf", x * _SQRT_HALF) + 1.0) * 0.5 + x * _unary("exp", x * x * -0.5) * _INV_SQRT_2PI


def _d_gelu_tanh(x):         # t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
    t = _unary("tanh", (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI)
    return (t + 1.0) * 0.5 + x * (1.0 - t * t) * (x * x * (3 * 0.044715) + 1.0) * (0.5 * _SQRT_2_OVER_PI)


def _d_silu(x):
    s = _unary("sigmoid", x)
    return s * (x * (1.0 - s) + 1.0)


def _d_mish(x):
    t = _unary("tanh", _unary("softplus", x, 1.0, 20.0))
    return t + x * (1.0 - t * t) * _unary("sigmoid", x)


def _d_softplus(g, x, beta, threshold):   # linear above the threshold
    # the threshold test in float32 for 16-bit types, as the kernel's (x * beta rounds otherwise)
    xo = x.float() if x.dtype.itemsize == 2 else x
    return where(xo * beta > threshold, g, g * _unary("sigmoid", x * beta))


def _d_hardswish(g, x):      # piecewise: select g (a tensor) so the result keeps g's dtype
    return where(x <= -3.0, g * 0.0, where(x < 3.0, g * (x / 3.0 + 0.5), g))


def _d_pow_scalar(g, x, exponent):
    if exponent == 0.0:
        return g * 0.0
    return g * exponent * _unary("pow_scalar", x, exponent - 1.0)


def _d_pow_input(g, a, b):
    # 0 where the exponent is 0 (as PyTorch; b * a**(b-1) would be 0 * inf = nan at a == 0)
    if isinstance(b, Tensor):
        return where(b == 0, 0.0, g * b * pow(a, b - 1.0))
    return g * b * pow(a, b - 1.0)


def _d_pow_exponent(g, a, b, y):
    # d/db a**b = a**b log a, defined as 0 where a == 0 and b >= 0 (as PyTorch)
    at_zero = (a == 0).logical_and(b >= 0) if isinstance(b, Tensor) else (a == 0)
    return where(at_zero, 0.0, g * y * _unary("log", a))


def _max_weight(a, b):
    """maximum's share of the gradient for a (ties split evenly, as PyTorch)."""
    return (a > b) + (a == b) * 0.5


def gelu(Tensor input, approximate="none"):
    """Gaussian Error Linear Unit; ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _unary("gelu" if approximate == "none" else "gelu_tanh", input)


def clamp(Tensor input, min=None, max=None):
    """Clamps all elements in input into the range [min, max] (either bound may be a tensor).

    Args:
        input (Tensor): the input tensor.
        min (Number or Tensor, optional): lower-bound of the range to be clamped to. Default: ``None``
        max (Number or Tensor, optional): upper-bound of the range to be clamped to. Default: ``None``"""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    code = _clamp_result_code(input, min, max)
    if code != input._impl.dtype_code:     # an integral tensor, a float bound: the result is float
        input = input.to(dtype=code)
    if min is None:
        return _unary("clamp_max", input, max)
    if max is None:
        return _unary("clamp_min", input, min)
    return _unary("clamp", input, min, max)


cdef object _clamp_result_code(Tensor x, lo, hi):
    """The result type of clamp with Python-number bounds: x's dtype promoted with the bounds
    (an int64 tensor clamped to [-2.5, 3.5] is float32), as PyTorch."""
    cdef object code = x._impl.dtype_code, c
    for bound in (lo, hi):
        if bound is not None:
            c = _C.result_type(x._impl, operand(bound))
            if c != x._impl.dtype_code and (code == x._impl.dtype_code or is_floating_code(c)):
                code = c
    return code


def _clamp_tensor(Tensor x, lo, hi):
    lo_t = None if lo is None else as_tensor_like(lo, x)
    hi_t = None if hi is None else as_tensor_like(hi, x)
    cdef Tensor out = wrap(_C.clamp(x._impl, None if lo_t is None else lo_t._impl, None if hi_t is None else hi_t._impl))
    cdef Node n = make_node("ClampBackward0", _clamp_tensor_backward, (x, lo_t, hi_t))
    if n is not None:
        save_tensors(n, (x, lo_t, hi_t))
        set_history(out, n, 0)
    return out


def _clamp_tensor_backward(Node n, g):
    # PyTorch's clamp_backward_min_max: comparisons with a NaN (x or bound) are false, so a NaN
    # position passes no gradient; with min > max the result is max, and so is the gradient
    x, lo, hi = n.saved_tensors
    if lo is not None and hi is not None:
        return (where((x >= lo).logical_and(x <= hi), g, 0.0),
                where((x < lo).logical_and(lo < hi), g, 0.0),
                where((x > hi).logical_or(hi < lo), g, 0.0))
    if lo is not None:
        return (where(x >= lo, g, 0.0), where(x < lo, g, 0.0), None)
    return (where(x <= hi, g, 0.0), None, where(x > hi, g, 0.0))


def pow(input, exponent):
    """Takes the power of each element in input with exponent and returns a tensor with the result.

    Args:
        input (Tensor or Number): the base value(s).
        exponent (Tensor or Number): the exponent value(s)."""
    a, b = input, exponent
    if not isinstance(a, Tensor):
        if isinstance(b, Tensor) and isinstance(a, (int, float)) and not isinstance(a, bool):
            return _unary("rpow_scalar", <Tensor>b, float(a))
        return _binary("pow", a, b)
    if not isinstance(b, Tensor) and isinstance(b, (int, float)) and not isinstance(b, bool):
        x = <Tensor>a
        if x.dtype.is_floating_point or (isinstance(b, int) and b >= 0):
            return _unary("pow_scalar", x, float(b))
    return _binary("pow", a, b)


# ------------------------------------------------------------------ binary

cdef class BinaryNode(Node):
    """Node of a binary op: which op, its alpha, and the value of a Python-number operand."""
    cdef public str op
    cdef public double alpha
    cdef public object a_val, b_val


cdef Tensor _binary(str name, a, b, double s0=1.0, double s1=0.0):
    cdef Tensor out
    try:
        out = wrap(getattr(_C, name)(operand(a), operand(b), s0, s1))
    except NotImplementedError:
        if is_complex_operand(a) or is_complex_operand(b):
            return complex_op(name, (a, b, s0))
        raise
    spec = _BINARY_GRAD.get(name)
    if spec is None:
        return out
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    cdef tuple inputs = (ta, tb)
    if not should_record(inputs):
        return out
    cdef BinaryNode n = <BinaryNode>init_node(BinaryNode.__new__(BinaryNode), spec[0], _binary_backward, inputs)
    n.op, n.alpha = name, s0
    if ta is None:   # a Python number: the formula needs its value
        n.a_val = a
    if tb is None:
        n.b_val = b
    # save only what the needed gradients read, as PyTorch: fewer false "modified by an inplace
    # operation" errors (x * 2 then an in-place op on x is fine)
    reads = spec[2]
    saves = (reads[0] if n.needs_input_grad[0] else "") + (reads[1] if n.needs_input_grad[1] else "")
    if saves:
        save_tensors(n, (ta if "i" in saves else None, tb if "o" in saves else None, out if "r" in saves else None))
    set_history(out, n, 0)
    return out


def _binary_backward(BinaryNode n, g):
    a, b, y = n.saved_tensors if n._saved else (None, None, None)
    if a is None:
        a = n.a_val
    if b is None:
        b = n.b_val
    return _BINARY_GRAD[n.op][1](n, g, a, b, y)


def rsub(input, other, *, alpha=1):
    """other - alpha * input.

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to subtract from :attr:`input`.

    Keyword args:
        alpha (Number): the multiplier for :attr:`other`. Default: ``1``"""
    return _binary("sub", other, input, alpha)


def div(input, other, *, rounding_mode=None):
    """Divides each element of input by other; rounding_mode None (true division), 'trunc' or 'floor'.

    Args:
        input (Tensor): the dividend.
        other (Tensor or Number): the divisor.

    Keyword args:
        rounding_mode (str, optional): type of rounding applied to the result: ``None`` (true division),
            ``'trunc'`` (rounds towards zero) or ``'floor'`` (rounds down). Default: ``None``"""
    a, b = input, other
    if rounding_mode is None:
        return _binary("div", a, b)
    if rounding_mode not in ("floor", "trunc"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    if is_floating_code(_C.result_type(operand(a), operand(b))):
        impl = _C.floor_divide(operand(a), operand(b), 1.0, 0.0) if rounding_mode == "floor" else \
            _C.trunc(_C.div(operand(a), operand(b), 1.0, 0.0), 0.0, 0.0)
        return _rounded_div_result(impl, a, b)
    if rounding_mode == "floor":
        return _binary("floor_divide", a, b)
    # integers truncated: exactly, from floor division (which raises ZeroDivisionError, as PyTorch's
    # trunc division does); the floor of a negative inexact quotient is one below the trunc
    q = _binary("floor_divide", a, b)
    return where((_binary("remainder", a, b) != 0).logical_and(q < 0), q + 1, q)


def _rounded_div_back(Node n, g):
    # a rounded quotient is piecewise constant: PyTorch's derivative is zero for both inputs
    zero = wrap(_C.full(list((<Tensor>g)._impl.shape), 0.0, (<Tensor>g)._impl.dtype_code, (<Tensor>g)._impl.device))
    return (zero if n.needs_input_grad[0] else None, zero if n.needs_input_grad[1] else None)


cdef Tensor _rounded_div_result(impl, a, b):
    """div(a, b, rounding_mode=...) of floating operands: the output requires grad as PyTorch's
    (DivBackward2), with zero gradients."""
    cdef Tensor out = wrap(impl)
    cdef Node n = make_node("DivBackward2", _rounded_div_back,
                            (a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None))
    if n is not None:
        set_history(out, n, 0)
    return out


def where(Tensor condition, input, other):
    """Return a tensor of elements selected from either input or other, depending on condition.

    Args:
        condition (BoolTensor): when True (nonzero), yield input, otherwise yield other.
        input (Tensor or Scalar): value (if :attr:`input` is a scalar) or values selected at indices
            where :attr:`condition` is ``True``.
        other (Tensor or Scalar): value (if :attr:`other` is a scalar) or values selected at indices
            where :attr:`condition` is ``False``."""
    a, b = input, other
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    cdef Tensor out = wrap(_C.where(condition._impl, operand(a), operand(b)))
    cdef Node n = make_node("WhereBackward0", _where_backward, (ta, tb))
    if n is not None:
        save_tensors(n, (condition,))
        set_history(out, n, 0)
    return out


def _where_backward(Node n, g):
    c, = n.saved_tensors
    return (where(c, g, 0.0) if n.needs_input_grad[0] else None,
            where(c, 0.0, g) if n.needs_input_grad[1] else None)


# ------------------------------------------------------------------ in place

def _inplace(str name, Tensor self, other, double s0=1.0, double s1=0.0):
    check_inplace(self, name + "_")
    if is_grad_enabled_c() and (requires_grad(self) or (isinstance(other, Tensor) and requires_grad(<Tensor>other))):
        if name in _BINARY_GRAD:
            return rebase_inplace(self, _binary(name, self, other, s0, s1))
    try:
        getattr(_C, name + "_")(self._impl, operand(other), s0, s1)
    except NotImplementedError:
        if is_complex_operand(self) or is_complex_operand(other):
            return complex_op(name + "_", (self, other, s0))
        raise
    return self


def _inplace_unary(str name, Tensor self, double a=0.0, double b=0.0):
    check_inplace(self, name + "_")
    if is_grad_enabled_c() and requires_grad(self):
        return rebase_inplace(self, _unary(name, self, a, b))
    try:
        getattr(_C, name + "_")(self._impl, a, b)
    except NotImplementedError:
        if is_complex_operand(self):
            return complex_op(name + "_", (self, a, b))
        raise
    return self


def div_(Tensor self, other, *, rounding_mode=None):
    """In-place version of :meth:`~Tensor.div`.

    Args:
        other (Tensor or Number): the divisor.

    Keyword args:
        rounding_mode (str, optional): type of rounding applied to the result: ``None`` (true division),
            ``'trunc'`` (rounds towards zero) or ``'floor'`` (rounds down). Default: ``None``"""
    if rounding_mode is not None:
        check_inplace(self, "div_")
        return rebase_inplace(self, div(self, other, rounding_mode=rounding_mode))
    return _inplace("div", self, other)


def pow_(Tensor self, exponent):
    """In-place version of :meth:`~Tensor.pow`.

    Args:
        exponent (Tensor or Number): the exponent value(s)."""
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool):
        return _inplace_unary("pow_scalar", self, float(exponent))
    return _inplace("pow", self, exponent)


def clamp_(Tensor self, min=None, max=None):
    """In-place version of :meth:`~Tensor.clamp`.

    Args:
        min (Number or Tensor, optional): lower-bound of the range to be clamped to. Default: ``None``
        max (Number or Tensor, optional): upper-bound of the range to be clamped to. Default: ``None``"""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        check_inplace(self, "clamp_")
        return rebase_inplace(self, clamp(self, min, max))
    if min is None and max is None:
        raise RuntimeError("clamp_: At least one of 'min' or 'max' must not be None")
    code = _clamp_result_code(self, min, max)
    if code != self._impl.dtype_code:
        raise RuntimeError(f"clamp_: result type {DTYPES[code].name} can't be cast to the desired output type "
                           f"{self.dtype.name}")
    if min is None:
        return _inplace_unary("clamp_max", self, max)
    if max is None:
        return _inplace_unary("clamp_min", self, min)
    return _inplace_unary("clamp", self, min, max)


def clamp_min_(Tensor self, min):
    """In-place version of :meth:`~Tensor.clamp_min`.

    Args:
        min (Number or Tensor): lower-bound of the range to be clamped to."""
    return clamp_(self, min=min)


def clamp_max_(Tensor self, max):
    """In-place version of :meth:`~Tensor.clamp_max`.

    Args:
        max (Number or Tensor): upper-bound of the range to be clamped to."""
    return clamp_(self, max=max)


# ------------------------------------------------------------------ Tensor-method forms

def _where_method(self, condition, other):
    """``self.where(condition, y)`` is equivalent to ``tinytorch.where(condition, self, y)``.

    Args:
        condition (BoolTensor): when True (nonzero), yield input, otherwise yield other.
        other (Tensor or Scalar): value (if :attr:`other` is a scalar) or values selected at indices
            where :attr:`condition` is ``False``."""
    return where(condition, self, other)


def clamp_min(Tensor input, min):
    """Clamps all elements in ``input`` to be at least ``min``.

    Args:
        input (Tensor): the input tensor.
        min (Number or Tensor): lower-bound of the range to be clamped to."""
    return clamp(input, min=min)


def clamp_max(Tensor input, max):
    """Clamps all elements in ``input`` to be at most ``max``.

    Args:
        input (Tensor): the input tensor.
        max (Number or Tensor): upper-bound of the range to be clamped to."""
    return clamp(input, max=max)


# ------------------------------------------------------------------ fill_ / copy_

def _copy_backward(Node n, g):
    # self's old value is overwritten (zero gradient); src receives g, reduced to its shape
    return (None, g)


def copy_(Tensor self, Tensor src, non_blocking=False):
    """Copies the elements from src into self (broadcasting, casting) and returns self.

    Args:
        src (Tensor): the source tensor to copy from.
        non_blocking (bool, optional): if ``True`` and the copy is between CPU and GPU, the copy may
            occur asynchronously with respect to the host. Default: ``False``"""
    check_inplace(self, "copy_")
    base = self._base
    if base is not None and is_grad_enabled_c() and (requires_grad(src) or requires_grad(<Tensor>base)):
        value = src.to(self)                    # self's dtype and device, differentiably
        if tuple(value._impl.shape) != tuple(self._impl.shape):
            value = value.expand(*self._impl.shape)
        return rebase_inplace(self, value)      # through a view: CopySlices
    cdef Node n = make_node("CopyBackwards", _copy_backward, (None, src))
    self._impl.copy_(src._impl, non_blocking)
    if n is not None:
        set_history(self, n, 0)
    return self


def fill_(Tensor self, value):
    """Fills self tensor with the specified value.

    Args:
        value (Number): the value to fill with."""
    check_inplace(self, "fill_")
    if isinstance(value, Tensor):
        value = (<Tensor>value).item()
    base = self._base
    if base is not None and is_grad_enabled_c() and requires_grad(<Tensor>base):   # through a view: CopySlices
        return rebase_inplace(self, wrap(_C.full(list(self._impl.shape), float(value), self._impl.dtype_code,
                                                 self._impl.device)))
    cdef Node n = make_node("FillBackward0", _fill_backward, (self,)) if self._grad_fn is not None else None
    _C.fill_(self._impl, float(value))
    if n is not None:
        set_history(self, n, 0)   # the old history no longer reaches these values: zero gradient
    return self


def _fill_backward(Node n, g):
    return (None,)


def zero_(Tensor self):
    """Fills self tensor with zeros."""
    return fill_(self, 0)


# ------------------------------------------------------------------ the schema's rows (codegen/ops.py)

include "elementwise_grads.pxi"
include "elementwise_unary.pxi"
include "elementwise_binary.pxi"
