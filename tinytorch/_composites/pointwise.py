"""Elementwise ops composed from existing ones (every device; autograd records their parts, so
each is differentiable where PyTorch's is): lerp, addcmul, addcdiv, hypot, sinc, deg2rad,
rad2deg, frac, fmod, copysign, heaviside, xlogy, logaddexp2, float_power, nan_to_num, signbit,
isposinf, isneginf, logit, fmax, fmin, fill, round (with decimals), the activations prelu and
hardshrink (tinytorch.<name> and Tensor.<name>, which nn.functional uses too), the comparisons isclose,
allclose, equal, isin, the integer gcd/lcm and ldexp."""
from __future__ import annotations

import math
from typing import Optional, Union

from tinytorch._composites.forms import derived_doc
from tinytorch._tensor.creation import tensor as _tensor, zeros
from tinytorch._core.graph import is_grad_enabled
from tinytorch._core.dtype import bfloat16, bool_, float16, float32, float64, int64, promote_types
from tinytorch._tensor.legacy import finfo
from tinytorch._ops import elementwise as _E
from tinytorch._ops.elementwise import where
from tinytorch._tensor.tensor import Tensor

Number = Union[int, float, bool]

__all__ = ["lerp", "addcmul", "addcdiv", "hypot", "sinc", "deg2rad", "rad2deg", "frac", "fmod", "copysign",
           "heaviside", "xlogy", "logaddexp2", "float_power", "nan_to_num", "signbit", "isposinf", "isneginf",
           "isclose", "allclose", "equal", "isin", "gcd", "lcm", "ldexp", "logit", "fmax", "fmin", "fill", "prelu", "hardshrink",
           "round", "round_"]


def _as_tensor(value, like: Tensor) -> Tensor:
    return value if isinstance(value, Tensor) else _tensor(value, dtype=like.dtype, device=like.device)


def _require_floating(op: str, *operands) -> None:
    """PyTorch's float-only kernels raise for integer and bool tensors (no silent promotion)."""
    for t in operands:
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise NotImplementedError(f'"{op}" not implemented for \'{t.dtype.name}\' ({t.dtype.name}'
                                      f'{list(t.shape)} on {t.device}): it takes floating-point inputs')


def _result_dtype(a, b):
    """The dtype an arithmetic op on a and b gives (0-d tensors rank below dimensioned ones)."""
    probe = [x.new_empty((0,) if x.dim() else ()) if isinstance(x, Tensor) else x for x in (a, b)]
    return (probe[0] + probe[1]).dtype


def _promoted_dtype(a, b):
    """The floating dtype an arithmetic op on a and b gives; float32 for integer operands."""
    dtype = _result_dtype(a, b)
    return dtype if dtype.is_floating_point else float32


def _check_same_dtype(op: str, input: Tensor, other: Tensor, what: str = "other") -> None:
    if input.dtype != other.dtype:
        raise RuntimeError(f"{op}(): expected dtype {input.dtype} for `{what}` but got dtype {other.dtype}")


def _round_decimals(input: Tensor, decimals: int) -> Tensor:
    """PyTorch's round.decimals: ``nearbyint(x * 10**d) / 10**d`` (``nearbyint(x / 10**-d) * 10**-d`` for
    d < 0), half to even, in the dtype's compute type (float32 for float16 and bfloat16)."""
    _require_floating("round", input)
    low = input.dtype in (float16, bfloat16)
    x = input.float() if low else input
    scale = 10.0 ** abs(decimals)
    out = _E.round(x / scale) * scale if decimals < 0 else _E.round(x * scale) / scale
    return out.to(input.dtype) if low else out


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Rounds elements of :attr:`input` to the nearest integer (halves to even), or to ``decimals``
    decimal places; the gradient is zero, as PyTorch's.

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        decimals (int): Number of decimal places to round to (default: 0). If decimals is negative, it
            specifies the number of positions to the left of the decimal point."""
    if decimals == 0:
        return _E.round(input)   # integer tensors too (they are returned as they are)
    return _round_decimals(input, int(decimals))


def round_(self: Tensor, *, decimals: int = 0) -> Tensor:
    """In-place version of :meth:`~Tensor.round`.

    Args:
        decimals (int): Number of decimal places to round to (default: 0). If decimals is negative, it
            specifies the number of positions to the left of the decimal point."""
    if decimals == 0:
        return _E.round_(self)
    out = _round_decimals(self, int(decimals))
    if is_grad_enabled() and self.requires_grad and self.is_leaf:
        raise RuntimeError("round_(): a leaf Variable that requires grad is being used in an in-place operation.")
    return self.copy_(out)


def lerp(input: Tensor, end: Tensor, weight: Union[Tensor, Number]) -> Tensor:
    """Linear interpolation: ``input + weight * (end - input)``; ``end`` (and a tensor
    ``weight``) must have input's dtype, as PyTorch.

    Args:
        input (Tensor): the tensor with the starting points.
        end (Tensor): the tensor with the ending points.
        weight (float or tensor): the weight for the interpolation formula."""
    _check_same_dtype("lerp", input, end, "end")
    if isinstance(weight, Tensor):
        _check_same_dtype("lerp", input, weight, "weight")
    return input + weight * (end - input)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``.

    Args:
        input (Tensor): the tensor to be added.
        tensor1 (Tensor): the tensor to be multiplied.
        tensor2 (Tensor): the tensor to be multiplied.

    Keyword args:
        value (Number, optional): multiplier for :math:`tensor1 .* tensor2`. Default: ``1``"""
    prod = tensor1 * tensor2
    return input + (prod if value == 1 else prod * value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    r"""``input + value * tensor1 / tensor2`` (integer tensors are refused, as PyTorch: their
    division would truncate).

    Args:
        input (Tensor): the tensor to be added.
        tensor1 (Tensor): the numerator tensor.
        tensor2 (Tensor): the denominator tensor.

    Keyword args:
        value (Number, optional): multiplier for :math:`\text{tensor1} / \text{tensor2}`. Default: ``1``"""
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release "
                           "addcdiv will perform a true division of tensor1 and tensor2. Use "
                           "torch.addcmul(input, tensor1, 1 / tensor2) or torch.addcdiv with floating inputs")
    quot = tensor1 / tensor2
    return input + (quot if value == 1 else quot * value)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise, without overflow for large inputs (scaled by
    the larger magnitude).

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    _require_floating("hypot", input, other)
    a, b = input.abs(), _as_tensor(other, input).abs()
    big = a.maximum(b)
    small = a.minimum(b)
    safe = where(big == 0, big.new_ones(()), big)
    r = small / safe
    out = where(big == 0, big * 0, big * (r * r + 1).sqrt())
    return where(big.isinf(), big, out)     # inf/inf is NaN in the scaling; hypot(inf, y) is inf


def sinc(input: Tensor) -> Tensor:
    """Normalized sinc: ``sin(pi x) / (pi x)``, 1 at 0 (gradient 0 there).

    Args:
        input (Tensor): the input tensor."""
    x = input if input.dtype.is_floating_point else input.float()
    px = x * math.pi
    zero = x == 0
    safe = where(zero, x.new_ones(()), px)
    return where(zero, x.new_ones(()), safe.sin() / safe)


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians.

    Args:
        input (Tensor): the input tensor."""
    x = input if input.dtype.is_floating_point else input.float()
    return x * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees.

    Args:
        input (Tensor): the input tensor."""
    x = input if input.dtype.is_floating_point else input.float()
    return x * (180.0 / math.pi)


def frac(input: Tensor) -> Tensor:
    """Fractional part, ``input - trunc(input)`` (sign of input); floating inputs only.

    Args:
        input (Tensor): the input tensor."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"frac_cpu\" not implemented for '{input.dtype}'")
    return input - input.trunc()


def fmod(input: Tensor, other: Union[Tensor, Number]) -> Tensor:
    """C's fmod: the remainder of ``input / other`` with the sign of input (``remainder`` takes
    the divisor's sign): the remainder, moved by one divisor where the signs differ (exact for
    integers; the gradient for other is -trunc(input / other), as PyTorch).

    Args:
        input (Tensor): the dividend.
        other (Tensor or Number): the divisor."""
    r = input.remainder(other)
    adjust = (r != 0) & ((r < 0) != (input < 0))
    out = where(adjust, r - other, r)
    if input.dtype.is_floating_point and isinstance(other, Tensor):   # fmod(x, ±inf) = x for finite x
        out = where(other.isinf() & input.isfinite(), input, out)
    return out


def copysign(input: Tensor, other: Union[Tensor, Number]) -> Tensor:
    """|input| with the sign of other (a negative zero or NaN sign bit counts as negative).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): contains value(s) whose signbit(s) are applied to the magnitudes in
            :attr:`input`."""
    x = input if input.dtype.is_floating_point else input.float()
    o = _as_tensor(other, x)
    neg = signbit(o)
    return where(neg, -x.abs(), x.abs())


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """Heaviside step: 0 where input < 0, ``values`` where input == 0, 1 where input > 0 (no
    gradient, as PyTorch: its derivative is not implemented there either).

    Args:
        input (Tensor): the input tensor.
        values (Tensor): the values to use where :attr:`input` is zero."""
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' must be Tensor, not {type(values).__name__}")
    if input.requires_grad or values.requires_grad:
        raise RuntimeError("the derivative for 'heaviside' is not implemented")
    _check_same_dtype("heaviside", input, values, "values")
    one, zero = input.new_ones(()), input.new_zeros(())
    return where(input == 0, values.to(input.dtype), where(input > 0, one, zero))


def xlogy(input: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``input * log(other)``, 0 where input is 0 (NaN if other is NaN).

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    if not isinstance(input, Tensor):
        input = _as_tensor(float(input), other)
    dtype = _promoted_dtype(input, other)
    x = input.to(dtype)                         # both in the result's dtype, as PyTorch computes
    y = _as_tensor(other, x).to(dtype)
    out = x * where(x == 0, y.new_ones(()), y).log()
    return where((x == 0) & ~y.isnan(), out * 0, out)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow.

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    _require_floating("logaddexp2", input, other)
    m = input.maximum(other)
    out = m + (-(input - other).abs()).exp2().log1p() * (1.0 / math.log(2.0))
    return input.where((input == other) & input.isinf(), out)   # equal infinities: inf - inf is NaN


def float_power(input: Union[Tensor, Number], exponent: Union[Tensor, Number]) -> Tensor:
    """``input ** exponent`` computed in float64, as PyTorch's float_power.

    Args:
        input (Tensor or Number): the base value(s).
        exponent (Tensor or Number): the exponent value(s)."""
    base = input.to(float64) if isinstance(input, Tensor) else input
    exp = exponent.to(float64) if isinstance(exponent, Tensor) else exponent
    if not isinstance(base, Tensor):
        base = _tensor(float(base), dtype=float64, device=exp.device)
    return base.pow(exp)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set: negative numbers and -0.0 (NaNs read as positive).

    Args:
        input (Tensor): the input tensor."""
    if not input.dtype.is_floating_point:
        return input < 0
    x = input.detach()
    # atan2(+0, x) is pi for x < 0 or x = -0.0 and 0 for x > 0 or x = +0.0
    return (x < 0) | ((x == 0) & (x.new_zeros(()).atan2(x) > 0))


def isposinf(input: Tensor) -> Tensor:
    """True where input is +inf.

    Args:
        input (Tensor): the input tensor."""
    return input.isinf() & (input > 0)


def isneginf(input: Tensor) -> Tensor:
    """True where input is -inf.

    Args:
        input (Tensor): the input tensor."""
    return input.isinf() & (input < 0)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: Optional[float] = None,
               neginf: Optional[float] = None) -> Tensor:
    r"""NaN -> ``nan``, +inf -> ``posinf`` (default: the dtype's max), -inf -> ``neginf``
    (default: the dtype's lowest); the gradient passes where the value is kept, 0 elsewhere.

    Args:
        input (Tensor): the input tensor.
        nan (Number, optional): the value to replace :literal:`NaN`\s with. Default: ``0.0``
        posinf (Number, optional): if a Number, the value to replace positive infinity values with. If
            None, positive infinity values are replaced with the greatest finite value representable by
            :attr:`input`'s dtype. Default: ``None``
        neginf (Number, optional): if a Number, the value to replace negative infinity values with. If
            None, negative infinity values are replaced with the lowest finite value representable by
            :attr:`input`'s dtype. Default: ``None``"""
    if not input.dtype.is_floating_point:
        return input.clone()
    big = finfo(input.dtype).max
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = where(input.isnan(), input.new_full((), nan), input)
    out = where(isposinf(input), input.new_full((), posinf), out)
    return where(isneginf(input), input.new_full((), neginf), out)


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal values, infinities
    included, are close; NaNs only with ``equal_nan``); both inputs must share a dtype.

    Args:
        input (Tensor): first tensor to compare.
        other (Tensor): second tensor to compare.
        rtol (float, optional): relative tolerance. Default: ``1e-05``
        atol (float, optional): absolute tolerance. Default: ``1e-08``
        equal_nan (bool, optional): if ``True``, then two ``NaN`` s will be considered equal. Default:
            ``False``"""
    other = _as_tensor(other, input)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = input.detach(), other.detach()
    close = a == b
    if equal_nan and a.dtype.is_floating_point:
        close = close | (a.isnan() & b.isnan())
    if not a.dtype.is_floating_point and a.dtype != bool_:
        a, b = a.double(), b.double()
    if a.dtype == bool_:
        return close
    finite = a.isfinite() & b.isfinite()
    within = (a - b).abs() <= (b.abs() * rtol + atol)
    return close | (finite & within)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when every element of input is close to other's (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


allclose.__doc__ = derived_doc(allclose.__doc__, isclose.__doc__)   # isclose's arguments


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same size and elements (values compared after type
    promotion, as PyTorch).

    Args:
        input (Tensor): first tensor to compare.
        other (Tensor): second tensor to compare."""
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool((input.detach() == other.detach()).all().item())


def isin(elements: Union[Tensor, Number], test_elements: Union[Tensor, Number], *,
         assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements`` (a bool tensor of elements'
    shape): a sorted search, O((n + m) log m).

    Args:
        elements (Tensor or Scalar): input elements.
        test_elements (Tensor or Scalar): values against which to test for each input element.

    Keyword args:
        assume_unique (bool, optional): if True, assumes both :attr:`elements` and :attr:`test_elements`
            contain unique elements, which can speed up the calculation. Default: ``False``
        invert (bool, optional): if True, inverts the boolean return tensor, resulting in True values
            for elements *not* in :attr:`test_elements`. Default: ``False``"""
    if not isinstance(elements, Tensor):
        elements = _as_tensor(elements, test_elements)
    if not isinstance(test_elements, Tensor):
        test_elements = _as_tensor(test_elements, elements)
    e = elements.detach()
    t = test_elements.detach().reshape(-1)
    if t.numel() == 0:
        found = e.new_zeros(tuple(e.shape), dtype=bool_)
    else:
        dt = promote_types(e.dtype, t.dtype)
        e, t = e.to(dt), t.to(dt)
        s, _ = t.sort()
        flat = e.reshape(-1)
        pos = _searchsorted(s, flat).clamp(max=s.numel() - 1)
        found = (s.index_select(0, pos) == flat).reshape(tuple(e.shape))
    return ~found if invert else found


def _searchsorted(sorted_seq: Tensor, values: Tensor) -> Tensor:
    # the counting/searching composites live above this layer (_numerics); a binary search in
    # log2(n) vectorized steps keeps this one self-contained
    n = sorted_seq.numel()
    lo = values.new_zeros(tuple(values.shape), dtype=int64)
    hi = lo + n
    for _ in range(max(1, n.bit_length())):
        mid = (lo + hi) // 2
        probe = sorted_seq.index_select(0, mid.clamp(max=n - 1))
        go_right = (probe < values) & (mid < n)
        lo = where(go_right, mid + 1, lo)
        hi = where(go_right, hi, mid)
    return lo



def _require_integer(op: str, *operands: Tensor) -> None:
    for t in operands:
        if t.dtype.is_floating_point or t.dtype == bool_:
            raise RuntimeError(f'"{op}" not implemented for \'{t.dtype.name}\' ({t.dtype.name}{list(t.shape)} on '
                               f'{t.device}): it takes integer tensors')


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The element-wise greatest common divisor (non-negative; ``gcd(0, 0) = 0``) of integer tensors,
    by Euclid's algorithm on all elements at once.

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    _require_integer("gcd", input, other)
    dtype = _result_dtype(input, other)
    shape = (input.detach() == other.detach()).shape   # the broadcast shape
    a, b = input.to(dtype).abs().expand(shape), other.to(dtype).abs().expand(shape)
    zero, one = _tensor(0, dtype=dtype, device=a.device), _tensor(1, dtype=dtype, device=a.device)
    while bool((b != 0).any()):
        nonzero = b != 0
        a, b = where(nonzero, b, a), where(nonzero, a.remainder(where(nonzero, b, one)), zero)
    return a.contiguous()


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The element-wise least common multiple (non-negative; 0 when either is 0) of integer tensors.

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    _require_integer("lcm", input, other)
    g = gcd(input, other)
    one = _tensor(1, dtype=g.dtype, device=g.device)
    return where(g != 0, input.to(g.dtype).abs() // where(g != 0, g, one) * other.to(g.dtype).abs(), g)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """Multiplies ``input`` by 2 to the power ``other`` (a floating result: float32 for integer operands).

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    dtype = _promoted_dtype(input, other)
    return input.to(dtype) * _tensor(2.0, dtype=dtype, device=input.device).pow(other)


def logit(input: Tensor, eps: Optional[float] = None) -> Tensor:
    """``log(p / (1 - p))``, with p clamped to [eps, 1 - eps] when eps is given.

    Args:
        input (Tensor): the input tensor.
        eps (float, optional): the epsilon for input clamp bound. If ``None``, inputs outside [0, 1]
            give NaN. Default: ``None``"""
    x = input if input.dtype.is_floating_point else input.float()   # 1 - x must not wrap in uint8
    p = x if eps is None else x.clamp(eps, 1 - eps)
    return (p / (1 - p)).log()


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores a NaN when the other value is a number.

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    return where(input.isnan(), other, where(other.isnan(), input, input.maximum(other)))


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores a NaN when the other value is a number.

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    return where(input.isnan(), other, where(other.isnan(), input, input.minimum(other)))


def fill(input: Tensor, value) -> Tensor:
    """Returns a tensor of the same shape, dtype and device as ``input`` filled with ``value``
    (differentiable: the gradient to ``input`` is zero).

    Args:
        input (Tensor): the input tensor.
        value (Number or 0-dim Tensor): the fill value."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    fill_value = value.to(input.dtype) if isinstance(value, Tensor) else value
    keep_none = zeros(tuple(input.shape), dtype="bool", device=input.device)
    return input.where(keep_none, fill_value)   # a select: NaN/inf in input don't leak; gradients go to value


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Applies ``max(0, x) + weight * min(0, x)`` element-wise, ``weight`` per channel (dim 1; dim 0 for
    1-D input) or shared.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the learnable slopes, one or one per channel."""
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() >= 2 else input.shape[0]
        if weight.numel() != channels:
            raise RuntimeError(f"prelu: mismatch in parameter count: weight has {weight.numel()} elements, input "
                               f"{list(input.shape)} has {channels} channels")
        shape = [1] * input.dim()
        shape[1 if input.dim() >= 2 else 0] = channels
        weight = weight.reshape(shape)
    return where(input > 0, input, input * weight)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Applies the hard shrinkage function element-wise: ``x`` where ``|x| > lambd``, else 0.

    Args:
        input (Tensor): the input tensor.
        lambd (float): the :math:`\\lambda` value for the Hardshrink formulation. Default: ``0.5``."""
    return input * (input.abs() > lambd)
