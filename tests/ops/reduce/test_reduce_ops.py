"""Reductions, scans, softmax and norms (the Python-level ops) against float64 numpy: every float
dtype and some int dtypes, non-contiguous inputs, keepdim, negative dims, PyTorch semantics."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make, to_numpy


def _lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _norm(p):
    def f(x, axis=None, keepdims=False):
        a = np.abs(x)
        if p == math.inf:
            return np.max(a, axis=axis, keepdims=keepdims)
        return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1 / p)
    return f


# name -> (tinytorch fn(x, dim, keepdim), numpy fn(x, axis, keepdims), accumulates error)
REDUCTIONS = {
    "sum": (lambda x, d, k: x.sum(d, k), np.sum),
    "mean": (lambda x, d, k: x.mean(d, k), np.mean),
    "prod": (lambda x, d, k: x.prod(d, k), np.prod),
    "amax": (lambda x, d, k: x.amax(d if d is not None else (), k), np.max),
    "amin": (lambda x, d, k: tt.amin(x, d if d is not None else (), k), np.min),
    "var": (lambda x, d, k: x.var(d, keepdim=k), lambda a, axis, keepdims: np.var(a, axis=axis, keepdims=keepdims, ddof=1)),
    "var_c0": (lambda x, d, k: x.var(d, keepdim=k, correction=0), np.var),
    "std": (lambda x, d, k: x.std(d, keepdim=k), lambda a, axis, keepdims: np.std(a, axis=axis, keepdims=keepdims, ddof=1)),
    "std_unbiased_false": (lambda x, d, k: tt.std(x, d, False, k), np.std),
    "logsumexp": (lambda x, d, k: x.logsumexp(d if d is not None else (0, 1, 2), k), _lse),
    "norm_1": (lambda x, d, k: x.norm(1, d, k), _norm(1)),
    "norm_2": (lambda x, d, k: x.norm(2, d, k), _norm(2)),
    "norm_fro": (lambda x, d, k: x.norm("fro", d, k), _norm(2)),
    "norm_3": (lambda x, d, k: x.norm(3, d, k), _norm(3)),
    "norm_inf": (lambda x, d, k: x.norm(float("inf"), d, k), _norm(math.inf)),
}
DIMS = [(None, False), (0, False), (-1, True), ((0, 2), False), ((-1, 1), True)]


@pytest.mark.parametrize("dim,keepdim", DIMS, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction(name, dtype, layout, dim, keepdim):
    fn, ref = REDUCTIONS[name]
    lo, hi = (0.5, 1.5) if name == "prod" else (-2.0, 2.0)
    x, xr = make((2, 3, 4), dtype, layout, lo, hi, seed=7)
    y = fn(x, dim, keepdim)
    axis = tuple(dim) if isinstance(dim, tuple) else dim
    expected = np.asarray(ref(xr, axis=axis, keepdims=keepdim))
    assert y.dtype.name == dtype and tuple(y.shape) == expected.shape, (y.shape, expected.shape)
    rtol, atol = TOL[dtype]
    # half types round the result once (and accumulate in float32): scale atol by the magnitude
    assert_close(y, expected, dtype, tol=(rtol * 2, atol * 4 * max(1.0, np.abs(expected).max())), what=name)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_reductions(dtype):
    a = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], dtype=dtype)
    x = tt.tensor(a).t()                                  # non-contiguous
    at = a.T
    s = x.sum()
    assert s.dtype == tt.int64 and s.item() == at.sum()   # PyTorch: integer sums accumulate in int64
    np.testing.assert_array_equal(x.sum(1).numpy(), at.sum(1))
    assert x.sum(0).dtype == tt.int64
    assert x.prod(0).dtype == tt.int64
    np.testing.assert_array_equal(x.prod(0).numpy(), at.prod(0))
    assert x.amax(1).dtype.name == dtype
    np.testing.assert_array_equal(x.amax(1).numpy(), at.max(1))
    np.testing.assert_array_equal(x.amin(-1, keepdim=True).numpy(), at.min(-1, keepdims=True))
    assert x.max().item() == 9 and x.min().item() == 1
    v, i = x.max(0)
    np.testing.assert_array_equal(v.numpy(), at.max(0))
    np.testing.assert_array_equal(i.numpy(), at.argmax(0))
    np.testing.assert_array_equal(x.argmin(1).numpy(), at.argmin(1))
    np.testing.assert_array_equal(x.cumsum(0).numpy(), at.cumsum(0))
    assert x.cumsum(0).dtype == tt.int64
    np.testing.assert_array_equal(x.sum(0, dtype=tt.float32).numpy(), at.sum(0).astype(np.float32))


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_mean_of_integers_is_an_error(dtype):
    x = tt.tensor([1, 2, 3], dtype=getattr(tt, dtype))
    # PyTorch raises RuntimeError; the C++ core raises its TypeError (also fine for callers)
    with pytest.raises((RuntimeError, TypeError), match="mean.*could not infer output dtype"):
        x.mean()
    np.testing.assert_allclose(x.mean(dtype=tt.float32).numpy(), 2.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_min_with_dim_ties_return_first_index(dtype):
    x = tt.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, -5.0, -5.0, 4.0]], dtype=getattr(tt, dtype))
    v, i = x.max(1)
    np.testing.assert_array_equal(to_numpy(v), [3, 2, 4])
    np.testing.assert_array_equal(i.numpy(), [1, 0, 3])
    v, i = x.min(dim=-1, keepdim=True)
    assert tuple(v.shape) == (3, 1) and i.dtype == tt.int64
    np.testing.assert_array_equal(i.numpy(), [[3], [0], [1]])
    np.testing.assert_array_equal(x.argmax(1).numpy(), [1, 0, 3])
    np.testing.assert_array_equal(x.argmin(0).numpy(), [2, 2, 2, 0])
    assert x.argmax().item() == 11 and x.argmin().item() == 9   # flattened, first occurrence
    # values/indices namedtuple
    r = x.max(0)
    assert r.values is r[0] and r.indices is r[1]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_propagation(dtype):
    nan = float("nan")
    x = tt.tensor([[1.0, nan, 3.0], [4.0, 5.0, 6.0]], dtype=getattr(tt, dtype))
    for r in (x.sum(1), x.mean(1), x.prod(1), x.amax(1), x.amin(1), x.max(1).values, x.min(1).values,
              x.var(1), x.logsumexp(1), x.norm(dim=1), x.softmax(1)[:, 0]):
        assert np.isnan(to_numpy(r)[0]) and not np.isnan(to_numpy(r)[1])
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())
    assert x.max(1).indices[0].item() == 1 and x.argmax(1)[0].item() == 1   # NaN counts as the extreme
    assert x.argmin(1)[0].item() == 1
    c = to_numpy(x.cumsum(1))
    assert c[0, 0] == 1 and np.isnan(c[0, 1:]).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_empty_reductions(dtype):
    e = tt.zeros(0, 3, dtype=getattr(tt, dtype))
    assert e.sum().item() == 0.0 and e.prod().item() == 1.0
    np.testing.assert_array_equal(e.sum(0).numpy(), [0, 0, 0])
    np.testing.assert_array_equal(e.prod(0).numpy(), [1, 1, 1])
    assert tuple(e.sum(1).shape) == (0,)
    assert math.isnan(e.mean().item())
    assert np.isnan(e.mean(0).numpy()).all()
    np.testing.assert_array_equal(e.amax(1).numpy(), np.zeros(0))   # reducing a non-empty dim is fine
    with pytest.raises((RuntimeError, IndexError), match="numel|empty|zero"):
        e.amax()
    with pytest.raises((RuntimeError, IndexError), match="numel|empty|zero"):
        e.max()
    with pytest.raises((RuntimeError, IndexError), match="numel|empty|zero"):
        e.max(0)
    with pytest.raises((RuntimeError, IndexError), match="numel|empty|zero"):
        e.argmax()
    np.testing.assert_array_equal(e.cumsum(0).numpy().shape, (0, 3))


def test_variance_of_single_element_with_correction_is_nan():
    x = tt.tensor([[2.0], [3.0]])
    assert np.isnan(x.var(1).numpy()).all()
    np.testing.assert_array_equal(x.var(1, correction=0).numpy(), [0, 0])
    np.testing.assert_allclose(x.std(0).item(), np.std([2, 3], ddof=1))


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_scans(dtype, layout, dim):
    x, xr = make((2, 3, 4), dtype, layout, 0.5, 1.5, seed=dim + 10)
    rtol, atol = TOL[dtype]
    cs = np.cumsum(xr, axis=dim)
    cp = np.cumprod(xr, axis=dim)
    assert x.cumsum(dim).dtype.name == dtype
    assert_close(x.cumsum(dim), cs, dtype, tol=(rtol * 2, atol * 4 * np.abs(cs).max()))
    assert_close(x.cumprod(dim), cp, dtype, tol=(rtol * 4, atol * 4 * np.abs(cp).max()))
    assert x.cumsum(dim, dtype=tt.float64).dtype == tt.float64


def cumprod_grad_ref(xr, gr, axis):
    """dx_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i, term by term (no division), float64."""
    x, g = np.moveaxis(xr, axis, -1), np.moveaxis(gr, axis, -1)
    n = x.shape[-1]
    dx = np.zeros_like(x)
    for k in range(n):
        others = x.copy()
        others[..., k] = 1.0
        dx[..., k] = (g[..., k:] * np.cumprod(others, axis=-1)[..., k:]).sum(-1)
    return np.moveaxis(dx, -1, axis)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_cumprod_backward_with_zeros(dtype, layout, dim):
    # zeros first, last, twice in a row, several per line, and lines without any
    x, xr = make((3, 4, 5), dtype, layout, 0.5, 1.5, seed=dim + 30)
    zr = np.random.default_rng(dim + 1).random(xr.shape) < 0.3
    zr[0, 0, :] = zr[0, :, 0] = zr[:, 0, 0] = True
    zr[1] = False
    x = tt.where(tt.tensor(zr), tt.zeros((), dtype=x.dtype), x).detach().requires_grad_()
    xr = np.where(zr, 0.0, xr)
    g, gr = make((3, 4, 5), dtype, seed=dim + 40)
    x.cumprod(dim).backward(g)
    ref = cumprod_grad_ref(xr, gr, dim)
    rtol, atol = TOL[dtype]
    assert_close(x.grad, ref, dtype, tol=(rtol * 8, atol * 8 * max(1.0, np.abs(ref).max())))


def test_cumprod_backward_with_zeros_gradcheck_and_double_backward():
    from tinytorch.autograd import gradcheck
    x = tt.tensor([[0.0, 1.5, -2.0, 0.0, 0.7], [1.2, 0.0, 0.0, 2.0, -1.1], [0.9, 1.1, 1.3, 0.8, 0.0]],
                  dtype=tt.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(1), (x,))
    assert gradcheck(lambda t: t.cumprod(0), (x,))
    # second derivative through the zero path, against central differences of the first
    rng = np.random.default_rng(1)
    g, h = tt.tensor(rng.random((3, 5))), rng.random((3, 5))

    def first(xv):
        t = tt.tensor(xv, requires_grad=True)
        return tt.autograd.grad((t.cumprod(1) * g).sum(), t, create_graph=True)[0], t

    d1, t = first(x.detach().numpy())
    second = tt.autograd.grad((d1 * tt.tensor(h)).sum(), t)[0].numpy()
    base, eps, fd = x.detach().numpy(), 1e-6, np.zeros((3, 5))
    for i in np.ndindex(3, 5):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        fd[i] = ((first(up)[0].detach().numpy() - first(down)[0].detach().numpy()) * h).sum() / (2 * eps)
    np.testing.assert_allclose(second, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax_log_softmax(dtype, layout, dim):
    x, xr = make((2, 3, 4), dtype, layout, -4, 4, seed=dim + 20)
    e = np.exp(xr - xr.max(axis=dim, keepdims=True))
    sm = e / e.sum(axis=dim, keepdims=True)
    rtol, atol = TOL[dtype]
    y = tt.softmax(x, dim)
    assert y.dtype.name == dtype
    assert_close(y, sm, dtype, tol=(rtol * 2, atol * 2))
    assert_close(tt.log_softmax(x, dim), np.log(sm), dtype, tol=(rtol * 2, atol * 8))
    assert_close(x.softmax(dim, dtype=tt.float64), sm, "float64", tol=(1e-10, 1e-12))


def test_softmax_large_values_are_stable():
    x = tt.tensor([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]])
    np.testing.assert_allclose(x.softmax(1).numpy(), [[0.5, 0.5, 0], [0, 0, 1]], atol=1e-7)
    np.testing.assert_allclose(x.logsumexp(1).numpy(), [1000 + math.log(2), 1e4], rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax(1).numpy()[1], [-2e4, -1e4, 0], rtol=1e-6)


@pytest.mark.parametrize("dim", [1, 0])
def test_log_softmax_large_offset_keeps_precision(dim):
    x = tt.tensor([[1000.0, 1000.0, 998.0]])
    x = x if dim == 1 else x.t().contiguous()
    lse = 1000 + math.log(2 + math.exp(-2))
    np.testing.assert_allclose(x.log_softmax(dim).numpy().reshape(-1), np.array([1000, 1000, 998]) - lse, rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_and_rms_norm_forward(dtype, affine):
    x, xr = make((3, 2, 4), dtype, "transposed", seed=3)
    w, wr = make((2, 4), dtype, seed=4)
    b, br = make((2, 4), dtype, seed=5)
    mu = xr.mean(axis=(1, 2), keepdims=True)
    var = xr.var(axis=(1, 2), keepdims=True)
    ref = (xr - mu) / np.sqrt(var + 1e-5)
    rms = xr / np.sqrt((xr ** 2).mean(axis=(1, 2), keepdims=True) + 1e-6)
    if affine:
        ref = ref * wr + br
        rms = rms * wr
    rtol, atol = TOL[dtype]
    y = tt.layer_norm(x, (2, 4), w if affine else None, b if affine else None)
    assert y.dtype.name == dtype
    assert_close(y, ref, dtype, tol=(rtol * 4, atol * 8 * max(1, np.abs(ref).max())))
    r = tt.rms_norm(x, [2, 4], w if affine else None, eps=1e-6)
    assert_close(r, rms, dtype, tol=(rtol * 4, atol * 8 * max(1, np.abs(rms).max())))


def test_all_any():
    x = tt.tensor([[True, False, True], [True, True, True]])
    np.testing.assert_array_equal(x.all(1).numpy(), [False, True])
    np.testing.assert_array_equal(x.any(0).numpy(), [True, True, True])
    assert not x.all().item() and x.any().item()
    f = tt.tensor([[0.0, 2.0], [0.5, 0.0]])
    np.testing.assert_array_equal(f.all(-1).numpy(), [False, False])
    np.testing.assert_array_equal(f.any(0).numpy(), [True, True])
    assert tt.zeros(0).all().item() and not tt.zeros(0).any().item()


def test_negative_and_out_of_range_dims():
    x, xr = make((2, 3, 4), "float64", seed=1)
    np.testing.assert_allclose(x.sum(-2).numpy(), xr.sum(-2))
    np.testing.assert_allclose(x.mean((-1, -3)).numpy(), xr.mean((-1, -3)))
    np.testing.assert_allclose(x.max(-1).values.numpy(), xr.max(-1))
    np.testing.assert_allclose(x.cumsum(-3).numpy(), np.cumsum(xr, -3))
    with pytest.raises(RuntimeError, match="appears multiple times"):   # the same dim twice, as PyTorch
        x.sum((0, -3))
    for bad in (lambda: x.sum(3), lambda: x.mean(-4), lambda: x.amax(5), lambda: x.var(3),
                lambda: x.max(3), lambda: x.softmax(3), lambda: x.cumsum(-4)):
        with pytest.raises(IndexError, match="Dimension out of range"):
            bad()


def test_scalar_tensor_reductions():
    s = tt.tensor(2.5)
    assert s.sum().item() == 2.5 and s.sum(0).item() == 2.5 and s.mean(-1).item() == 2.5
    assert s.amax().item() == 2.5 and s.max().item() == 2.5
    v, i = s.max(0)
    assert v.item() == 2.5 and i.item() == 0
