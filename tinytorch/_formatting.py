"""PyTorch-like ``repr`` for tensors."""
from __future__ import annotations

import numpy as np

_DEFAULT_NAMES = ("float32", "int64", "bool")


def tensor_repr(t) -> str:
    arr = np.asarray(t.detach().cpu().float() if t.dtype.name == "bfloat16" else t.detach().cpu())
    if t.dtype.is_floating_point:
        body = _format_float(arr)
    else:
        body = np.array2string(arr, separator=", ", threshold=1000, edgeitems=3, prefix="tensor(",
                               formatter={"bool": lambda b: "True" if b else "False"})
    extras = []
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.dtype.name not in _DEFAULT_NAMES or (t.numel() == 0 and t.dtype.name != "float32"):
        extras.append(f"dtype=tinytorch.{t.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _format_float(arr: np.ndarray) -> str:
    arr = arr.astype(np.float64)
    finite = arr[np.isfinite(arr)]
    integral = finite.size > 0 and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8
    big = finite.size > 0 and (np.abs(finite).max() >= 1e8 or (np.abs(finite[finite != 0]).min(initial=1) < 1e-4))
    if integral:
        fmt = lambda x: f"{x:.0f}." if np.isfinite(x) else str(x)
    elif big:
        fmt = lambda x: f"{x:.4e}"
    else:
        fmt = lambda x: f"{x:.4f}"
    return np.array2string(arr.astype(np.float64), separator=", ", threshold=1000, edgeitems=3,
                           prefix="tensor(", formatter={"float_kind": fmt})
