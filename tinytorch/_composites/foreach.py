"""``torch._foreach_*``: an op applied to every tensor of a list (what optimizers written against
PyTorch call: ``_foreach_mul_(params, 1 - lr * wd)``, ``_foreach_lerp_(bufs, grads, 1 - momentum)``).

Each is the per-tensor op in a loop, so the out-of-place forms are differentiable wherever the per-tensor
op is, and the in-place forms refuse what the per-tensor in-place op refuses (a leaf that requires grad,
a result dtype that can't be written back). The one fused kernel used is the multi-tensor sum of squares
of ``clip_grad_norm_``, for ``_foreach_norm``'s 2-norm.

The functions come from one table (``_OPS``): a row names the per-tensor op, its in-place form and the
operands after the tensor list, with the forms PyTorch's overloads accept for each:

* a Python number used for every tensor (``Scalar``),
* a list of numbers, one per tensor (``ScalarList``),
* a list of tensors, one per tensor (``List``),
* a 0-d tensor used for every tensor (``Tensor``; add, mul and div),
* a 1-D tensor of numbers, one per tensor (addcmul's and addcdiv's ``Tensor``).

Every row gives ``_foreach_<name>`` (returns a new list) and ``_foreach_<name>_`` (modifies the tensors
of the list and returns None), as PyTorch."""
from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tinytorch import _C
from tinytorch._composites import pointwise as _pointwise
from tinytorch._composites.forms import make_inplace
from tinytorch._core.graph import is_grad_enabled
from tinytorch._core.tensor_base import _wrap
from tinytorch._ops import elementwise as _E
from tinytorch._ops import reduce as _R
from tinytorch._tensor.tensor import Tensor

# The forms of an operand (see the module docstring).
SCALAR, SCALAR_LIST, TENSOR_LIST, TENSOR, SCALAR_TENSOR = "Scalar", "ScalarList", "List", "Tensor", "ScalarTensor"
_ARITH = frozenset({SCALAR, SCALAR_LIST, TENSOR_LIST, TENSOR})
_BINARY = frozenset({SCALAR, SCALAR_LIST, TENSOR_LIST})
_TENSORS = frozenset({TENSOR_LIST})
_COEF = frozenset({SCALAR, SCALAR_LIST, SCALAR_TENSOR})
_REQUIRED = inspect.Parameter.empty


def _maximum(input: Tensor, other) -> Tensor:
    # a number bound is clamp_min, as PyTorch's _foreach_maximum.Scalar
    return _E.maximum(input, other) if isinstance(other, Tensor) else _E.clamp_min(input, other)


def _minimum(input: Tensor, other) -> Tensor:
    return _E.minimum(input, other) if isinstance(other, Tensor) else _E.clamp_max(input, other)


def _addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, value=1) -> Tensor:
    return _pointwise.addcmul(input, tensor1, tensor2, value=value)


def _addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, value=1) -> Tensor:
    return _pointwise.addcdiv(input, tensor1, tensor2, value=value)


@dataclass(frozen=True)
class _Op:
    """One row: ``fn`` (the per-tensor op, None when there is only an in-place form) and ``inplace`` (its
    in-place form; None: computed by fn and copied back), the operands after the tensor list as
    (name, accepted forms, default), keyword-only arguments with defaults, and the formula for the docs."""
    name: str
    fn: Optional[Callable]
    inplace: Optional[Callable]
    operands: Tuple[Tuple[str, frozenset, object], ...] = ()
    keywords: Dict[str, object] = field(default_factory=dict)
    formula: str = ""
    scalar_self: bool = False    # self may be a number, combined with each tensor of the first operand


_OPS = [
    _Op("add", _E.add, _E.add_, (("other", _ARITH, _REQUIRED),), {"alpha": 1}, "self[i] + alpha * other[i]"),
    _Op("sub", _E.sub, _E.sub_, (("other", _BINARY, _REQUIRED),), {"alpha": 1}, "self[i] - alpha * other[i]"),
    _Op("mul", _E.mul, _E.mul_, (("other", _ARITH, _REQUIRED),), formula="self[i] * other[i]"),
    _Op("div", _E.div, _E.div_, (("other", _ARITH, _REQUIRED),), formula="self[i] / other[i]"),
    _Op("addcmul", _addcmul, make_inplace(_addcmul, "addcmul_"),
        (("tensor1", _TENSORS, _REQUIRED), ("tensor2", _TENSORS, _REQUIRED), ("value", _COEF, 1)),
        formula="self[i] + value[i] * tensor1[i] * tensor2[i]"),
    _Op("addcdiv", _addcdiv, make_inplace(_addcdiv, "addcdiv_"),
        (("tensor1", _TENSORS, _REQUIRED), ("tensor2", _TENSORS, _REQUIRED), ("value", _COEF, 1)),
        formula="self[i] + value[i] * tensor1[i] / tensor2[i]"),
    _Op("lerp", _pointwise.lerp, make_inplace(_pointwise.lerp, "lerp_"),
        (("tensors1", _TENSORS, _REQUIRED), ("weight", _BINARY, _REQUIRED)),
        formula="self[i] + weight[i] * (tensors1[i] - self[i])"),
    _Op("maximum", _maximum, None, (("other", _BINARY, _REQUIRED),), formula="maximum(self[i], other[i])"),
    _Op("minimum", _minimum, None, (("other", _BINARY, _REQUIRED),), formula="minimum(self[i], other[i])"),
    _Op("clamp_min", _E.clamp_min, _E.clamp_min_, (("other", _BINARY, _REQUIRED),),
        formula="clamp_min(self[i], other[i])"),
    _Op("clamp_max", _E.clamp_max, _E.clamp_max_, (("other", _BINARY, _REQUIRED),),
        formula="clamp_max(self[i], other[i])"),
    _Op("pow", _E.pow, _E.pow_, (("exponent", _BINARY, _REQUIRED),), formula="self[i] ** exponent[i]",
        scalar_self=True),
    _Op("neg", _E.neg, _E.neg_, formula="-self[i]"),
    _Op("sqrt", _E.sqrt, _E.sqrt_, formula="sqrt(self[i])"),
    _Op("abs", _E.abs, _E.abs_, formula="abs(self[i])"),
    _Op("exp", _E.exp, _E.exp_, formula="exp(self[i])"),
    _Op("sign", _E.sign, _E.sign_, formula="sign(self[i])"),
    _Op("reciprocal", _E.reciprocal, _E.reciprocal_, formula="1 / self[i]"),
    _Op("copy", None, _E.copy_, (("src", _TENSORS, _REQUIRED),), {"non_blocking": False}, "src[i]"),
    _Op("zero", None, _E.zero_, formula="0"),
]


def _tensor_list(op: str, tensors) -> List[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'self' must be a list or tuple of Tensors, got {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}: Tensor list must have at least one tensor.")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected a list of Tensors, got {type(t).__name__} at index {i}")
    return list(tensors)


def _spread(op: str, what: str, value, forms: frozenset, n: int) -> list:
    """value as one operand per tensor of an n-tensor list, in one of the forms PyTorch's overloads accept."""
    if isinstance(value, Tensor):
        if TENSOR in forms:
            if value.dim() != 0 or value.numel() != 1:
                raise RuntimeError(f"{op}: scalar tensor `{what}` expected to be 0 dim but it has {value.dim()} "
                                   f"dimensions and {value.numel()} elements.")
            return [value] * n
        if SCALAR_TENSOR in forms:
            if value.dim() != 1:
                raise RuntimeError(f"{op}: `{what}` expected to be a 1-D tensor of scalars, one per tensor, "
                                   f"got shape {tuple(value.shape)}")
            value = value.tolist()
            if len(value) != n:
                raise RuntimeError(f"{op}: Tensor list must have same number of elements as scalar list, "
                                   f"got {n} and {len(value)}.")
            return value
    elif isinstance(value, (list, tuple)):
        is_tensor = [isinstance(v, Tensor) for v in value]
        if all(is_tensor) and value and TENSOR_LIST in forms:
            if len(value) != n:
                raise RuntimeError(f"{op}: Tensor lists must have the same number of tensors, got {n} and "
                                   f"{len(value)}.")
            return list(value)
        if not any(is_tensor) and SCALAR_LIST in forms and all(isinstance(v, numbers.Number) for v in value):
            if len(value) != n:
                raise RuntimeError(f"{op}: Tensor list must have same number of elements as scalar list, "
                                   f"got {n} and {len(value)}.")
            return list(value)
        if not value and n and forms & {TENSOR_LIST, SCALAR_LIST}:
            raise RuntimeError(f"{op}: Tensor lists must have the same number of tensors, got {n} and 0.")
    elif isinstance(value, numbers.Number) and SCALAR in forms:
        return [value] * n
    accepted = " or ".join(_FORM_WORDS[f] for f in _FORM_ORDER if f in forms)
    raise TypeError(f"{op}(): argument '{what}' must be {accepted}, got {_describe(value)}")


_FORM_ORDER = (SCALAR, SCALAR_LIST, TENSOR_LIST, TENSOR, SCALAR_TENSOR)
_FORM_WORDS = {SCALAR: "a number", SCALAR_LIST: "a list of numbers", TENSOR_LIST: "a list of Tensors",
               TENSOR: "a 0-d Tensor", SCALAR_TENSOR: "a 1-D Tensor of numbers"}


def _describe(value) -> str:
    if isinstance(value, Tensor):
        return f"a Tensor of shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {', '.join(sorted({type(v).__name__ for v in value})) or 'nothing'}"
    return type(value).__name__


def _signature(row: _Op, inplace: bool) -> inspect.Signature:
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD, annotation="List[Tensor]")]
    params += [P(name, P.POSITIONAL_OR_KEYWORD, default=default) for name, _, default in row.operands]
    params += [P(name, P.KEYWORD_ONLY, default=default) for name, default in row.keywords.items()]
    return inspect.Signature(params, return_annotation="None" if inplace else "List[Tensor]")


def _make(row: _Op, inplace: bool) -> Callable:
    name = f"_foreach_{row.name}" + ("_" if inplace else "")
    sig = _signature(row, inplace)
    per_tensor = row.inplace if inplace else row.fn
    if per_tensor is None:   # in place: computed out of place and copied back (PyTorch's checks included)
        per_tensor = make_inplace(row.fn, f"{row.name}_")

    def foreach(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}(): {e}") from None
        bound.apply_defaults()
        values = bound.arguments
        if row.scalar_self and not inplace and isinstance(values["self"], numbers.Number):
            # PyTorch's ScalarAndTensor overload: a number and a list of tensors
            return [row.fn(values["self"], t) for t in _tensor_list(name, values[row.operands[0][0]])]
        tensors = _tensor_list(name, values["self"])
        n = len(tensors)
        operands = [_spread(name, what, values[what], forms, n) for what, forms, _ in row.operands]
        keywords = {k: values[k] for k in row.keywords}
        results = [per_tensor(t, *ops, **keywords) for t, *ops in zip(tensors, *operands)]
        return None if inplace else results

    foreach.__name__ = foreach.__qualname__ = name
    foreach.__signature__ = sig
    summary = (f"``self[i] = {row.formula}`` for every tensor ``self[i]`` of the list, in place; returns None."
               if inplace else
               f"``{row.formula}`` for every tensor ``self[i]`` of the list; returns the list of results.")
    foreach.__doc__ = summary + "\n\n" + _operand_doc(row, inplace)
    return foreach


def _operand_doc(row: _Op, inplace: bool) -> str:
    self_doc = "the tensors" + (f", or a number combined with each tensor of ``{row.operands[0][0]}``"
                                if row.scalar_self and not inplace else "")
    lines = ["Args:", f"    self (List[Tensor]): {self_doc}."]
    for what, forms, default in row.operands:
        accepted = ", ".join(_FORM_WORDS[f] for f in _FORM_ORDER if f in forms)
        suffix = "" if default is _REQUIRED else f" Default: ``{default}``"
        lines.append(f"    {what}: {accepted}.{suffix}")
    return "\n".join(lines)


__all__ = []
for _row in _OPS:
    for _inplace in ((False, True) if _row.fn is not None else (True,)):
        _f = _make(_row, _inplace)
        globals()[_f.__name__] = _f
        __all__.append(_f.__name__)
del _row, _inplace, _f


def _foreach_norm(self: Sequence[Tensor], ord=2, dtype=None) -> List[Tensor]:
    """The ``ord``-norm of every tensor of the list (each tensor flattened), as 0-d tensors of the tensor's
    dtype (or ``dtype``, in which it is then computed).

    Args:
        self (List[Tensor]): the tensors.
        ord (Number, optional): the order of the norm. Default: ``2``
        dtype (tinytorch.dtype, optional): the dtype of the results. Default: each tensor's."""
    op = "_foreach_norm"
    tensors = _tensor_list(op, self)
    if dtype is not None:
        tensors = [t if t.dtype == dtype else t.to(dtype) for t in tensors]
    out: List[Optional[Tensor]] = [None] * len(tensors)
    if ord == 2:
        # The multi-tensor sum of squares (one pass over the whole list) where it applies: contiguous
        # floating tensors outside autograd, grouped by device and dtype.
        groups: Dict[tuple, List[int]] = {}
        tracking = is_grad_enabled()
        for i, t in enumerate(tensors):
            if t.dtype.is_floating_point and t.is_contiguous() and not (tracking and t.requires_grad):
                groups.setdefault((t.device, t.dtype), []).append(i)
        for (_, group_dtype), idx in groups.items():
            sums = _wrap(_C.multi_sum_squares([tensors[i]._impl for i in idx]))
            for i, norm in zip(idx, sums.sqrt().to(group_dtype).unbind(0)):
                out[i] = norm
    for i, t in enumerate(tensors):
        if out[i] is None:
            out[i] = _R.norm(t, ord)
    return out


__all__ += ["_foreach_norm"]
