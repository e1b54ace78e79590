"""Top-level functions and Tensor methods composed from existing ops (schema rows in codegen/ops.py).
Table-driven: one row per name (clamp_min/max, fill, sum_to_size, renorm, index_fill, put, adjoint,
mH/H, chain_matmul, tril_/triu_/cumsum_/cumprod_, row_stack), a float64 numpy reference, every
float dtype on non-contiguous inputs; gradients against finite differences; PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy


LAYOUTS = ["contiguous", "transposed", "sliced"]   # writable views (in-place rows write through them)


def _np_renorm(x, p, dim, maxnorm):
    axes = tuple(d for d in range(x.ndim) if d != dim)
    norms = (np.abs(x) ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


IDX = np.array([2, 0])
PUT_IDX = np.array([5, 0, 10, -1])   # -1 is 11: no duplicate positions


# (name, tinytorch call on x (3, 4), float64 numpy reference on the same values)
FORWARD = [
    ("clamp_min", lambda x: tt.clamp_min(x, 0.3), lambda a: np.maximum(a, 0.3)),
    ("clamp_max", lambda x: tt.clamp_max(x, 0.3), lambda a: np.minimum(a, 0.3)),
    ("fill", lambda x: tt.fill(x, 1.5), lambda a: np.full_like(a, 1.5)),
    ("sum_to_size", lambda x: x.sum_to_size(1, 4), lambda a: a.sum(0, keepdims=True)),
    ("sum_to_size_lead", lambda x: x.sum_to_size(4), lambda a: a.sum(0)),
    ("renorm", lambda x: x.renorm(2, 0, 1.0), lambda a: _np_renorm(a, 2, 0, 1.0)),
    ("renorm_p1_dim1", lambda x: x.renorm(1, 1, 1.5), lambda a: _np_renorm(a, 1, 1, 1.5)),
    ("index_fill", lambda x: x.index_fill(1, tt.tensor(IDX), -1.0),
     lambda a: np.where(np.isin(np.arange(4), IDX)[None, :], -1.0, a)),
    ("put", lambda x: x.put(tt.tensor(PUT_IDX), tt.tensor([1.0, 2.0, 3.0, 4.0], dtype=x.dtype)),
     lambda a: _np_put(a, PUT_IDX, [1.0, 2.0, 3.0, 4.0])),
    ("put_accumulate", lambda x: x.put(tt.tensor([1, 1]), tt.tensor([1.0, 2.0], dtype=x.dtype), accumulate=True),
     lambda a: _np_put(a, [1], [a.reshape(-1)[1] + 3.0])),
    ("adjoint", lambda x: tt.adjoint(x), lambda a: a.T),
    ("mH", lambda x: x.mH, lambda a: a.T),
    ("H", lambda x: x.H, lambda a: a.T),
    ("chain_matmul", lambda x: tt.chain_matmul(x, x.mT, x), lambda a: a @ a.T @ a),
    ("tril_", lambda x: x.clone().tril_(1), lambda a: np.tril(a, 1)),
    ("triu_", lambda x: x.clone().triu_(-1), lambda a: np.triu(a, -1)),
    ("cumsum_", lambda x: x.clone().cumsum_(1), lambda a: np.cumsum(a, 1)),
    ("cumprod_", lambda x: x.clone().cumprod_(0), lambda a: np.cumprod(a, 0)),
    ("row_stack", lambda x: tt.row_stack([x, x[:1]]), lambda a: np.vstack([a, a[:1]])),
]


def _np_put(a, index, values):
    out = a.copy().reshape(-1)
    out[np.asarray(index)] = values
    return out.reshape(a.shape)


@pytest.mark.parametrize("name,fn,ref", FORWARD, ids=[r[0] for r in FORWARD])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_composed_forward_against_numpy(name, fn, ref, layout):
    for dtype in FLOAT_DTYPES:
        x, a = make((3, 4), dtype, layout, low=0.2, high=1.5)
        out = fn(x)
        expected = ref(a)
        assert tuple(out.shape) == expected.shape, name
        tol = TOL[dtype] if name not in ("chain_matmul", "renorm", "renorm_p1_dim1", "cumprod_") else \
            tuple(4 * t for t in TOL[dtype])   # several roundings in the low-precision dtype
        assert_close(out, expected, dtype, tol=tol, what=f"{name} {dtype} {layout}")


# (name, differentiable call, float64 reference gradient of sum(call) by finite differences)
GRAD = [
    ("renorm", lambda x: x.renorm(2, 0, 1.0)),
    ("sum_to_size", lambda x: x.sum_to_size(1, 4) * tt.arange(4, dtype=x.dtype)),
    ("index_fill", lambda x: x.index_fill(1, tt.tensor(IDX), -1.0) * x),
    ("clamp_min", lambda x: tt.clamp_min(x, 0.7) ** 2),
    ("addbmm", lambda x: tt.addbmm(x[:, :3], x[:, :2].unsqueeze(0), x[:2, :3].unsqueeze(0), beta=0.5) ** 2),
    ("chain_matmul", lambda x: tt.chain_matmul(x, x.mT)),
    ("tril_", lambda x: (x * 1).tril_() * x),
    ("cumsum_", lambda x: (x * 1).cumsum_(1) ** 2),
    ("put", lambda x: x.put(tt.tensor(PUT_IDX), (x[0] * 3)) ** 2),
]


def _finite_difference(fn, a, eps=1e-6):
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        grad[i] = (to_numpy(fn(tt.tensor(hi)).sum()) - to_numpy(fn(tt.tensor(lo)).sum())) / (2 * eps)
    return grad


@pytest.mark.parametrize("name,fn", GRAD, ids=[r[0] for r in GRAD])
def test_composed_gradient_against_finite_differences(name, fn):
    x, a = make((3, 4), "float64", "transposed", low=0.2, high=1.5, requires_grad=True)
    fn(x).sum().backward()
    expected = _finite_difference(fn, a)
    assert_close(x.grad, expected, "float64", tol=(1e-6, 1e-7), what=name)   # central differences, eps 1e-6
    for dtype in ("float32", "bfloat16"):
        y, _ = make((3, 4), dtype, "sliced", low=0.2, high=1.5, requires_grad=True)
        y.detach().copy_(tt.tensor(a, dtype=getattr(tt, dtype)))
        fn(y).sum().backward()
        assert_close(y.grad, expected, dtype, tol=tuple(4 * t for t in GRAD_TOL[dtype]), what=f"{name} {dtype}")


BAD_INPUT = [
    (lambda: tt.combinations(tt.ones(2, 2)), RuntimeError, "1D"),
    (lambda: tt.split_with_sizes(tt.ones(5), [2, 2]), RuntimeError, "sum exactly to 5"),
    (lambda: tt.ones(5).put(tt.tensor([0, 1]), tt.ones(3)), RuntimeError, "same number of elements"),
    (lambda: tt.ones(5).put(tt.tensor([9]), tt.ones(1)), IndexError, "out of range"),
    (lambda: tt.fill(tt.ones(2), tt.ones(2)), RuntimeError, "0-dimension"),
    (lambda: tt.range(0, 1, 0), RuntimeError, "step"),
    (lambda: tt.empty(3).exponential_(-1.0), RuntimeError, "lambda"),
    (lambda: tt.empty(3).geometric_(1.5), RuntimeError, r"\(0, 1\)"),
    (lambda: tt.ones(2, 2).renorm(0, 0, 1.0), RuntimeError, "non-positive"),
    (lambda: tt.ones(2).is_nonzero(), RuntimeError, "more than one value"),
    (lambda: tt.ones(2, 2).sum_to_size(3), RuntimeError, "not expandable"),
    (lambda: tt.ones(2, 2, 2).H, RuntimeError, "matrices"),
    (lambda: tt.ones(3).H, RuntimeError, "2-D"),
    (lambda: tt.ones(3).mH, RuntimeError, "batches of matrices"),
    (lambda: tt.adjoint(tt.ones(3)), RuntimeError, "batches of matrices"),
    (lambda: tt.empty_strided((2, 3), (1,)), RuntimeError, "mismatch"),
    (lambda: tt.chain_matmul(tt.ones(2, 2), tt.ones(2)), RuntimeError, "expected 2"),
    (lambda: tt.ones(3).index_fill(0, tt.tensor([[0]]), 1.0), IndexError, "vector"),
    (lambda: tt.ones(3).masked_scatter_(tt.tensor([True, True, True]), tt.ones(2)), RuntimeError, "at least 3"),
    (lambda: tt.kl_div(tt.ones(2), tt.ones(2), 5), ValueError, "reduction"),
]


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
@pytest.mark.parametrize("call,error,match", BAD_INPUT)
def test_bad_input_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()
