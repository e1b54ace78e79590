"""Complex tensors' arithmetic, composed over their real view. A complex64 tensor of size (..., n) is
a float32 tensor of size (..., n, 2) of (real, imaginary) pairs (``view_as_real``: the same bytes),
so each op here is real ops on that view: autograd (PyTorch's convention: the gradient of a real
loss L at z is dL/dRe(z) + i dL/dIm(z)) and every device come with the real kernels.

The kernels store complex tensors (casts, copies, fills, indexing, shape ops) but refuse to compute
on them; the op families (_ops/_common.pyx) send those ops here, by name, through
``register_complex_ops``. The public functions: complex, polar, real, imag, conj, conj_physical,
resolve_conj, resolve_neg, is_conj, is_neg, angle, sgn, isreal."""
from __future__ import annotations

import math
from typing import Optional

from tinytorch._core.dtype import DTYPES, complex64, complex128, float32, float64
from tinytorch._ops import elementwise as _E
from tinytorch._ops._common import register_complex_ops, result_code
from tinytorch._ops.index import stack
from tinytorch._ops.shape import view_as_complex, view_as_real
from tinytorch._tensor.queries import broadcast_shapes
from tinytorch._tensor.tensor import Tensor

__all__ = ["complex", "polar", "real", "imag", "conj", "conj_physical", "resolve_conj", "resolve_neg",
           "is_conj", "is_neg", "angle", "sgn", "isreal"]

_builtin_complex = complex


def _real_dtype(d):
    return float64 if d is complex128 else float32


def _complex_dtype(d):
    return complex128 if d is float64 or d is complex128 else complex64


def _parts(x, cdtype):
    """(real, imaginary) of an operand computed in complex dtype ``cdtype``: views of a complex
    tensor's real view, a real tensor and None (no imaginary part), or Python numbers."""
    if isinstance(x, Tensor):
        if x.dtype.is_complex:
            r = view_as_real(x if x.dtype is cdtype else x.to(cdtype))
            return r.select(-1, 0), r.select(-1, 1)
        return x.to(_real_dtype(cdtype)), None
    if isinstance(x, _builtin_complex):
        return x.real, x.imag
    return float(x), None


def _join(re, im, cdtype):
    """The complex tensor with real part ``re`` and imaginary part ``im`` (tensors or numbers, at least
    one a tensor; im None is 0)."""
    ref = re if isinstance(re, Tensor) else im
    if not isinstance(re, Tensor):
        re = ref.new_full(ref.shape, re)
    if im is None:
        im = re.new_zeros(re.shape)
    elif not isinstance(im, Tensor):
        im = re.new_full(re.shape, im)
    if re.shape != im.shape:
        shape = broadcast_shapes(re.shape, im.shape)
        re, im = re.expand(*shape), im.expand(*shape)
    out = view_as_complex(stack([re, im], -1))
    return out if out.dtype is cdtype else out.to(cdtype)


def _from_real_view(r):
    """view_as_complex of a real (..., 2) result, copied first if its layout can't be viewed."""
    try:
        return view_as_complex(r)
    except RuntimeError:
        return view_as_complex(r.contiguous())


def _mul(ar, ai, br, bi):
    if ai is None and bi is None:
        return ar * br, None
    if bi is None:
        return ar * br, ai * br
    if ai is None:
        return ar * br, ar * bi
    return ar * br - ai * bi, ar * bi + ai * br


def _binary_parts(a, b):
    cdtype = DTYPES[result_code(a, b)]
    if not cdtype.is_complex:       # comparisons and the like: compute in the operands' complex type
        cdtype = complex64
    return cdtype, _parts(a, cdtype), _parts(b, cdtype)


def _add(a, b, alpha=1.0):
    cdtype, (ar, ai), (br, bi) = _binary_parts(a, b)
    if alpha != 1.0:
        br, bi = br * alpha, (None if bi is None else bi * alpha)
    re = ar + br
    im = ai if bi is None else (bi if ai is None else ai + bi)
    return _join(re, im, cdtype)


def _sub(a, b, alpha=1.0):
    return _add(a, b, -alpha)


def _mul_op(a, b, alpha=1.0):
    cdtype, (ar, ai), (br, bi) = _binary_parts(a, b)
    if isinstance(a, Tensor) and a.dtype.is_complex and bi is None and isinstance(br, Tensor):
        return _from_real_view(view_as_real(a.to(cdtype)) * br.unsqueeze(-1))   # complex * real: one product
    return _join(*_mul(ar, ai, br, bi), cdtype)


def _div(a, b, alpha=1.0):
    cdtype, (ar, ai), (br, bi) = _binary_parts(a, b)
    if bi is None:
        return _join(ar / br, None if ai is None else ai / br, cdtype)
    d = br * br + bi * bi
    re, im = _mul(ar, ai, br, -bi)
    return _join(re / d, im / d, cdtype)


def _eq(a, b, alpha=1.0):
    cdtype, (ar, ai), (br, bi) = _binary_parts(a, b)
    return (ar == br) & ((ai if ai is not None else 0.0) == (bi if bi is not None else 0.0))


def _ne(a, b, alpha=1.0):
    return ~_eq(a, b)


def _unary_abs(x, a=0.0, b=0.0):
    re, im = _parts(x, x.dtype)
    sq = re * re + im * im
    zero = sq == 0
    # sqrt's gradient at 0 is inf; PyTorch's is 0 there: take the root of a nonzero stand-in
    return _E.where(zero, sq * 0.0, _E.where(zero, 1.0, sq).sqrt())


def _unary_angle(x, a=0.0, b=0.0):
    re, im = _parts(x, x.dtype)
    return _E.atan2(im, re)


def _polar_parts(r, theta, cdtype):
    return _join(r * theta.cos(), r * theta.sin(), cdtype)


def _neg(x, a=0.0, b=0.0):
    return _from_real_view(-view_as_real(x))


def _conj_of(x):
    re, im = _parts(x, x.dtype)
    return _join(re, -im, x.dtype)


def _exp(x, a=0.0, b=0.0):
    re, im = _parts(x, x.dtype)
    return _polar_parts(re.exp(), im, x.dtype)


def _log(x, a=0.0, b=0.0):
    return _join(_unary_abs(x).log(), _unary_angle(x), x.dtype)


def _pow_scalar(x, p, b=0.0):
    return _polar_parts(_unary_abs(x) ** p, _unary_angle(x) * p, x.dtype)


def _sqrt(x, a=0.0, b=0.0):
    return _pow_scalar(x, 0.5)


def _reciprocal(x, a=0.0, b=0.0):
    return _div(1.0, x)


def _square(x, a=0.0, b=0.0):
    return _mul_op(x, x)


def _reduce_real_view(x, dims, keepdim, dtype, op):
    if dtype is not None:
        x = x.to(dtype)
    r = view_as_real(x)
    dims = list(range(x.dim())) if dims is None else list(dims)
    if not dims:                                   # a 0-dim tensor: nothing to reduce
        return _from_real_view(r * 1.0)
    return _from_real_view(getattr(r, op)(dim=dims, keepdim=keepdim))


def _sum(x, dims, keepdim, dtype):
    return _reduce_real_view(x, dims, keepdim, dtype, "sum")


def _mean(x, dims, keepdim, dtype):
    return _reduce_real_view(x, dims, keepdim, dtype, "mean")


def _matmul(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")
    (ar, ai), (br, bi) = _parts(a, a.dtype), _parts(b, b.dtype)
    return _join(ar @ br - ai @ bi, ar @ bi + ai @ br, a.dtype)


def _inplace(fn):
    """The in-place form of a composite: computed out of place, then written into self (a real self
    can't take a complex result, as in PyTorch)."""
    def run(self, *args):
        result = fn(self, *args)
        if result.dtype.is_complex and not self.dtype.is_complex:
            raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type {self.dtype}")
        self.copy_(result)
        return self
    return run


_BINARY = {"add": _add, "sub": _sub, "mul": _mul_op, "div": _div, "eq": _eq, "ne": _ne}
_UNARY = {"neg": _neg, "abs": _unary_abs, "exp": _exp, "log": _log, "sqrt": _sqrt, "reciprocal": _reciprocal,
          "square": _square, "pow_scalar": _pow_scalar}
register_complex_ops({**_BINARY, **_UNARY, "sum": _sum, "mean": _mean, "matmul": _matmul,
                      **{n + "_": _inplace(f) for n, f in {**_BINARY, **_UNARY}.items()}})


# ------------------------------------------------------------------ public functions

def complex(real: Tensor, imag: Tensor, *, out=None) -> Tensor:
    """Constructs a complex tensor with its real part equal to :attr:`real` and its imaginary part
    equal to :attr:`imag`.

    Args:
        real (Tensor): The real part of the complex tensor. Must be float or double.
        imag (Tensor): The imaginary part of the complex tensor. Must be same dtype as :attr:`real`."""
    if real.dtype is not imag.dtype or real.dtype not in (float32, float64):
        raise RuntimeError(f"complex: expected both inputs to be Float or Double tensors of the same dtype, but got "
                           f"{real.dtype} and {imag.dtype}")
    result = _join(real, imag, _complex_dtype(real.dtype))
    return result if out is None else out.copy_(result)


def polar(abs: Tensor, angle: Tensor, *, out=None) -> Tensor:
    """Constructs a complex tensor whose elements are Cartesian coordinates corresponding to the polar
    coordinates with absolute value :attr:`abs` and angle :attr:`angle`:
    ``abs * cos(angle) + 1j * abs * sin(angle)``.

    Args:
        abs (Tensor): The absolute value the complex tensor. Must be float or double.
        angle (Tensor): The angle of the complex tensor. Must be same dtype as :attr:`abs`."""
    if abs.dtype is not angle.dtype or abs.dtype not in (float32, float64):
        raise RuntimeError(f"polar: expected both inputs to be Float or Double tensors of the same dtype, but got "
                           f"{abs.dtype} and {angle.dtype}")
    result = _polar_parts(abs, angle, _complex_dtype(abs.dtype))
    return result if out is None else out.copy_(result)


def real(input: Tensor) -> Tensor:
    """Returns a new tensor containing real values of the :attr:`input` tensor (a view of a complex
    tensor's real parts; a real tensor itself).

    Args:
        input (Tensor): the input tensor."""
    return input.real


def imag(input: Tensor) -> Tensor:
    """Returns a new tensor containing imaginary values of the :attr:`input` tensor (a view).

    Args:
        input (Tensor): the input tensor (complex)."""
    return input.imag


def conj(input: Tensor) -> Tensor:
    """Returns :attr:`input` with its imaginary parts negated (a real tensor itself). PyTorch returns a
    lazily conjugated view; tinytorch computes the conjugate (``is_conj()`` is always False).

    Args:
        input (Tensor): the input tensor."""
    return _conj_of(input) if input.dtype.is_complex else input


def conj_physical(input: Tensor) -> Tensor:
    """Computes the element-wise conjugate of the given :attr:`input` tensor (a real tensor itself).

    Args:
        input (Tensor): the input tensor."""
    return _conj_of(input) if input.dtype.is_complex else input


def resolve_conj(input: Tensor) -> Tensor:
    """Returns :attr:`input` (tinytorch has no lazily conjugated tensors).

    Args:
        input (Tensor): the input tensor."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """Returns :attr:`input` (tinytorch has no lazily negated tensors).

    Args:
        input (Tensor): the input tensor."""
    return input


def is_conj(input: Tensor) -> bool:
    """Returns False: tinytorch computes conjugates instead of setting a conjugate bit.

    Args:
        input (Tensor): the input tensor."""
    return False


def is_neg(input: Tensor) -> bool:
    """Returns False: tinytorch has no lazily negated tensors.

    Args:
        input (Tensor): the input tensor."""
    return False


def angle(input: Tensor) -> Tensor:
    """Computes the element-wise angle (in radians) of the given :attr:`input` tensor: atan2(imag, real);
    for real tensors pi where negative, else 0 (NaN stays NaN).

    Args:
        input (Tensor): the input tensor."""
    if input.dtype.is_complex:
        return _unary_angle(input)
    x = input if input.dtype.is_floating_point else input.float()
    return _E.where(x < 0, math.pi, x * 0.0)


def sgn(input: Tensor) -> Tensor:
    """For complex tensors, z / abs(z) (0 where z is 0); for real tensors, sign(input).

    Args:
        input (Tensor): the input tensor."""
    if not input.dtype.is_complex:
        return input.sign()
    r = _unary_abs(input)
    re, im = _parts(input, input.dtype)
    safe = _E.where(r == 0, 1.0, r)
    return _join(re / safe, im / safe, input.dtype)


def isreal(input: Tensor) -> Tensor:
    """Returns a new tensor with boolean elements representing if each element of :attr:`input` is
    real-valued or not (a real tensor's are all True).

    Args:
        input (Tensor): the input tensor."""
    if not input.dtype.is_complex:
        return input.new_ones(input.shape, dtype=DTYPES[0])
    return view_as_real(input).select(-1, 1) == 0
