"""CUDA reductions, arg-reductions, scans, softmax and layer/rms norm against the CPU kernels: every op,
every dtype it supports, several dim combinations with keepdim, non-contiguous GPU inputs, the
(O, R, I) layouts the engine picks between (rows, columns, split rows), ties and NaN for max/argmax,
forward and backward (through autograd) for softmax/log_softmax/layer_norm/rms_norm, and large sizes.

Run on a GPU machine:  python -m pytest -q tests/ops/reduce/test_cuda_reduce.py"""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.cuda_helpers import check, layout_view
from support.numeric import FLOAT_DTYPES, TOL, to_numpy

pytestmark = pytest.mark.cuda

INT_DTYPES = ["int32", "int64", "uint8"]


def pair(shape, dtype="float32", layout="contiguous", lo=-2.0, hi=2.0, seed=0, data=None):
    """The same values as a CPU and a GPU tensor, the layout built on each device."""
    rng = np.random.default_rng(seed)
    base_shape, view = layout_view(shape, layout)
    if data is None:
        if dtype in INT_DTYPES:
            data = rng.integers(int(lo), int(hi) + 1, base_shape)
        elif dtype == "bool":
            data = rng.random(base_shape) < 0.7
        else:
            data = rng.uniform(lo, hi, base_shape)
    base = tt.tensor(data, dtype=getattr(tt, dtype))
    return view(base), view(base.cuda())


# ---------------------------------------------------------------- reduce

REDUCE = {
    "sum": lambda x, d, k: x.sum(d, k),
    "mean": lambda x, d, k: x.mean(d, k),
    "prod": lambda x, d, k: x.prod(d, k),
    "amax": lambda x, d, k: x.amax(d if d is not None else (), k),
    "amin": lambda x, d, k: tt.amin(x, d if d is not None else (), k),
    "all": lambda x, d, k: tt.all(x, d, k),
    "any": lambda x, d, k: tt.any(x, d, k),
    "var": lambda x, d, k: x.var(d, keepdim=k),
    "var_c0": lambda x, d, k: x.var(d, keepdim=k, correction=0),
    "std": lambda x, d, k: x.std(d, keepdim=k),
    "logsumexp": lambda x, d, k: x.logsumexp(d if d is not None else (0, 1, 2), k),
    "norm_0": lambda x, d, k: x.norm(0, d, k),
    "norm_1": lambda x, d, k: x.norm(1, d, k),
    "norm_2": lambda x, d, k: x.norm(2, d, k),
    "norm_3": lambda x, d, k: x.norm(3, d, k),
    "norm_inf": lambda x, d, k: x.norm(float("inf"), d, k),
    "norm_ninf": lambda x, d, k: x.norm(float("-inf"), d, k),
}
DIMS = [(None, False), (0, False), (1, True), (-1, True), ((0, 2), False), ((1, 2), True), ((0, 1), False)]


def _count(shape, dim):
    if dim is None:
        return int(np.prod(shape))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return int(np.prod([shape[d] for d in dims]))


@pytest.mark.parametrize("dim,keepdim", DIMS, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "permuted"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_float(name, dtype, layout, dim, keepdim):
    lo, hi = (0.8, 1.2) if name == "prod" else (-2.0, 2.0)
    shape = (6, 7, 9)
    xc, xg = pair(shape, dtype, layout, lo, hi, seed=len(name))
    if name in ("all", "any"):  # some exact zeros
        xc, xg = xc.round(), xg.round()
    check(REDUCE[name](xg, dim, keepdim), REDUCE[name](xc, dim, keepdim), f"{name} {dtype} {layout} {dim}",
          n=_count(shape, dim))


@pytest.mark.parametrize("dim,keepdim", DIMS[:5], ids=str)
@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "all", "any"])
def test_reduce_integer(name, dtype, dim, keepdim):
    lo = 0 if dtype == "uint8" else (-1 if name == "prod" else -4)
    hi = 1 if name == "prod" else 4  # products stay far from int64 overflow
    xc, xg = pair((5, 4, 6), dtype, "transposed", lo, hi, seed=3)
    check(REDUCE[name](xg, dim, keepdim), REDUCE[name](xc, dim, keepdim), f"{name} {dtype} {dim}")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_reduce_special_values(dtype):
    data = np.random.default_rng(4).uniform(-2, 2, (4, 50))
    data[0, 7] = np.nan
    data[1, 3] = np.inf
    data[2, :] = -np.inf
    data[3, 10] = -np.inf
    for name in ("sum", "amax", "amin", "logsumexp", "norm_inf", "mean"):
        xc, xg = pair((4, 50), dtype, data=data)
        check(REDUCE[name](xg, 1, False), REDUCE[name](xc, 1, False), name, n=50)


def test_reduce_empty_dims():
    for dev in ("cpu", "cuda"):
        x = tt.ones(3, 0).to(dev)
        assert to_numpy(x.sum(1)).tolist() == [0, 0, 0]
        assert to_numpy(x.prod(1)).tolist() == [1, 1, 1]
        assert np.isnan(to_numpy(x.mean(1))).all()
        assert to_numpy(tt.all(x, 1)).tolist() == [True] * 3
        with pytest.raises(IndexError):
            x.amax(1)


# Shapes that take each path of the engine: long rows split over blocks, many short rows,
# columns (I > 1) with few / many outputs, tiny I.
LARGE = [((1 << 24,), None), ((3, 1 << 22), 1), ((1 << 20, 3), 1), ((1 << 14, 1024), 0), ((1024, 1024, 4), 1),
         ((2, 1 << 21, 2), 1), ((4096, 4096), 1), ((7, 100003), 1)]


@pytest.mark.parametrize("shape,dim", LARGE, ids=str)
def test_reduce_large(shape, dim):
    xc, xg = pair(shape, "float32", lo=0.0, hi=1.0, seed=5)
    check(xg.sum(dim), xc.sum(dim), "sum", tol=(1e-5, 1e-6))  # positive data: relative error suffices
    check(xg.amax(dim if dim is not None else ()), xc.amax(dim if dim is not None else ()), "amax")
    if dim is not None:
        check(xg.var(dim), xc.var(dim), "var", tol=(1e-4, 1e-6))
        check(xg.logsumexp(dim), xc.logsumexp(dim), "logsumexp", tol=(1e-5, 1e-6))


def test_sum_2_24_half_types_and_int():
    xc, xg = pair((1 << 24,), "bfloat16", lo=0.0, hi=1.0, seed=6)
    check(xg.sum(), xc.sum(), "bfloat16 sum", tol=(1.6e-2, 0))
    xc, xg = pair((1 << 24,), "float16", lo=0.0, hi=1.0, seed=6)
    check(xg.mean(), xc.mean(), "float16 mean", tol=(2e-3, 0))
    xc, xg = pair((1 << 24,), "int32", lo=-100, hi=100, seed=7)
    check(xg.sum(), xc.sum(), "int sum")


# ---------------------------------------------------------------- max / min / argmax / argmin

@pytest.mark.parametrize("dim", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + ["bool"])
def test_arg_reductions_with_ties(dtype, dim):
    lo = 0 if dtype == "uint8" else -3
    xc, xg = pair((5, 6, 70), dtype, "transposed", lo, 3, seed=8)
    if dtype in FLOAT_DTYPES:  # many ties
        xc, xg = xc.round(), xg.round()
    for keepdim in (False, True):
        for fn in ("argmax", "argmin"):
            if dtype == "bool":     # PyTorch: argmax/argmin take no bool input
                with pytest.raises(RuntimeError, match="bool"):
                    getattr(tt, fn)(xg, dim, keepdim)
                continue
            check(getattr(tt, fn)(xg, dim, keepdim), getattr(tt, fn)(xc, dim, keepdim), f"{fn} {dim}")
        if dim is not None:
            for fn in ("max", "min"):
                vg, ig = getattr(tt, fn)(xg, dim, keepdim)
                vc, ic = getattr(tt, fn)(xc, dim, keepdim)
                check(vg, vc, f"{fn} values")
                check(ig, ic, f"{fn} indices")
    if dtype != "bool":
        check(tt.max(xg), tt.max(xc), "max all")
        check(tt.min(xg), tt.min(xc), "min all")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_arg_reductions_nan_wins(dtype):
    data = np.random.default_rng(9).uniform(-1, 1, (3, 300))
    data[0, [17, 250]] = np.nan
    data[1, 299] = np.nan
    data[2, [5, 6]] = 7.0  # tie: the first wins
    xc, xg = pair((3, 300), dtype, data=data)
    for fn in ("argmax", "argmin"):
        check(getattr(tt, fn)(xg, 1), getattr(tt, fn)(xc, 1), fn)
    vg, ig = tt.max(xg, 1)
    vc, ic = tt.max(xc, 1)
    check(vg, vc, "max values")
    check(ig, ic, "max indices")
    assert to_numpy(ig).tolist() == [17, 299, 5]


def test_argmax_large_rows_first_index():
    n = 1 << 22
    data = np.zeros((2, n), dtype=np.float32)
    data[0, [n - 5, 12345, n - 1]] = 3.0
    data[1, [n // 2, n // 3]] = -1.0
    xc, xg = pair((2, n), "float32", data=data)
    assert to_numpy(tt.argmax(xg, 1)).tolist() == [12345, 0]
    assert to_numpy(tt.argmin(xg, 1)).tolist() == [0, n // 3]
    check(tt.argmax(xg), tt.argmax(xc), "argmax all")


def test_arg_reduction_errors():
    for dev in ("cpu", "cuda"):
        with pytest.raises(IndexError):
            tt.argmax(tt.ones(0).to(dev))
        with pytest.raises(IndexError):
            tt.max(tt.ones(2, 0).to(dev), 1)


# ---------------------------------------------------------------- cumsum / cumprod

SCAN_CASES = [((3, 100), 1), ((5, 2000), 1), ((2, 9000), -1), ((4, 37, 5), 1), ((40, 6), 0), ((2, 5000, 3), 1),
              ((64,), 0), ((3, 4, 1100), 2)]


@pytest.mark.parametrize("shape,dim", SCAN_CASES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + ["bool"])
def test_cumulative(shape, dim, dtype):
    lo = 0 if dtype == "uint8" else -2
    xc, xg = pair(shape, dtype, "contiguous", lo, 2, seed=10)
    check(tt.cumsum(xg, dim), tt.cumsum(xc, dim), f"cumsum {dtype}", n=shape[dim])
    pc, pg = pair(shape, dtype, "contiguous", 0.99 if dtype in FLOAT_DTYPES else 0, 1.01 if dtype in FLOAT_DTYPES else 1,
                  seed=11)
    check(tt.cumprod(pg, dim), tt.cumprod(pc, dim), f"cumprod {dtype}", n=shape[dim])


def test_cumulative_non_contiguous_and_dtype_arg():
    xc, xg = pair((30, 20), "float16", "transposed", seed=12)
    check(tt.cumsum(xg, 0), tt.cumsum(xc, 0), "transposed")
    check(tt.cumsum(xg, 1, dtype=tt.float32), tt.cumsum(xc, 1, dtype=tt.float32), "dtype=")


# ---------------------------------------------------------------- softmax / log_softmax

SOFTMAX_CASES = [((4, 7, 9), -1), ((4, 7, 9), 1), ((4, 7, 9), 0), ((3, 5000), 1), ((2, 3000, 4), 1), ((1, 1), 0),
                 ((64, 1024), 1), ((8, 1025), 1)]


@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_forward_backward(fn, dtype, shape, dim):
    rng = np.random.default_rng(13)
    data, wdata = rng.uniform(-4, 4, shape), rng.uniform(-1, 1, shape)
    outs, grads = [], []
    for dev in ("cpu", "cuda"):
        x = tt.tensor(data, dtype=getattr(tt, dtype)).to(dev).requires_grad_()
        y = getattr(F, fn)(x, dim)
        (y * tt.tensor(wdata, dtype=getattr(tt, dtype)).to(dev)).sum().backward()
        outs.append(y)
        grads.append(x.grad)
    check(outs[1], outs[0], f"{fn} forward")
    check(grads[1], grads[0], f"{fn} grad", tol=(TOL[dtype][0] * 4, TOL[dtype][1] * 4))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_non_finite_rows(fn):
    data = np.random.default_rng(14).uniform(-2, 2, (5, 40))
    data[0, :10] = -np.inf     # masked entries -> 0 probability
    data[1, :] = -np.inf       # all masked -> NaN
    data[2, 3] = np.inf        # +inf -> NaN
    data[3, 4] = np.nan
    data[4, :] = 1e4           # large equal logits
    for layout_dim in (1, 0):
        xc, xg = pair((5, 40), "float32", data=data)
        if layout_dim == 0:
            xc, xg = xc.transpose(0, 1).contiguous(), xg.transpose(0, 1).contiguous()
        check(getattr(F, fn)(xg, layout_dim), getattr(F, fn)(xc, layout_dim), f"{fn} dim {layout_dim}")


def test_softmax_large():
    xc, xg = pair((4096, 4096), "float32", lo=-10, hi=10, seed=15)
    check(F.softmax(xg, 1), F.softmax(xc, 1), "softmax 4096^2")
    check(F.log_softmax(xg, 1), F.log_softmax(xc, 1), "log_softmax 4096^2")
    hc, hg = pair((4096, 4096), "bfloat16", lo=-10, hi=10, seed=16)
    check(F.softmax(hg, -1), F.softmax(hc, -1), "softmax bf16 4096^2")


def test_softmax_non_contiguous_input():
    xc, xg = pair((33, 65), "float32", "transposed", seed=17)
    check(F.softmax(xg, -1), F.softmax(xc, -1), "transposed input")
    check(F.log_softmax(xg, 0), F.log_softmax(xc, 0), "transposed input, dim 0")


# ---------------------------------------------------------------- layer_norm / rms_norm

NORM_CASES = [((6, 10), (10,)), ((4, 3, 64), (64,)), ((2, 5, 6, 7), (6, 7)), ((3, 3000), (3000,)),
              ((700, 33), (33,)), ((2, 1025), (1025,))]


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,nshape", NORM_CASES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_norm_forward_backward(kind, dtype, shape, nshape, affine):
    rng = np.random.default_rng(18)
    data, gdata = rng.uniform(-2, 2, shape) + 0.5, rng.uniform(-1, 1, shape)
    wdata, bdata = rng.uniform(0.5, 1.5, nshape), rng.uniform(-0.5, 0.5, nshape)
    res = []
    for dev in ("cpu", "cuda"):
        T = lambda a: tt.tensor(a, dtype=getattr(tt, dtype)).to(dev)  # noqa: E731
        x = T(data).requires_grad_()
        w = T(wdata).requires_grad_() if affine else None
        if kind == "layer_norm":
            b = T(bdata).requires_grad_() if affine else None
            y = F.layer_norm(x, nshape, w, b, 1e-5)
        else:
            b = None
            y = F.rms_norm(x, nshape, w, 1e-6)
        (y * T(gdata)).sum().backward()
        res.append((y, x.grad, None if w is None else w.grad, None if b is None else b.grad))
    (yc, gxc, gwc, gbc), (yg, gxg, gwg, gbg) = res
    rows = int(np.prod(shape)) // int(np.prod(nshape))
    gt = (TOL[dtype][0] * 4, TOL[dtype][1] * 4)
    check(yg, yc, f"{kind} y")
    check(gxg, gxc, f"{kind} grad x", tol=gt)
    if affine:
        check(gwg, gwc, f"{kind} grad w", tol=gt, n=rows)
        if gbc is not None:
            check(gbg, gbc, f"{kind} grad b", tol=gt, n=rows)


def test_layer_norm_many_rows_param_grads():
    # long N: the weight/bias gradient reduction splits rows over blocks (two-pass, deterministic)
    rng = np.random.default_rng(19)
    data, gdata = rng.uniform(-2, 2, (65536, 48)), rng.uniform(-1, 1, (65536, 48))
    res = []
    for dev in ("cpu", "cuda"):
        x = tt.tensor(data, dtype=tt.float32).to(dev).requires_grad_()
        w = tt.ones(48).to(dev).requires_grad_()
        b = tt.zeros(48).to(dev).requires_grad_()
        (F.layer_norm(x, (48,), w, b) * tt.tensor(gdata, dtype=tt.float32).to(dev)).sum().backward()
        res.append((x.grad, w.grad, b.grad))
    for k, what in enumerate(("gx", "gw", "gb")):
        check(res[1][k], res[0][k], what, tol=(1e-4, 1e-5), n=65536 if k else 1)
    # deterministic: the same gradient twice, bit for bit
    gws = []
    for _ in range(2):
        x = tt.tensor(data, dtype=tt.float32).cuda().requires_grad_()
        w = tt.ones(48).cuda().requires_grad_()
        (F.layer_norm(x, (48,), w) * tt.tensor(gdata, dtype=tt.float32).cuda()).sum().backward()
        gws.append(to_numpy(w.grad))
    np.testing.assert_array_equal(gws[0], gws[1])
