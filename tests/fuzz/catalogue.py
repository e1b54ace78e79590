"""What the op fuzzer calls: every op-table row (codegen/ops.py via tests/support/op_table.py) plus the ops
with dims, indices, shapes and sizes, each with an argument generator that also draws bad values
(out-of-range dims and indices, negative or overflowing sizes) and, where numpy has one, a float64
reference for the CI tier. The long tier calls torch's op of the same name instead."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from support.op_table import ROWS  # noqa: E402


@dataclass
class Entry:
    name: str                          # case["op"]
    call: str                          # "top": mod.<attr>, "F": mod.nn.functional.<attr>, "method"
    attr: str                          # the function's name there
    n_in: int = 1                      # tensor inputs, broadcast together
    args: Optional[Callable] = None    # (draw, shapes) -> (args, kwargs); may draw bad values
    ref: Optional[Callable] = None     # numpy: (arrays, *args, **kwargs) -> array or tuple
    domain: tuple = (-3.0, 3.0)
    ties: bool = False                 # index results are ambiguous when inputs repeat values
    tensor_list: bool = False          # the inputs go in as one list (cat, stack)
    shape_only: bool = False           # creation ops: no tensor inputs, the args are sizes
    ref_finite: bool = False           # the numpy reference is only right on finite inputs
    ref_squares: bool = False          # sums squares: past sqrt(float32 max) the kernels' float32 sums
                                       # overflow (as torch's do) where the float64 reference does not


# --- argument generators ------------------------------------------------------------------------
def _dim(draw, nd, st):
    lim = max(nd, 1)
    return draw(st.integers(-lim - 1, lim))         # one past each end: out of range on purpose


def _maybe_dim(draw, shapes, st, keep=True):
    nd = len(shapes[0])
    kw = {}
    choice = draw(st.sampled_from(["none", "int", "tuple"] if nd else ["none", "int"]))
    if choice == "int":
        kw["dim"] = _dim(draw, nd, st)
    elif choice == "tuple":
        kw["dim"] = tuple(draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd)))
    if keep and "dim" in kw and draw(st.booleans()):
        kw["keepdim"] = True
    return [], kw


def _dim_required(draw, shapes, st):
    return [], {"dim": _dim(draw, len(shapes[0]), st)}


def _argdim(draw, shapes, st):
    nd = len(shapes[0])
    kw = {}
    if draw(st.booleans()):
        kw["dim"] = _dim(draw, nd, st)
        if draw(st.booleans()):
            kw["keepdim"] = True
    return [], kw


def _two_dims(draw, shapes, st):
    nd = len(shapes[0])
    return [_dim(draw, nd, st), _dim(draw, nd, st)], {}


def _perm(draw, shapes, st):
    nd = len(shapes[0])
    perm = list(draw(st.permutations(range(nd))))
    if nd and draw(st.integers(0, 5)) == 0:
        perm[0] = perm[-1]                          # a repeated dim: must raise
    return [perm], {}


def _reshape(draw, shapes, st):
    n = int(np.prod(shapes[0]))
    opts = [[n], [-1], [1, n], [n, 1, -1]] + ([[2, -1]] if n % 2 == 0 else [[n + 1]]) + [[-1, -1], [0, -1]]
    return [draw(st.sampled_from(opts))], {}


def _narrow(draw, shapes, st):
    nd = len(shapes[0])
    return [_dim(draw, nd, st), draw(st.integers(-3, 4)), draw(st.integers(-1, 4))], {}


def _select(draw, shapes, st):
    return [_dim(draw, len(shapes[0]), st), draw(st.integers(-5, 5))], {}


def _flip(draw, shapes, st):
    nd = len(shapes[0])
    return [tuple(draw(st.lists(st.integers(-nd - 1, nd), min_size=0 if nd else 1, max_size=max(nd, 1))))], {}


def _roll(draw, shapes, st):
    nd = len(shapes[0])
    if draw(st.booleans()) or not nd:
        return [draw(st.integers(-7, 7))], {}
    return [draw(st.integers(-7, 7))], {"dims": _dim(draw, nd, st)}


def _repeat(draw, shapes, st):
    nd = len(shapes[0])
    return [draw(st.lists(st.integers(-1, 3), min_size=max(nd - 1, 0), max_size=nd + 1))], {}


def _diag_k(draw, shapes, st):
    return [draw(st.integers(-4, 4))], {}


def _chunks(draw, shapes, st):
    return [draw(st.integers(-1, 5))], {"dim": _dim(draw, len(shapes[0]), st)}


def _topk(draw, shapes, st):
    nd = len(shapes[0])
    return [draw(st.integers(-1, 5))], {"dim": _dim(draw, nd, st) if nd else -1, "largest": draw(st.booleans())}


def _sort(draw, shapes, st):
    return [], {"dim": _dim(draw, len(shapes[0]), st), "descending": draw(st.booleans())}


def _clamp(draw, shapes, st):
    lo = draw(st.one_of(st.none(), st.floats(-4, 4), st.integers(-4, 4)))
    hi = draw(st.one_of(st.none(), st.floats(-4, 4), st.integers(-4, 4)))
    return [], {"min": lo, "max": hi}


def _scalar(draw, shapes, st):
    return [draw(st.one_of(st.integers(-3, 3), st.floats(-3, 3), st.sampled_from([float("nan"), float("inf")])))], {}


def _index(draw, shapes, st, dim_kw=True):
    nd = len(shapes[0])
    dim = _dim(draw, nd, st)
    size = shapes[0][dim] if -nd <= dim < nd else 1
    k = draw(st.integers(0, 4))
    values = draw(st.lists(st.integers(-size - 1, size), min_size=k, max_size=k))
    return [dim, {"tensor": {"shape": [k], "dtype": "int64", "values": values}}], {}


def _gather(draw, shapes, st):
    nd = len(shapes[0])
    dim = _dim(draw, nd, st)
    size = shapes[0][dim] if -nd <= dim < nd else 1
    ishape = list(shapes[0])
    if ishape and -nd <= dim < nd:
        ishape[dim] = draw(st.integers(0, 3))
    n = int(np.prod(ishape)) if ishape else 1
    values = draw(st.lists(st.integers(-size - 1, size), min_size=n, max_size=n))
    return [dim, {"tensor": {"shape": ishape, "dtype": "int64", "values": values}}], {}


def _masked_fill(draw, shapes, st):
    shape = list(shapes[0])
    n = int(np.prod(shape)) if shape else 1
    mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    value = draw(st.sampled_from([0.5, -2, 3, float("nan"), float("inf"), 300, True]))
    return [{"tensor": {"shape": shape, "dtype": "bool", "values": mask}}, value], {}


def _matmul_shapes(draw, st):
    """(a, b) shapes for matmul: compatible most of the time, 1-D/batched/broadcast variants."""
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    kind = draw(st.sampled_from(["mm", "mv", "vm", "vv", "bmm", "broadcast", "bad"]))
    return {"mm": ([m, k], [k, n]), "mv": ([m, k], [k]), "vm": ([k], [k, n]), "vv": ([k], [k]),
            "bmm": ([2, m, k], [2, k, n]), "broadcast": ([3, 1, m, k], [2, k, n]),
            "bad": ([m, k], [k + 1, n])}[kind]


def _size_args(draw, shapes, st):
    """Sizes for creation ops: ordinary, empty, negative, and element counts that overflow bytes."""
    kind = draw(st.sampled_from(["small", "small", "empty", "negative", "overflow"]))
    if kind == "small":
        return [draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))], {}
    if kind == "empty":
        return [[0, draw(st.integers(0, 3))]], {}
    if kind == "negative":
        return [[draw(st.integers(1, 3)), -draw(st.integers(1, 5))]], {}
    return [draw(st.sampled_from([[2 ** 31, 2 ** 31], [2 ** 62], [2 ** 63 - 1], [2 ** 40, 2 ** 40], [2 ** 32] * 3]))], {}


def _full_args(draw, shapes, st):
    args, kw = _size_args(draw, shapes, st)
    return args + [draw(st.sampled_from([1.5, -2, 0]))], kw


def _arange_args(draw, shapes, st):
    kind = draw(st.sampled_from(["ok", "ok", "zero_step", "wrong_sign", "huge"]))
    if kind == "ok":
        return [draw(st.integers(-5, 0)), draw(st.integers(1, 9)), draw(st.sampled_from([1, 2, 0.5]))], {}
    if kind == "zero_step":
        return [0, 5, 0], {}
    if kind == "wrong_sign":
        return [5, 0, 1], {}
    return [0, 2 ** 62, 1], {}


def _eye_args(draw, shapes, st):
    return [draw(st.sampled_from([0, 1, 3, -1, 2 ** 40, 2 ** 63 - 1]))], {}


# --- numpy references (float inputs only; the CI tier checks the rest for clean behaviour) ---------
def _np_reduce(fn):
    def ref(x, dim=None, keepdim=False):
        return fn(x, axis=dim, keepdims=keepdim)
    return ref


def _np_var(ddof_fn):
    def ref(x, dim=None, keepdim=False):
        return ddof_fn(x, axis=dim, ddof=1, keepdims=keepdim)
    return ref


def _np_softmax(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _np_logsumexp(x, dim, keepdim=False):
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


# rows whose numpy reference is computed in float64 but whose answer at +-inf depends on the input's
# dtype (nan_to_num's default posinf is the dtype's largest finite value): the torch tier checks those
_REF_FINITE_ROWS = {"nan_to_num"}
_REF_SQUARES_ROWS = {"norm", "dist"}

ENTRIES: list[Entry] = [
    Entry("sum", "top", "sum", args=_maybe_dim, ref=_np_reduce(np.sum)),
    Entry("mean", "top", "mean", args=_maybe_dim, ref=_np_reduce(np.mean)),
    Entry("prod", "top", "prod", args=_argdim),
    Entry("amax", "top", "amax", args=_maybe_dim, ref=_np_reduce(np.max)),
    Entry("amin", "top", "amin", args=_maybe_dim, ref=_np_reduce(np.min)),
    Entry("argmax", "top", "argmax", args=_argdim, ties=True),
    Entry("argmin", "top", "argmin", args=_argdim, ties=True),
    Entry("max_dim", "top", "max", args=_dim_required, ties=True),
    Entry("min_dim", "top", "min", args=_dim_required, ties=True),
    Entry("all", "top", "all", args=_argdim),
    Entry("any", "top", "any", args=_argdim),
    Entry("var", "top", "var", args=_maybe_dim, ref=_np_var(np.var), ref_squares=True),
    Entry("std", "top", "std", args=_maybe_dim, ref=_np_var(np.std), ref_squares=True),
    Entry("logsumexp", "top", "logsumexp", args=_dim_required, ref=_np_logsumexp, ref_finite=True),
    Entry("cumsum", "top", "cumsum", args=_dim_required, ref=lambda x, dim: np.cumsum(x, axis=dim).reshape(x.shape)),
    Entry("cumprod", "top", "cumprod", args=_dim_required, ref=lambda x, dim: np.cumprod(x, axis=dim).reshape(x.shape)),
    Entry("softmax", "F", "softmax", args=_dim_required, ref=_np_softmax, ref_finite=True),
    Entry("log_softmax", "F", "log_softmax", args=_dim_required, ref=lambda x, dim: x - _np_logsumexp(x, dim, keepdim=True), ref_finite=True),
    Entry("transpose", "top", "transpose", args=_two_dims, ref=lambda x, a, b: np.swapaxes(x, a, b)),
    Entry("permute", "method", "permute", args=_perm, ref=lambda x, p: np.transpose(x, p)),
    Entry("reshape", "top", "reshape", args=_reshape, ref=lambda x, s: np.reshape(x, s)),
    Entry("flatten", "top", "flatten", args=_two_dims),
    Entry("squeeze", "top", "squeeze", args=_dim_required),
    Entry("unsqueeze", "top", "unsqueeze", args=_dim_required),
    Entry("narrow", "top", "narrow", args=_narrow),
    Entry("select", "top", "select", args=_select),
    Entry("flip", "top", "flip", args=_flip),
    Entry("roll", "top", "roll", args=_roll),
    Entry("repeat", "method", "repeat", args=_repeat),
    Entry("tril", "top", "tril", args=_diag_k, ref=lambda x, k: np.tril(x, k)),
    Entry("triu", "top", "triu", args=_diag_k, ref=lambda x, k: np.triu(x, k)),
    Entry("movedim", "top", "movedim", args=_two_dims, ref=lambda x, a, b: np.moveaxis(x, a, b)),
    Entry("diagonal", "top", "diagonal", args=_two_dims),
    Entry("chunk", "top", "chunk", args=_chunks),
    Entry("unbind", "top", "unbind", args=_dim_required),
    Entry("topk", "top", "topk", args=_topk, ties=True),
    Entry("sort", "top", "sort", args=_sort, ties=True),
    Entry("argsort", "top", "argsort", args=_sort, ties=True),
    Entry("clamp", "top", "clamp", args=_clamp),
    Entry("add_scalar", "top", "add", args=_scalar),
    Entry("mul_scalar", "top", "mul", args=_scalar),
    Entry("pow_scalar_arg", "top", "pow", args=_scalar),
    Entry("floor_divide_scalar", "top", "floor_divide", args=_scalar),
    Entry("remainder_scalar", "top", "remainder", args=_scalar),
    Entry("index_select", "top", "index_select", args=_index),
    Entry("gather", "top", "gather", args=_gather),
    Entry("masked_fill", "top", "masked_fill", args=_masked_fill),
    Entry("where", "top", "where", n_in=3),
    Entry("matmul", "top", "matmul", n_in=2),
    Entry("cat", "top", "cat", n_in=2, args=_dim_required, tensor_list=True),
    Entry("stack", "top", "stack", n_in=2, args=_dim_required, tensor_list=True),
    Entry("relu_F", "F", "relu"),
    Entry("gelu_F", "F", "gelu"),
    Entry("silu_F", "F", "silu"),
    Entry("leaky_relu_F", "F", "leaky_relu"),
    Entry("hardswish_F", "F", "hardswish"),
    Entry("layer_norm", "F", "layer_norm", args=lambda d, s, st: ([list(s[0][-1:])], {})),
    Entry("zeros", "top", "zeros", n_in=0, args=_size_args, shape_only=True),
    Entry("ones", "top", "ones", n_in=0, args=_size_args, shape_only=True),
    Entry("full", "top", "full", n_in=0, args=_full_args, shape_only=True),
    Entry("arange", "top", "arange", n_in=0, args=_arange_args, shape_only=True),
    Entry("eye", "top", "eye", n_in=0, args=_eye_args, shape_only=True),
]
# the op table's rows (tests/support/op_table.py), where no hand entry above covers the name
_HAND = {e.name for e in ENTRIES}
for _row in ROWS.values():
    if _row.name in _HAND:
        continue
    _ref = (lambda f: (lambda *xs: f(*xs)))(_row.ref)
    ENTRIES.append(Entry(_row.name, "table", _row.name, 2 if _row.binary else 1, ref=_ref, domain=_row.domain,
                         ref_finite=_row.name in _REF_FINITE_ROWS, ref_squares=_row.name in _REF_SQUARES_ROWS))

BY_NAME = {e.name: e for e in ENTRIES}
