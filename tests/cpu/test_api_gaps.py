"""Top-level functions and Tensor methods/attributes composed from existing ops
(schema rows in codegen/ops.py, Tensor attributes in tinytorch/_tensor/tensor.py, _toplevel/nn_functional.py). Table-driven: one row per
name, a float64 numpy reference, every float dtype on non-contiguous inputs."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy

LAYOUTS = ["contiguous", "transposed", "sliced"]   # writable views (in-place rows write through them)

# torch.<name>_(x) writes <name>(x) into x: (name, low, high) input range inside the op's domain
INPLACE_UNARY = [(n, 0.1, 0.9) for n in (
    "abs", "acos", "arccos", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh", "atan", "atanh",
    "ceil", "cos", "cosh", "deg2rad", "erf", "exp", "exp2", "expm1", "fix", "floor", "frac", "log", "log10",
    "log1p", "log2", "neg", "negative", "rad2deg", "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sin",
    "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc")] + [("acosh", 1.1, 3.0), ("arccosh", 1.1, 3.0)]


@pytest.mark.parametrize("name,low,high", INPLACE_UNARY)
@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_toplevel_inplace_unary_matches_out_of_place(name, low, high, layout):
    for dtype in FLOAT_DTYPES:
        x, _ = make((3, 4), dtype, layout, low=low, high=high)
        expected = to_numpy(getattr(tt, name)(x))
        out = getattr(tt, name + "_")(x)
        assert out is x
        np.testing.assert_array_equal(to_numpy(x), expected, err_msg=f"{name}_ {dtype}")


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


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_addbmm_against_numpy(dtype):
    m, a = make((3, 5), dtype, "transposed", seed=1)
    b1, b1_ref = make((2, 3, 4), dtype, "sliced", seed=2)
    b2, b2_ref = make((2, 4, 5), dtype, "contiguous", seed=3)
    out = tt.addbmm(m, b1, b2, beta=0.5, alpha=2.0)
    tol = tuple(8 * t for t in TOL[dtype])
    assert_close(out, 0.5 * a + 2.0 * np.einsum("bij,bjk->ik", b1_ref, b2_ref), dtype, tol=tol)


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


def test_attributes_and_queries():
    x = tt.zeros(3, 5, dtype=tt.float16)
    assert (x.nbytes, x.itemsize) == (30, 2)
    assert x.layout is tt.strided and repr(tt.strided) == "torch.strided"
    assert x.is_signed() and tt.is_signed(x) and not tt.zeros(2, dtype=tt.uint8).is_signed()
    assert x.get_device() == -1
    assert x.is_same_size(tt.ones(3, 5)) and not x.is_same_size(tt.ones(5, 3))
    assert tt.tensor([2.0]).is_nonzero() and not tt.tensor(0).is_nonzero()
    for flag in ("is_meta", "is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia", "is_nested", "is_mkldnn"):
        assert getattr(x, flag) is False, flag
    assert x.is_distributed() is False and tt.is_distributed(x) is False
    assert x.new().shape == (0,) and x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == tt.float16
    assert x.new([1.0, 2.0]).tolist() == [1.0, 2.0]
    s = x.new_empty_strided((2, 3), (1, 2))
    assert s.shape == (2, 3) and s.stride() == (1, 2) and s.dtype == tt.float16
    e = tt.empty_strided((2, 3), (3, 1), dtype=tt.float64)
    assert e.stride() == (3, 1) and e.dtype == tt.float64


def test_fill_diagonal_index_copy_masked_scatter_put_():
    x, a = make((5, 3), "float32", "transposed")
    x.fill_diagonal_(7.0)
    a[[0, 1, 2], [0, 1, 2]] = 7.0
    assert_close(x, a, "float32")
    w = tt.zeros(7, 3).fill_diagonal_(1.0, wrap=True)
    expected = np.zeros((7, 3))
    expected[[0, 1, 2, 4, 5, 6], [0, 1, 2, 0, 1, 2]] = 1.0
    np.testing.assert_array_equal(to_numpy(w), expected)
    y, b = make((4, 3), "float64", "sliced")
    src = tt.arange(6, dtype=tt.float64).reshape(2, 3)
    y.index_copy_(0, tt.tensor([3, 1]), src)
    b[[3, 1]] = np.arange(6).reshape(2, 3)
    assert_close(y, b, "float64")
    z, c = make((3, 4), "float32", "transposed")
    mask = tt.tensor([True, False, True, True])
    z.masked_scatter_(mask, tt.arange(20, dtype=tt.float32))
    c[np.broadcast_to(np.array([True, False, True, True]), (3, 4))] = np.arange(9)
    assert_close(z, c, "float32")
    p, d = make((3, 4), "float32", "sliced")
    p.put_(tt.tensor(PUT_IDX), tt.tensor([1.0, 2.0, 3.0, 4.0]))
    assert_close(p, _np_put(d, PUT_IDX, [1.0, 2.0, 3.0, 4.0]), "float32")


def test_creation_functions():
    for dtype in FLOAT_DTYPES:
        out = tt.logspace(-1, 2, 7, base=2.0, dtype=getattr(tt, dtype))
        assert_close(out, np.logspace(-1, 2, 7, base=2.0), dtype)
    assert tt.logspace(0, 3, 4).dtype == tt.get_default_dtype()
    with pytest.warns(UserWarning, match="deprecated"):
        r = tt.range(1, 2, 0.25)
    assert_close(r, [1.0, 1.25, 1.5, 1.75, 2.0], "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tt.range(5, 1, -2).tolist() == [5.0, 3.0, 1.0]
    c = tt.combinations(tt.tensor([1.0, 2.0, 3.0]), 2, with_replacement=True)
    assert c.tolist() == [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]]
    assert tt.combinations(tt.arange(3), 3).tolist() == [[0, 1, 2]]
    assert tt.combinations(tt.arange(2), 3).shape == (0, 3)


def test_splits():
    x, a = make((6, 4), "float32", "transposed")
    for parts in (tt.split_with_sizes(x, [1, 2, 3]), tt.unsafe_split_with_sizes(x, [1, 2, 3])):
        for got, ref in zip(parts, np.split(a, [1, 3])):
            assert_close(got, ref, "float32")
    assert [p.shape[1] for p in tt.unsafe_split(x, 3, 1)] == [3, 1]
    assert [p.shape[0] for p in tt.unsafe_chunk(x, 4)] == [2, 2, 2]


def test_random_fills_reproduce_and_match_moments():
    n = 40000
    rows = [   # (fill, kwargs, float64 reference mean, std of one draw) for a moment check at 6 standard errors
        ("exponential_", {"lambd": 2.0}, 0.5, 0.5),
        ("log_normal_", {"mean": 0.0, "std": 0.5}, math.exp(0.125), math.sqrt((math.exp(0.25) - 1) * math.exp(0.25))),
        ("geometric_", {"p": 0.25}, 4.0, math.sqrt(0.75) / 0.25),
    ]
    for name, kwargs, mean, std in rows:
        tt.manual_seed(3)
        a = getattr(tt.empty(n, dtype=tt.float64), name)(**kwargs)
        tt.manual_seed(3)
        b = getattr(tt.empty(n, dtype=tt.float64), name)(**kwargs)
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b), err_msg=name)
        assert abs(float(a.mean()) - mean) < 6 * std / math.sqrt(n), name
    g = tt.empty(n).geometric_(0.5)
    assert float(g.min()) >= 1 and bool((g == g.round()).all())
    cauchy = tt.empty(n, dtype=tt.float64).cauchy_(1.0, 2.0)
    median = float(cauchy.median())   # the median's standard error is pi*sigma/(2*sqrt(n))
    assert abs(median - 1.0) < 6 * math.pi * 2.0 / (2 * math.sqrt(n))
    for dtype in ("float16", "bfloat16"):
        assert float(tt.empty(1000, dtype=getattr(tt, dtype)).exponential_().min()) >= 0


def test_state_switches():
    assert tt.get_default_device() == tt.device("cpu")
    tt.set_default_device("cpu")
    tt.set_default_device(None)
    with pytest.raises(NotImplementedError, match="cpu"):
        tt.set_default_device("cuda")
    assert not tt.is_autocast_enabled("cpu")
    with tt.autocast("cpu", dtype=tt.bfloat16):
        assert tt.is_autocast_enabled("cpu") and not tt.is_autocast_enabled("cuda")
        assert tt.get_autocast_dtype("cpu") == tt.bfloat16
    assert tt.get_autocast_dtype("cuda") == tt.float16
    tt.set_autocast_enabled("cpu", True)
    try:
        assert tt.is_autocast_enabled("cpu")
        assert tt.matmul(tt.ones(2, 2), tt.ones(2, 2)).dtype == tt.bfloat16   # the autocast wrappers see it
    finally:
        tt.set_autocast_enabled("cpu", False)
    assert not tt.is_autocast_enabled("cpu")
    assert not tt.is_inference_mode_enabled()
    with tt.inference_mode():
        assert tt.is_inference_mode_enabled()
    tt.set_num_interop_threads(2)
    assert tt.get_num_interop_threads() == 2
    tt.set_warn_always(True)
    assert tt.is_warn_always_enabled()
    tt.set_warn_always(False)
    previous = tt.get_default_dtype()
    try:
        tt.set_default_tensor_type("torch.DoubleTensor")
        assert tt.get_default_dtype() == tt.float64
    finally:
        tt.set_default_dtype(previous)
    assert tt.detach(tt.ones(2, requires_grad=True)).requires_grad is False
    filled = tt.fill(tt.tensor([float("nan"), float("inf")]), 2.5)
    assert filled.tolist() == [2.5, 2.5]
    value = tt.tensor(1.0, requires_grad=True)
    tt.fill(tt.ones(3), value).sum().backward()
    assert value.grad.item() == 3.0


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
