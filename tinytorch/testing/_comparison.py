"""``assert_close``: PyTorch's comparison of tensors, scalars and their sequences and mappings,
with its default tolerances per dtype and its error messages.

The values are compared on the host in float64 (floating inputs) or int64 (integer and bool
inputs), as PyTorch promotes before comparing, so the differences reported are the ones PyTorch
reports."""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from typing import Any, Callable, List, NoReturn, Optional, Tuple, Union

import numpy as np

from tinytorch._core.dtype import bfloat16, float16, float32, float64, int64, promote_types
from tinytorch._tensor.creation import as_tensor
from tinytorch._tensor.tensor import Tensor

# {dtype: (rtol, atol)}; every other dtype compares exactly
_DTYPE_PRECISIONS = {
    float16: (1e-3, 1e-5),
    bfloat16: (1.6e-2, 1e-5),
    float32: (1.3e-6, 1e-5),
    float64: (1e-7, 1e-7),
}
# Python numbers compare as the dtype they stand for: int as int64, float as float64, complex as complex128
_NUMBER_PRECISIONS = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}

Message = Optional[Union[str, Callable[[str], str]]]


class _ErrorMeta(Exception):
    """A failure found while comparing, turned into the user's exception by ``to_error``."""

    def __init__(self, type: type, msg: str, *, id: Tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg: Message = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """The pair type can't handle these inputs; the next one is tried."""


def default_tolerances(*inputs: Any) -> Tuple[float, float]:
    """The loosest default (rtol, atol) of the inputs' dtypes (tensors or dtypes)."""
    dtypes = [x.dtype if isinstance(x, Tensor) else x for x in inputs]
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(defaults: Tuple[float, float], rtol: Optional[float], atol: Optional[float],
                id: Tuple[Any, ...]) -> Tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        # only one given could pass surprisingly (atol=0 but rtol>0 still lets values through)
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return defaults


def _mismatch_msg(*, default_identifier: str, identifier: Message, extra: Optional[str], abs_diff: Any,
                  abs_diff_idx: Optional[tuple], atol: float, rel_diff: Any, rel_diff_idx: Optional[tuple],
                  rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind: str, diff: Any, idx: Optional[tuple], tol: float) -> str:
        if idx is None:
            msg = f"{kind.title()} difference: {diff}"
        else:
            msg = f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual: Any, expected: Any, *, rtol: float, atol: float, identifier: Message = None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(default_identifier="Scalars", identifier=identifier,
                         extra=f"Expected {expected} but got {actual}.", abs_diff=abs_diff, abs_diff_idx=None,
                         atol=atol, rel_diff=rel_diff, rel_diff_idx=None, rtol=rtol)


def _tensor_mismatch_msg(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray, *, rtol: float,
                         atol: float) -> str:
    shape = matches.shape

    def unravel(flat: int) -> tuple:
        return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()

    total = matches.size
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, b, m = actual.reshape(-1), expected.reshape(-1), matches.reshape(-1)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - b)
        abs_diff[m] = 0
        # PyTorch divides integer differences in the default float dtype (float32)
        rel_diff = (abs_diff / np.abs(b)) if a.dtype.kind == "f" else \
            abs_diff.astype(np.float32) / np.abs(b).astype(np.float32)
        rel_diff[m] = 0
    abs_idx, rel_idx = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    return _mismatch_msg(default_identifier="Tensor-likes", identifier=None, extra=extra,
                         abs_diff=abs_diff[abs_idx].item(), abs_diff_idx=unravel(abs_idx), atol=atol,
                         rel_diff=rel_diff[rel_idx].item(), rel_diff_idx=unravel(rel_idx), rtol=rtol)


class _Pair:
    def __init__(self, actual: Any, expected: Any, id: Tuple[Any, ...]) -> None:
        self.actual, self.expected, self.id = actual, expected, id

    def _fail(self, type: type, msg: str) -> NoReturn:
        raise _ErrorMeta(type, msg, id=self.id)


class _NonePair(_Pair):
    def __init__(self, actual: Any, expected: Any, *, id: Tuple[Any, ...], **options: Any) -> None:
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, id)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual: Any, expected: Any, *, id: Tuple[Any, ...], **options: Any) -> None:
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), id)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(self, actual: Any, expected: Any, *, id: Tuple[Any, ...], rtol: Optional[float] = None,
                 atol: Optional[float] = None, equal_nan: bool = False, check_dtype: bool = False,
                 **options: Any) -> None:
        if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        super().__init__(actual, expected, id)
        r, a = zip(*(_NUMBER_PRECISIONS[type(x)] for x in (actual, expected)))
        self.rtol, self.atol = _tolerances((max(r), max(a)), rtol, atol, id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self) -> None:
        if self.check_dtype and type(self.actual) is not type(self.expected):
            self._fail(AssertionError,
                       f"The (d)types do not match: {type(self.actual)} != {type(self.expected)}.")
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(self.expected):
            return
        self._fail(AssertionError, _scalar_mismatch_msg(self.actual, self.expected, rtol=self.rtol, atol=self.atol))


class _TensorLikePair(_Pair):
    def __init__(self, actual: Any, expected: Any, *, id: Tuple[Any, ...], allow_subclasses: bool = True,
                 rtol: Optional[float] = None, atol: Optional[float] = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, **options: Any) -> None:
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id)
        self.rtol, self.atol = _tolerances(default_tolerances(actual, expected), rtol, atol, id)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(x: Any) -> Tensor:
        if isinstance(x, Tensor):
            return x
        try:
            return as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual: Tensor, expected: Tensor) -> None:
        def mismatch(name: str, a: Any, e: Any) -> NoReturn:
            self._fail(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        if actual.layout != expected.layout:
            if self.check_layout:
                mismatch("layout", actual.layout, expected.layout)
        elif self.check_stride and actual.stride() != expected.stride():
            mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            mismatch("dtype", actual.dtype, expected.dtype)

    @staticmethod
    def _equalize_attributes(actual: Tensor, expected: Tensor) -> Tuple[Tensor, Tensor]:
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            dtype = promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(dtype), expected.to(dtype)
        return actual, expected

    @staticmethod
    def _host_values(t: Tensor) -> np.ndarray:
        """The tensor's values in float64 (floating dtypes) or int64 (integers, bool), on the host."""
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        return t.to(float64 if t.is_floating_point() else int64).numpy()

    def _compare_values(self, actual: Tensor, expected: Tensor) -> None:
        a, b = self._host_values(actual), self._host_values(expected)
        rtol, atol = self.rtol, self.atol
        with np.errstate(all="ignore"):
            if rtol == 0 and atol == 0:
                matches = a == b
                if self.equal_nan and a.dtype.kind == "f":
                    matches |= np.isnan(a) & np.isnan(b)
            else:
                matches = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=self.equal_nan)
        matches = np.asarray(matches)
        if matches.all():
            return
        if a.ndim == 0:
            msg = _scalar_mismatch_msg(a.item(), b.item(), rtol=rtol, atol=atol)
        else:
            msg = _tensor_mismatch_msg(a, b, matches, rtol=rtol, atol=atol)
        self._fail(AssertionError, msg)


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _originate_pairs(actual: Any, expected: Any, *, id: Tuple[Any, ...] = (), **options: Any) -> List[_Pair]:
    # str is excluded from sequences: "a"[0][0]... would never end
    if (isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str)
            and isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError,
                             f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id=id)
        pairs = []
        for i in range(len(actual)):
            pairs.extend(_originate_pairs(actual[i], expected[i], id=(*id, i), **options))
        return pairs
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _ErrorMeta(AssertionError,
                             "The keys of the mappings do not match:\n"
                             f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                             f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}", id=id)
        keys: Any = actual_keys
        with contextlib.suppress(Exception):   # deterministic order where the keys sort
            keys = sorted(keys)
        pairs = []
        for k in keys:
            pairs.extend(_originate_pairs(actual[k], expected[k], id=(*id, k), **options))
        return pairs
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except _Unsupported:
            continue
    raise _ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                     f"and {type(expected)}.", id=id)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: Optional[float] = None,
                 atol: Optional[float] = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: Message = None) -> None:
    r"""Asserts that ``actual`` and ``expected`` are close.

    Tensors (and tensor-likes such as numpy arrays, converted with ``as_tensor``; their types must
    be directly related) are close if they have the same shape, device (``check_device``), dtype
    (``check_dtype``), layout (``check_layout``) and stride (``check_stride``), and

    .. math::
        \lvert \text{actual} - \text{expected} \rvert \le \texttt{atol}
        + \texttt{rtol} \cdot \lvert \text{expected} \rvert

    elementwise. Non-finite values are close only if equal; NaNs are equal to each other only with
    ``equal_nan``. Python scalars compare by value (their types must match unless
    ``check_dtype=False``); sequences and mappings are close if their structure matches and their
    elements are close.

    Default tolerances, by dtype (the loosest of the two inputs): float16 rtol 1e-3 atol 1e-5,
    bfloat16 1.6e-2 / 1e-5, float32 1.3e-6 / 1e-5, float64 1e-7 / 1e-7, every other dtype 0 / 0.

    Args:
        actual (Any): Actual input.
        expected (Any): Expected input.
        allow_subclasses (bool): if ``True`` (default), inputs of directly related types are allowed;
            otherwise their types must be equal.
        rtol (float, optional): relative tolerance; if given ``atol`` must be given too.
        atol (float, optional): absolute tolerance; if given ``rtol`` must be given too.
        equal_nan (bool): if ``True``, two NaNs are considered equal.
        check_device (bool): if ``True`` (default), tensors must be on the same device; otherwise
            they are compared on the CPU.
        check_dtype (bool): if ``True`` (default), tensors must have the same dtype; otherwise they
            are promoted to a common dtype first.
        check_layout (bool): if ``True`` (default), tensors must have the same layout.
        check_stride (bool): if ``True``, strided tensors must have the same stride.
        msg (str or Callable[[str], str], optional): the message of the error on a mismatch; a
            callable gets the generated message and returns the one to raise.

    Raises:
        ValueError: if only one of ``rtol`` and ``atol`` is given.
        TypeError: if no comparison handles the inputs' types.
        AssertionError: if the inputs are not close (the message counts the mismatched elements
            and gives the greatest absolute and relative differences and their index)."""
    __tracebackhide__ = True   # noqa: F841  (pytest hides this frame)
    try:
        pairs = _originate_pairs(actual, expected, allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                                 equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                                 check_layout=check_layout, check_stride=check_stride)
    except _ErrorMeta as meta:
        raise meta.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _ErrorMeta as meta:
            raise meta.to_error(msg) from None


def assert_allclose(actual: Any, expected: Any, rtol: Optional[float] = None, atol: Optional[float] = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (as in PyTorch): use ``assert_close``. Compares as ``assert_close`` with
    ``check_dtype=False`` and looser default tolerances (float16 1e-3/1e-3, float32 1e-4/1e-5,
    float64 1e-5/1e-8)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = as_tensor(expected).to(actual.dtype)
    if rtol is None and atol is None:
        loose = {float16: (1e-3, 1e-3), float32: (1e-4, 1e-5), float64: (1e-5, 1e-8)}
        r, a = zip(*(loose.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)))
        rtol, atol = max(r), max(a)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
