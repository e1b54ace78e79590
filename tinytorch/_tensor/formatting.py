"""PyTorch's ``repr`` for tensors (torch/_tensor_str.py's rules on numpy values): one formatter
per tensor picks integer, fixed (``precision`` digits) or scientific notation from the nonzero
finite values and pads every element to a common width; lines wrap at ``linewidth``; tensors with
more than ``threshold`` elements show ``edgeitems`` at each end; empty tensors that are not 1-D
show ``size=``. ``set_printoptions`` changes the options, as ``torch.set_printoptions``."""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

from tinytorch._core.dtype import get_default_dtype

_DEFAULT_NAMES = ("int64", "bool")


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision: Optional[int] = None, threshold: Optional[float] = None,
                     edgeitems: Optional[int] = None, linewidth: Optional[int] = None,
                     profile: Optional[str] = None, sci_mode: Optional[bool] = None) -> None:
    """Set options for printing (as ``torch.set_printoptions``).

    Args:
        precision: number of digits of precision for floating point output (default 4).
        threshold: total number of array elements which trigger summarization (default 1000).
        edgeitems: number of array items in summary at beginning and end of each dimension (default 3).
        linewidth: the number of characters per line (default 80).
        profile: sane defaults for pretty printing: "default", "short" or "full".
        sci_mode: enable (True) or disable (False) scientific notation; None lets the formatter choose."""
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
        else:
            raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', got {profile!r}")
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as a dict ``set_printoptions`` accepts."""
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """Chooses the notation and the common width from all (summarized) values."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        p = PRINT_OPTS.precision
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return
        a = np.abs(nz)
        lo, hi = float(a.min()), float(a.max())
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        vals = nz.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in vals)
        self.max_width = max(self.max_width, 1)

    def format(self, v) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return (self.max_width - len(s)) * " " + s


class _ComplexFormatter:
    """torch's pair of formatters for complex values: one for the real parts, one for the imaginary
    parts, each element shown as ``re+imj``."""

    def __init__(self, values: np.ndarray) -> None:
        self.re, self.im = _Formatter(values.real, True), _Formatter(values.imag, True)
        self.max_width = self.re.max_width + self.im.max_width + 1   # the element width, with its "j"

    def format(self, v) -> str:
        real_str = self.re.format(v.real)
        imag_str = (self.im.format(v.imag) + "j").lstrip()
        return real_str + imag_str if imag_str[0] in "+-" else real_str + "+" + imag_str


def _summarized(a: np.ndarray) -> np.ndarray:
    """The values shown when summarizing: edgeitems at each end of every dimension."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return a[tuple(slice(0, 0) for _ in range(a.ndim))]
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = [_tensor_str(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + \
                 [_tensor_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - e, a.shape[0])]
    else:
        slices = [_tensor_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last_line_len + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last_line_len = indent + len(s)
        else:
            parts.append(", " + s)
            last_line_len += len(s) + 2
    return "".join(parts) + ")"


def _numpy_values(t) -> np.ndarray:
    t = t.detach()
    if t.dtype._np is None:   # bfloat16, float8: numpy has no such type
        t = t.float()
    a = t.cpu().numpy()
    return a.astype(np.float64) if t.dtype.is_floating_point else a.astype(np.complex128) if t.dtype.is_complex else a


def tensor_repr(t) -> str:
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = get_default_dtype().name
    default_complex = "complex128" if default == "float64" else "complex64"
    if t.device.type == "meta":  # no values to show, as torch
        suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype.name != default:
            suffixes.append(f"dtype=tinytorch.{t.dtype.name}")
        body = "..."
    elif t.numel() == 0:
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype.name != default:
            suffixes.append(f"dtype=tinytorch.{t.dtype.name}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype.name not in _DEFAULT_NAMES and t.dtype.name not in (default, default_complex):
            suffixes.append(f"dtype=tinytorch.{t.dtype.name}")
        a = _numpy_values(t)
        summarize = a.size > PRINT_OPTS.threshold
        shown = _summarized(a) if summarize else a
        fmt = _ComplexFormatter(shown) if t.dtype.is_complex else _Formatter(shown, t.dtype.is_floating_point)
        body = _tensor_str(a, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
