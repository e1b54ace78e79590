"""Indexing ops composed from existing ones (tinytorch/_composites/indexing.py and scatter.py):
index_add, scatter_reduce, take_along_dim, repeat_interleave, diag/trace, fill_diagonal_,
index_copy_, masked_scatter_, put_, diag_embed, diagflat, take, argwhere, tril/triu_indices and
unravel_index against numpy; gradients by gradcheck, PyTorch's errors."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, f64_leaves, make, scaled_tol, to_numpy


gradcheck = tt.autograd.gradcheck


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_index_add(dtype):
    x, xr = make((5, 3), dtype, "transposed", seed=1)
    src, sr = make((4, 3), dtype, seed=2)
    idx = tt.tensor([0, 4, 0, 2])
    out = tt.index_add(x, 0, idx, src, alpha=2.0)
    expected = xr.copy()
    np.add.at(expected, idx.numpy(), 2.0 * sr)
    assert_close(out, expected, dtype, tol=scaled_tol(dtype, expected))
    y = x.clone()
    assert y.index_add_(1, tt.tensor([2, 2, 0]), tt.ones(5, 3, dtype=x.dtype)) is y
    e2 = xr.copy()
    np.add.at(e2.T, [2, 2, 0], 1.0)
    assert_close(y, e2, dtype, tol=scaled_tol(dtype, e2))


def test_index_add_gradcheck_and_errors():
    x, src = f64_leaves((5, 3), (4, 3))
    idx = tt.tensor([0, 4, 0, 2])
    assert gradcheck(lambda a, s: tt.index_add(a, 0, idx, s, alpha=3.0), (x, src))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        tt.index_add(x, 0, idx.reshape(2, 2), src)
    with pytest.raises(RuntimeError, match="same scalar type"):
        tt.index_add(x, 0, idx, src.float())
    with pytest.raises(RuntimeError, match="must match self"):
        tt.index_add(x, 0, idx[:3], src)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
def test_scatter_reduce_forward(reduce, include_self):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5))
    src = rng.normal(size=(3, 5))
    index = rng.integers(0, 4, (3, 5))
    expected = x.copy()
    counts = np.zeros_like(x)
    np.add.at(counts, (index, np.arange(5)[None, :].repeat(3, 0)), 1)
    touched = counts > 0
    init = {"sum": 0.0, "mean": 0.0, "amax": -np.inf, "amin": np.inf, "prod": 1.0}[reduce]
    if not include_self:
        expected[touched] = init
    ufunc = {"sum": np.add, "mean": np.add, "amax": np.maximum, "amin": np.minimum, "prod": np.multiply}[reduce]
    ufunc.at(expected, (index, np.arange(5)[None, :].repeat(3, 0)), src)
    if reduce == "mean":
        expected = np.where(touched, expected / np.maximum(counts + include_self, 1), x)
    out = tt.scatter_reduce(tt.tensor(x), 0, tt.tensor(index), tt.tensor(src), reduce, include_self=include_self)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_scatter_reduce_gradcheck(reduce):
    x, src = f64_leaves((4, 5), (3, 5))
    index = tt.tensor(np.random.default_rng(1).integers(0, 4, (3, 5)))
    assert gradcheck(lambda a, s: tt.scatter_reduce(a, 0, index, s, reduce), (x, src))
    assert gradcheck(lambda a, s: a.scatter_reduce(0, index, s, reduce, include_self=False), (x, src))


def test_scatter_reduce_ties_split_gradient_and_errors():
    x = tt.tensor([1.0, 5.0], requires_grad=True)
    src = tt.tensor([5.0, 2.0, 5.0], requires_grad=True)
    out = tt.scatter_reduce(x, 0, tt.tensor([1, 0, 1]), src, "amax")
    assert out.tolist() == [2.0, 5.0]
    out.sum().backward()
    assert x.grad.tolist() == pytest.approx([0.0, 1 / 3]) and src.grad.tolist() == pytest.approx([1 / 3, 1.0, 1 / 3])
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        tt.scatter_reduce(x, 0, tt.tensor([0]), src[:1], "max")
    with pytest.raises(NotImplementedError, match="prod"):
        tt.scatter_reduce(x, 0, tt.tensor([0]), src[:1], "prod")


def test_take_along_dim_and_repeat_interleave():
    x, xr = make((3, 4), "float64", "transposed", seed=3)
    idx = x.argsort(dim=1)
    np.testing.assert_array_equal(tt.take_along_dim(x, idx, dim=1).numpy(),
                                  np.take_along_axis(xr, idx.numpy(), 1))
    np.testing.assert_array_equal(tt.take_along_dim(x, tt.tensor([0, 5])).numpy(), xr.reshape(-1)[[0, 5]])
    np.testing.assert_array_equal(x.take_along_dim(tt.tensor([[1], [0], [2]]), 1).numpy(),
                                  np.take_along_axis(xr, np.array([[1], [0], [2]]), 1))
    np.testing.assert_array_equal(tt.repeat_interleave(x, 2).numpy(), np.repeat(xr, 2))
    np.testing.assert_array_equal(x.repeat_interleave(tt.tensor([1, 0, 3]), dim=0).numpy(),
                                  np.repeat(xr, [1, 0, 3], axis=0))
    np.testing.assert_array_equal(x.repeat_interleave(3, dim=1).numpy(), np.repeat(xr, 3, axis=1))
    assert tt.repeat_interleave(tt.tensor([2, 1])).tolist() == [0, 0, 1]
    a, = f64_leaves((3, 4))
    assert gradcheck(lambda t: t.repeat_interleave(tt.tensor([2, 0, 1, 3]), dim=1), (a,))
    with pytest.raises(RuntimeError, match="repeats must have the same size"):
        x.repeat_interleave(tt.tensor([1, 2]), dim=0)


def test_diag_trace():
    v, vr = make((3,), "float64", seed=1)
    for k in (0, 1, -2):
        np.testing.assert_array_equal(tt.diag(v, k).numpy(), np.diag(vr, k))
    m, mr = make((4, 5), "float64", "transposed", seed=2)
    for k in (0, 2, -1):
        np.testing.assert_array_equal(m.diag(k).numpy(), np.diag(mr, k))
    assert tt.trace(m).item() == pytest.approx(np.trace(mr))
    assert tt.trace(tt.arange(6).view(2, 3)).dtype == tt.int64
    a, = f64_leaves((3,))
    assert gradcheck(lambda t: tt.diag(t, 1), (a,))
    with pytest.raises(RuntimeError, match="Supports 1D or 2D"):
        tt.diag(tt.zeros(2, 2, 2))


PUT_IDX = np.array([5, 0, 10, -1])   # -1 is 11: no duplicate positions


def _np_put(a, index, values):
    out = a.copy().reshape(-1)
    out[np.asarray(index)] = values
    return out.reshape(a.shape)


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


def _x(shape=(3, 4), seed=0):
    return make(shape, "float64", "transposed" if len(shape) == 2 else "contiguous", seed=seed)


def test_diag_embed_diagflat_take_argwhere():
    v, vr = _x((2, 3))
    out = tt.diag_embed(v, 1)
    expected = np.zeros((2, 4, 4))
    for i in range(2):
        expected[i] = np.diag(vr[i], 1)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert tt.diag_embed(v, 0, 0, 2).shape == (3, 2, 3)
    np.testing.assert_array_equal(tt.diagflat(tt.tensor([[1, 2], [3, 4]])).numpy(), np.diagflat([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(tt.take(v, tt.tensor([[0, -1], [4, 2]])).numpy(), np.take(vr, [[0, 5], [4, 2]]))
    z = tt.tensor([[0, 1], [2, 0]])
    np.testing.assert_array_equal(tt.argwhere(z).numpy(), np.argwhere(z.numpy()))
    a = v.detach().requires_grad_()
    assert gradcheck(lambda t: tt.diag_embed(t, -1), (a,))


def test_tri_indices_and_unravel_index():
    for r, c, k in ((3, 3, 0), (4, 3, -1), (3, 5, 2)):
        np.testing.assert_array_equal(tt.tril_indices(r, c, k).numpy(), np.stack(np.tril_indices(r, k, c)))
        np.testing.assert_array_equal(tt.triu_indices(r, c, k).numpy(), np.stack(np.triu_indices(r, k, c)))
    got = tt.unravel_index(tt.tensor([5, 7, 0]), (2, 4))
    ref = np.unravel_index([5, 7, 0], (2, 4))
    assert [g.tolist() for g in got] == [list(r) for r in ref]
    with pytest.raises(RuntimeError, match="out of bounds"):
        tt.unravel_index(tt.tensor([8]), (2, 4))
    with pytest.raises(TypeError, match="bool"):
        tt.positive(tt.tensor([True]))
