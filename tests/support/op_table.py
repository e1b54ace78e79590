"""The op-table test rows, read from the op schema (codegen/ops.py): every row with a numpy reference
(the elementwise rows, and the reductions, shape ops and composites that carry a ``ref``), how to call
it, its input range and which checks apply. tests/ops/elementwise/test_op_table.py
runs them."""
from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

import tinytorch as tt

_CODEGEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codegen")
sys.path.insert(0, _CODEGEN)
from ops import SCHEMA  # noqa: E402
sys.path.remove(_CODEGEN)

_erf = np.vectorize(math.erf, otypes=[float])


def _erfinv_scalar(y: float) -> float:
    """float64 erfinv by Newton's method on math.erf from 0 (erf is concave on either side of 0,
    so the iterates approach the root from below without overshooting)."""
    if abs(y) >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    x = 0.0
    for _ in range(100):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-17:
            break
    return x


_erfinv = np.vectorize(_erfinv_scalar, otypes=[float])
# names a schema `ref` expression may use
REF_NAMES = {"np": np, "math": math, "erf": _erf, "erfinv": _erfinv, "sigmoid": lambda x: 1 / (1 + np.exp(-x))}


@dataclass
class Row:
    name: str
    call: Callable                  # tinytorch function of one or two tensors
    ref: Callable                   # numpy float64 function of the same
    domain: tuple
    differentiable: bool
    fused: Optional[str]            # a fused backward kernel to test against the formula
    binary: bool
    bool_result: bool


def _unary_call(u):
    if u.public is True:
        return getattr(tt, u.name)
    return getattr(tt._ops.elementwise, u.name)


def _rows() -> list:
    rows = []
    for u in SCHEMA.unary:
        if u.ref is None:
            continue
        call = (lambda x: tt.nn.functional.gelu(x, approximate="tanh")) if u.name == "gelu_tanh" else _unary_call(u)
        rows.append(Row(u.name, call, eval(f"lambda x: {u.ref}", REF_NAMES), u.domain, u.grad is not None,
                        u.fused, False, u.dtypes == "predicate"))
    for b in SCHEMA.binary:
        if b.ref is None:
            continue
        call = getattr(tt, b.name)
        rows.append(Row(b.name, call, eval(f"lambda x, y: {b.ref}", REF_NAMES), b.domain, bool(b.grad), None, True,
                        b.dtypes in ("compare", "logical")))
    for o in SCHEMA.ops:           # hand-written or composite ops that carry a reference
        if o.ref is None:
            continue
        binary = re.search(r"\by\b", o.ref) is not None
        ref = eval(f"lambda x, y: {o.ref}" if binary else f"lambda x: {o.ref}", REF_NAMES)
        rows.append(Row(o.name, getattr(tt, o.name), ref, o.domain, o.grad != "none", None, binary, False))
    return rows


ROWS = {r.name: r for r in _rows()}
DIFFERENTIABLE = sorted(n for n, r in ROWS.items() if r.differentiable)
FUSED = sorted(n for n, r in ROWS.items() if r.fused)
