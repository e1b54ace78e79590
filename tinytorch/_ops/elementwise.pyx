# cython: language_level=3
"""Elementwise ops and their derivatives (micrograd style: each forward next to its backward).

Gradients of broadcast inputs are reduced to the input's shape by the engine."""
import math

from tinytorch import _C
from tinytorch._tensor cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._autograd cimport Node, make_node, init_node, should_record, set_history, save_tensors, \
    is_grad_enabled_c
from tinytorch._ops._common cimport operand, as_tensor_like, fused_result, check_inplace, rebase_inplace


# ------------------------------------------------------------------ unary

cdef class UnaryNode(Node):
    """Node of a unary op: which op and its scalar parameters (C fields, no attribute dict)."""
    cdef public str op
    cdef public double a, b


cdef Tensor _unary(str name, Tensor x, double a=0.0, double b=0.0):
    cdef Tensor out = wrap(getattr(_C, name)(x._impl, a, b))
    spec = _UNARY_GRAD.get(name)
    if spec is None or not should_record((x,)):
        return out
    cdef UnaryNode n = <UnaryNode>init_node(UnaryNode.__new__(UnaryNode), spec[0], _unary_backward, (x,))
    n.op, n.a, n.b = name, a, b
    save_tensors(n, (x, out))
    set_history(out, n, 0)
    return out


def _unary_backward(UnaryNode n, g):
    x, y = n.saved_tensors
    return (_UNARY_GRAD[n.op][1](n, g, x, y),)


def _fused(str kernel, g, t, double a=0.0, double b=0.0):
    return fused_result(kernel, getattr(_C, kernel)((<Tensor>g)._impl, (<Tensor>t)._impl, a, b), (g, t))


def _fused_or_composite(str kernel, composite):
    """An activation's gradient formula: its fused kernel, or, while the backward itself is being
    recorded (create_graph=True), composite(n, g, x) built from differentiable ops."""
    def formula(n, g, x, y):
        if is_grad_enabled_c():
            return composite(n, g, x)
        return _fused(kernel, g, x, n.a, n.b)
    return formula


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# Each returns g * f'(x); the piecewise ones select g (a tensor) so the result keeps g's dtype.
def _d_gelu(n, g, x):        # Phi(x) + x phi(x)
    return g * ((_unary("erf", x * _SQRT_HALF) + 1.0) * 0.5 + x * _unary("exp", x * x * -0.5) * _INV_SQRT_2PI)


def _d_gelu_tanh(n, g, x):   # t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
    t = _unary("tanh", (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI)
    return g * ((t + 1.0) * 0.5 + x * (1.0 - t * t) * (x * x * (3 * 0.044715) + 1.0) * (0.5 * _SQRT_2_OVER_PI))


def _d_silu(n, g, x):
    s = _unary("sigmoid", x)
    return g * (s * (x * (1.0 - s) + 1.0))


def _d_softplus(n, g, x):    # n.a = beta, n.b = threshold: linear above it
    # the threshold test in float32 for 16-bit types, as the kernel's (x * beta rounds otherwise)
    xo = x.float() if x._impl.dtype_code in (4, 5) else x
    return where(xo * n.a > n.b, g, g * _unary("sigmoid", x * n.a))


def _d_mish(n, g, x):
    t = _unary("tanh", _unary("softplus", x, 1.0, 20.0))
    return g * (t + x * (1.0 - t * t) * _unary("sigmoid", x))


def _d_hardswish(n, g, x):
    return where(x < -3.0, g * 0.0, where(x <= 3.0, g * (x / 3.0 + 0.5), g))


def _d_leaky_relu(n, g, x):
    return where(x > 0.0, g, g * n.a)


def _d_elu(n, g, x):         # n.a = alpha
    return where(x > 0.0, g, g * _unary("exp", x) * n.a)


def _relu_grad(n, g, x, y):
    if is_grad_enabled_c():
        return g * (y > 0)
    return _fused("relu_backward", g, y)


def _sigmoid_grad(n, g, x, y):
    if is_grad_enabled_c():
        return g * y * (1 - y)
    return _fused("sigmoid_backward", g, y)


def _tanh_grad(n, g, x, y):
    if is_grad_enabled_c():
        return g * (1 - y * y)
    return _fused("tanh_backward", g, y)


def _clamp_scalar_grad(n, g, x, y):
    if n.op == "clamp_min":
        mask = x >= n.a
    elif n.op == "clamp_max":
        mask = x <= n.a
    else:
        mask = (x >= n.a).logical_and(x <= n.b)
    return where(mask, g, 0.0)


def _pow_scalar_grad(n, g, x, y):
    if n.a == 0.0:
        return g * 0.0
    return g * n.a * _unary("pow_scalar", x, n.a - 1.0)


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# name -> (grad_fn name, formula(node, grad, x, y)) ; ops absent here have no gradient.
_UNARY_GRAD = {
    "neg": ("NegBackward0", lambda n, g, x, y: -g),
    "abs": ("AbsBackward0", lambda n, g, x, y: g * _unary("sign", x)),
    "sign": ("SignBackward0", lambda n, g, x, y: g * 0.0),
    "exp": ("ExpBackward0", lambda n, g, x, y: g * y),
    "exp2": ("Exp2Backward0", lambda n, g, x, y: g * y * _LN2),
    "log": ("LogBackward0", lambda n, g, x, y: g / x),
    "log2": ("Log2Backward0", lambda n, g, x, y: g / (x * _LN2)),
    "log10": ("Log10Backward0", lambda n, g, x, y: g / (x * _LN10)),
    "log1p": ("Log1PBackward0", lambda n, g, x, y: g / (x + 1.0)),
    "expm1": ("Expm1Backward0", lambda n, g, x, y: g * (y + 1.0)),
    "sqrt": ("SqrtBackward0", lambda n, g, x, y: g / (y * 2.0)),
    "rsqrt": ("RsqrtBackward0", lambda n, g, x, y: g * (y * y * y) * -0.5),
    "sin": ("SinBackward0", lambda n, g, x, y: g * _unary("cos", x)),
    "cos": ("CosBackward0", lambda n, g, x, y: -g * _unary("sin", x)),
    "tan": ("TanBackward0", lambda n, g, x, y: g * (y * y + 1.0)),
    "asin": ("AsinBackward0", lambda n, g, x, y: g * _unary("rsqrt", 1.0 - x * x)),
    "acos": ("AcosBackward0", lambda n, g, x, y: -g * _unary("rsqrt", 1.0 - x * x)),
    "atan": ("AtanBackward0", lambda n, g, x, y: g / (x * x + 1.0)),
    "sinh": ("SinhBackward0", lambda n, g, x, y: g * _unary("cosh", x)),
    "cosh": ("CoshBackward0", lambda n, g, x, y: g * _unary("sinh", x)),
    "tanh": ("TanhBackward0", _tanh_grad),
    "sigmoid": ("SigmoidBackward0", _sigmoid_grad),
    "relu": ("ReluBackward0", _relu_grad),
    "gelu": ("GeluBackward0", _fused_or_composite("gelu_backward", _d_gelu)),
    "gelu_tanh": ("GeluBackward0", _fused_or_composite("gelu_tanh_backward", _d_gelu_tanh)),
    "silu": ("SiluBackward0", _fused_or_composite("silu_backward", _d_silu)),
    "softplus": ("SoftplusBackward0", _fused_or_composite("softplus_backward", _d_softplus)),
    "leaky_relu": ("LeakyReluBackward0", _fused_or_composite("leaky_relu_backward", _d_leaky_relu)),
    "elu": ("EluBackward0", _fused_or_composite("elu_backward", _d_elu)),
    "mish": ("MishBackward0", _fused_or_composite("mish_backward", _d_mish)),
    "hardswish": ("HardswishBackward0", _fused_or_composite("hardswish_backward", _d_hardswish)),
    "erf": ("ErfBackward0", lambda n, g, x, y: g * _TWO_OVER_SQRT_PI * _unary("exp", -(x * x))),
    "reciprocal": ("ReciprocalBackward0", lambda n, g, x, y: -g * y * y),
    "square": ("PowBackward0", lambda n, g, x, y: g * x * 2.0),
    "floor": ("FloorBackward0", lambda n, g, x, y: g * 0.0),
    "ceil": ("CeilBackward0", lambda n, g, x, y: g * 0.0),
    "round": ("RoundBackward0", lambda n, g, x, y: g * 0.0),
    "trunc": ("TruncBackward0", lambda n, g, x, y: g * 0.0),
    "clamp_min": ("ClampMinBackward0", _clamp_scalar_grad),
    "clamp_max": ("ClampMaxBackward0", _clamp_scalar_grad),
    "clamp": ("ClampBackward1", _clamp_scalar_grad),
    "pow_scalar": ("PowBackward0", _pow_scalar_grad),
    "rpow_scalar": ("PowBackward1", lambda n, g, x, y: g * y * math.log(n.a)),
}


def _make_unary(name):
    def op(Tensor x):
        return _unary(name, x)
    op.__name__ = name
    op.__doc__ = f"Returns a new tensor with the {name} of the elements of input."
    return op


neg = _make_unary("neg"); abs = _make_unary("abs"); sign = _make_unary("sign")
exp = _make_unary("exp"); exp2 = _make_unary("exp2"); log = _make_unary("log")
log2 = _make_unary("log2"); log10 = _make_unary("log10"); log1p = _make_unary("log1p")
expm1 = _make_unary("expm1"); sqrt = _make_unary("sqrt"); rsqrt = _make_unary("rsqrt")
sin = _make_unary("sin"); cos = _make_unary("cos"); tan = _make_unary("tan")
asin = _make_unary("asin"); acos = _make_unary("acos"); atan = _make_unary("atan")
sinh = _make_unary("sinh"); cosh = _make_unary("cosh"); tanh = _make_unary("tanh")
sigmoid = _make_unary("sigmoid"); relu = _make_unary("relu"); silu = _make_unary("silu")
mish = _make_unary("mish"); hardswish = _make_unary("hardswish"); erf = _make_unary("erf")
reciprocal = _make_unary("reciprocal"); square = _make_unary("square")
floor = _make_unary("floor"); ceil = _make_unary("ceil"); round = _make_unary("round")
trunc = _make_unary("trunc"); isnan = _make_unary("isnan"); isinf = _make_unary("isinf")
isfinite = _make_unary("isfinite"); logical_not = _make_unary("logical_not")


def gelu(Tensor x, approximate="none"):
    """Gaussian Error Linear Unit; ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _unary("gelu" if approximate == "none" else "gelu_tanh", x)


def softplus(Tensor x, beta=1.0, threshold=20.0):
    return _unary("softplus", x, beta, threshold)


def leaky_relu(Tensor x, negative_slope=0.01):
    return _unary("leaky_relu", x, negative_slope)


def elu(Tensor x, alpha=1.0):
    return _unary("elu", x, alpha)


def clamp(Tensor x, min=None, max=None):
    """Clamps all elements into the range [min, max] (either bound may be a tensor)."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(x, min, max)
    if min is None:
        return _unary("clamp_max", x, max)
    if max is None:
        return _unary("clamp_min", x, min)
    return _unary("clamp", x, min, max)


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
    x, lo, hi = n.saved_tensors
    inside = x == x
    below = above = None
    if lo is not None:
        below = x < lo
        inside = inside.logical_and(below.logical_not())
    if hi is not None:
        above = x > hi
        inside = inside.logical_and(above.logical_not())
    return (where(inside, g, 0.0),
            None if lo is None else where(below, g, 0.0),
            None if hi is None else where(above, g, 0.0))


def pow(a, b):
    """Takes the power of each element in input with exponent and returns a tensor with the result."""
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
    cdef Tensor out = wrap(getattr(_C, name)(operand(a), operand(b), s0, s1))
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
    saves = spec[2]
    # save only what the needed gradients read, as PyTorch: fewer false "modified by an inplace
    # operation" errors (x * 2 then an in-place op on x is fine)
    if name == "mul":
        saves = ("a" if n.needs_input_grad[1] else "") + ("b" if n.needs_input_grad[0] else "")
    elif name == "div" and not n.needs_input_grad[1]:
        saves = "b"
    if saves:
        save_tensors(n, (ta if "a" in saves else None, tb if "b" in saves else None, out if "y" in saves else None))
    set_history(out, n, 0)
    return out


def _binary_backward(BinaryNode n, g):
    a, b, y = n.saved_tensors if n._saved else (None, None, None)
    if a is None:
        a = n.a_val
    if b is None:
        b = n.b_val
    ga, gb = _BINARY_GRAD[n.op][1](n, g, a, b, y)
    return (ga if n.needs_input_grad[0] else None, gb if n.needs_input_grad[1] else None)


def _pow_grad(n, g, a, b, y):
    ga = gb = None
    if n.needs_input_grad[0]:
        # 0 where the exponent is 0 (as PyTorch; b * a**(b-1) would be 0 * inf = nan at a == 0)
        ga = where(b == 0, 0.0, g * b * pow(a, b - 1.0)) if isinstance(b, Tensor) else g * b * pow(a, b - 1.0)
    if n.needs_input_grad[1]:
        # d/db a**b = a**b log a, defined as 0 where a == 0 and b >= 0 (as PyTorch)
        ga_mask = (a == 0).logical_and(b >= 0) if isinstance(b, Tensor) else (a == 0)
        gb = where(ga_mask, 0.0, g * y * log(a))
    return ga, gb


def _minmax_grad(n, g, a, b, y):
    # ties split the gradient evenly, as PyTorch
    if n.op == "maximum":
        wa = (a > b) + (a == b) * 0.5
    else:
        wa = (a < b) + (a == b) * 0.5
    return g * wa, g * (1.0 - wa)


# name -> (grad_fn name, formula(node, g, a, b, y) -> (ga, gb), which of a/b/y to save)
_BINARY_GRAD = {
    "add": ("AddBackward0", lambda n, g, a, b, y: (g, g if n.alpha == 1.0 else g * n.alpha), ""),
    "sub": ("SubBackward0", lambda n, g, a, b, y: (g, -g if n.alpha == 1.0 else g * -n.alpha), ""),
    "mul": ("MulBackward0", lambda n, g, a, b, y: (g * b if n.needs_input_grad[0] else None,
                                                   g * a if n.needs_input_grad[1] else None), "ab"),
    "div": ("DivBackward0", lambda n, g, a, b, y: (g / b if n.needs_input_grad[0] else None,
                                                   -g * y / b if n.needs_input_grad[1] else None), "by"),
    "pow": ("PowBackward1", _pow_grad, "aby"),
    "maximum": ("MaximumBackward0", _minmax_grad, "ab"),
    "minimum": ("MinimumBackward0", _minmax_grad, "ab"),
    "remainder": ("RemainderBackward0", lambda n, g, a, b, y: (g, -g * _binary("floor_divide", a, b)), "ab"),
    "atan2": ("Atan2Backward0", lambda n, g, a, b, y: (g * b / (a * a + b * b), -g * a / (a * a + b * b)), "ab"),
}


def add(a, b, *, alpha=1):
    """Adds other, scaled by alpha, to input."""
    return _binary("add", a, b, alpha)


def sub(a, b, *, alpha=1):
    return _binary("sub", a, b, alpha)


def rsub(a, b, *, alpha=1):
    return _binary("sub", b, a, alpha)


def mul(a, b):
    return _binary("mul", a, b)


def div(a, b, *, rounding_mode=None):
    if rounding_mode is None:
        return _binary("div", a, b)
    if rounding_mode == "floor":
        return _binary("floor_divide", a, b)
    if rounding_mode == "trunc":
        return trunc(_binary("div", a, b)).to(_C.result_type(operand(a), operand(b)))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


def _make_binary(name):
    def op(a, b):
        return _binary(name, a, b)
    op.__name__ = name
    return op


maximum = _make_binary("maximum"); minimum = _make_binary("minimum")
remainder = _make_binary("remainder"); floor_divide = _make_binary("floor_divide")
atan2 = _make_binary("atan2")
eq = _make_binary("eq"); ne = _make_binary("ne"); lt = _make_binary("lt"); le = _make_binary("le")
gt = _make_binary("gt"); ge = _make_binary("ge")
logical_and = _make_binary("logical_and"); logical_or = _make_binary("logical_or")
logical_xor = _make_binary("logical_xor")
bitwise_and = _make_binary("bitwise_and"); bitwise_or = _make_binary("bitwise_or")
bitwise_xor = _make_binary("bitwise_xor")


def where(Tensor condition, a, b):
    """Return a tensor of elements selected from either a or b, depending on condition."""
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
    getattr(_C, name + "_")(self._impl, operand(other), s0, s1)
    return self


def _inplace_unary(str name, Tensor self, double a=0.0, double b=0.0):
    check_inplace(self, name + "_")
    if is_grad_enabled_c() and requires_grad(self):
        return rebase_inplace(self, _unary(name, self, a, b))
    getattr(_C, name + "_")(self._impl, a, b)
    return self


def add_(Tensor self, other, *, alpha=1):
    return _inplace("add", self, other, alpha)


def sub_(Tensor self, other, *, alpha=1):
    return _inplace("sub", self, other, alpha)


def mul_(Tensor self, other):
    return _inplace("mul", self, other)


def div_(Tensor self, other):
    return _inplace("div", self, other)


def pow_(Tensor self, other):
    if isinstance(other, (int, float)) and not isinstance(other, bool):
        return _inplace_unary("pow_scalar", self, float(other))
    return _inplace("pow", self, other)


def clamp_(Tensor self, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        check_inplace(self, "clamp_")
        return rebase_inplace(self, clamp(self, min, max))
    if min is None and max is None:
        raise RuntimeError("clamp_: At least one of 'min' or 'max' must not be None")
    if min is None:
        return _inplace_unary("clamp_max", self, max)
    if max is None:
        return _inplace_unary("clamp_min", self, min)
    return _inplace_unary("clamp", self, min, max)


def _make_inplace_unary(name):
    def op(Tensor self):
        return _inplace_unary(name, self)
    op.__name__ = name + "_"
    return op


def _make_inplace_binary(name):
    def op(Tensor self, other):
        return _inplace(name, self, other)
    op.__name__ = name + "_"
    return op


def leaky_relu_(Tensor self, negative_slope=0.01):
    return _inplace_unary("leaky_relu", self, negative_slope)


# ------------------------------------------------------------------ Tensor methods

def _r(fn):
    """Reflected operator: other <op> self."""
    def op(self, other):
        return fn(other, self)
    return op


def _tensor_eq(self, other):
    return _binary("eq", self, other)


def _tensor_ne(self, other):
    return _binary("ne", self, other)


METHODS = {
    "__add__": add, "__radd__": _r(add), "__sub__": sub, "__rsub__": _r(sub), "__mul__": mul,
    "__rmul__": _r(mul), "__truediv__": div, "__rtruediv__": _r(div), "__pow__": pow,
    "__rpow__": _r(pow), "__mod__": remainder, "__rmod__": _r(remainder),
    "__floordiv__": floor_divide, "__rfloordiv__": _r(floor_divide), "__neg__": neg, "__abs__": abs,
    "__eq__": _tensor_eq, "__ne__": _tensor_ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor,
    "__invert__": logical_not,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_, "__ipow__": pow_,
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div, "divide": div,
    "true_divide": div, "pow": pow, "maximum": maximum, "minimum": minimum, "remainder": remainder,
    "floor_divide": floor_divide, "atan2": atan2, "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt,
    "ge": ge, "greater": gt, "less": lt, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "logical_not": logical_not, "bitwise_and": bitwise_and,
    "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "where": lambda self, condition, other: where(condition, self, other),
    "clamp": clamp, "clip": clamp, "clamp_min": lambda self, m: clamp(self, min=m),
    "clamp_max": lambda self, m: clamp(self, max=m),
    "gelu": gelu, "softplus": softplus, "leaky_relu": leaky_relu, "elu": elu,
    "add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "pow_": pow_, "clamp_": clamp_, "clip_": clamp_,
    "leaky_relu_": leaky_relu_,
}
for _name in ("neg", "abs", "sign", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
              "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid",
              "relu", "silu", "mish", "hardswish", "erf", "reciprocal", "square", "floor", "ceil", "round",
              "trunc", "isnan", "isinf", "isfinite"):
    METHODS[_name] = globals()[_name]
for _name in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu",
              "reciprocal", "square", "floor", "ceil", "round", "trunc", "log1p", "expm1", "erf", "silu"):
    METHODS[_name + "_"] = _make_inplace_unary(_name)
for _name in ("maximum", "minimum", "remainder", "floor_divide", "logical_and", "logical_or", "eq", "ne",
              "lt", "le", "gt", "ge"):
    METHODS[_name + "_"] = _make_inplace_binary(_name)


# ------------------------------------------------------------------ fill_ / copy_

def _copy_backward(Node n, g):
    # self's old value is overwritten (zero gradient); src receives g, reduced to its shape
    return (None, g)


def copy_(Tensor self, Tensor src, non_blocking=False):
    """Copies the elements from src into self (broadcasting, casting) and returns self."""
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
    """Fills self tensor with the specified value."""
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


METHODS.update({"copy_": copy_, "fill_": fill_, "zero_": zero_})
