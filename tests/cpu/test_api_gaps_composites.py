"""Composed PyTorch names: the in-place shape methods (schema rows with inplace="view"), gcd/lcm/ldexp
(_composites/pointwise.py), nanmedian (_composites/indexing.py), unique_consecutive (_composites/numerics.py) and matrix_exp
(linalg/_composites.py). float64 numpy references, every float dtype, non-contiguous inputs,
gradients against the out-of-place path or gradcheck."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinytorch as tt
from conftest import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy

LAYOUTS = ["contiguous", "transposed", "sliced"]

# (name, input shape, in-place call, the out-of-place view it must equal, numpy reference)
SHAPE_INPLACE = [
    ("squeeze_", (3, 1, 4), lambda x: x.squeeze_(), lambda x: x.squeeze(), lambda a: a.squeeze()),
    ("squeeze_dim", (3, 1, 4), lambda x: x.squeeze_(1), lambda x: x.squeeze(1), lambda a: a.squeeze(1)),
    ("squeeze_noop", (3, 1, 4), lambda x: x.squeeze_(0), lambda x: x.squeeze(0), lambda a: a),
    ("unsqueeze_", (3, 1, 4), lambda x: x.unsqueeze_(-1), lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    ("transpose_", (3, 1, 4), lambda x: x.transpose_(0, 2), lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("swapaxes_", (3, 1, 4), lambda x: x.swapaxes_(-1, 0), lambda x: x.swapaxes(-1, 0), lambda a: a.swapaxes(-1, 0)),
    ("swapdims_", (3, 1, 4), lambda x: x.swapdims_(1, 2), lambda x: x.swapdims(1, 2), lambda a: a.swapaxes(1, 2)),
    ("t_", (3, 4), lambda x: x.t_(), lambda x: x.t(), lambda a: a.T),
    ("t_1d", (4,), lambda x: x.t_(), lambda x: x.t(), lambda a: a),
    ("as_strided_", (3, 4), lambda x: x.as_strided_((2, 2), (1, 2), 1), lambda x: x.as_strided((2, 2), (1, 2), 1),
     None),
]
_IDS = [r[0] for r in SHAPE_INPLACE]


@pytest.mark.parametrize("name,shape,inplace,view,ref", SHAPE_INPLACE, ids=_IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_shape_inplace_becomes_the_view(name, shape, inplace, view, ref, layout):
    for dtype in FLOAT_DTYPES:
        x, a = make(shape, dtype, layout, seed=1)
        expected = view(x)
        assert inplace(x) is x
        assert tuple(x.shape) == tuple(expected.shape) and x.stride() == expected.stride(), name
        assert x.storage_offset() == expected.storage_offset()
        np.testing.assert_array_equal(to_numpy(x), to_numpy(expected), err_msg=f"{name} {dtype} {layout}")
        if ref is not None:
            np.testing.assert_array_equal(to_numpy(x), ref(a))
        x.fill_(7.0)           # still the same storage: the out-of-place view sees the write
        assert (to_numpy(expected) == 7.0).all()


@pytest.mark.parametrize("name,shape,inplace,view,ref", SHAPE_INPLACE, ids=_IDS)
def test_shape_inplace_gradient_matches_out_of_place(name, shape, inplace, view, ref):
    for dtype in FLOAT_DTYPES:
        x, _ = make(shape, dtype, "sliced", seed=2, requires_grad=True)
        y = x * 2.0
        inplace(y)
        assert y.grad_fn is not None
        z = view(x * 2.0)
        w = make(tuple(z.shape), dtype, seed=3)[0]
        (y * w).sum().backward()
        g_inplace = to_numpy(x.grad)
        x.grad = None
        (z * w).sum().backward()
        np.testing.assert_array_equal(g_inplace, to_numpy(x.grad), err_msg=f"{name} {dtype}")
        assert np.abs(g_inplace).sum() > 0


def test_toplevel_as_strided_():
    x = tt.arange(6.0)
    assert tt.as_strided_(x, (2, 2), (1, 2), 1) is x
    np.testing.assert_array_equal(x.numpy(), [[1.0, 3.0], [2.0, 4.0]])


def test_shape_inplace_keeps_identity_and_history():
    b = tt.randn(2, 3, requires_grad=True)
    z = b * 1.0
    assert z.t_() is z and z._base is None    # a tensor that was no view stays none
    z.cumsum_(0)                              # (3, 2) running sums down the rows, through the new history
    z.sum().backward()
    assert_close(b.grad, np.array([[3.0, 2.0, 1.0]] * 2), "float32")


@pytest.mark.parametrize("call", [lambda x: x.squeeze_(), lambda x: x.unsqueeze_(0), lambda x: x.t_(),
                                  lambda x: x.transpose_(0, 1), lambda x: x.swapaxes_(0, 1),
                                  lambda x: x.swapdims_(0, 1), lambda x: x.as_strided_((2,), (1,))])
def test_shape_inplace_on_a_leaf_that_requires_grad(call):
    x = tt.randn(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        call(x)
    with tt.no_grad():
        assert call(x) is x   # allowed without grad mode, as PyTorch


def test_shape_inplace_bad_input():
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        tt.zeros(2, 3, 4).t_()
    x = tt.zeros(2, 3)
    with pytest.raises(IndexError, match="out of range"):
        x.unsqueeze_(5)
    with pytest.raises(IndexError, match="out of range"):
        x.transpose_(0, 2)
    assert tuple(x.shape) == (2, 3)   # a refused call leaves the tensor as it was


INT_DTYPES = ["int32", "int64", "uint8"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_gcd_lcm_match_numpy(dtype):
    rng = np.random.default_rng(0)
    low, high = (0, 16) if dtype == "uint8" else (-60, 60)   # uint8: every lcm fits
    a = rng.integers(low, high, (4, 5))
    b = rng.integers(low, high, (5,))
    a[0, :2], b[:2] = 0, 0                          # gcd(0, 0) = 0, lcm(x, 0) = 0
    ta = tt.tensor(a.T.copy(), dtype=getattr(tt, dtype)).t()   # non-contiguous, broadcast against b
    tb = tt.tensor(b, dtype=getattr(tt, dtype))
    np.testing.assert_array_equal(tt.gcd(ta, tb).numpy(), np.gcd(a, b))
    np.testing.assert_array_equal(ta.lcm(tb).numpy(), np.lcm(a, b))
    assert tt.gcd(ta, tb).dtype == getattr(tt, dtype)
    c = ta.clone()
    assert c.gcd_(tb) is c
    np.testing.assert_array_equal(c.numpy(), np.gcd(a, b))
    d = ta.clone()
    assert tt.lcm_(d, tb) is d
    np.testing.assert_array_equal(d.numpy(), np.lcm(a, b))


def test_gcd_lcm_reject_non_integers():
    with pytest.raises(RuntimeError, match='"gcd" not implemented for \'float32\''):
        tt.gcd(tt.ones(2), tt.ones(2, dtype=tt.int64))
    with pytest.raises(RuntimeError, match='"lcm" not implemented for \'bool\''):
        tt.lcm(tt.ones(2, dtype=tt.bool), tt.ones(2, dtype=tt.int64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_ldexp_matches_numpy(dtype, layout):
    x, a = make((3, 4), dtype, layout)
    e = np.array([1, -2, 0, 3])
    out = tt.ldexp(x, tt.tensor(e))
    assert out.dtype == x.dtype
    assert_close(out, a * 2.0 ** e, dtype)
    y = x.clone()
    assert y.ldexp_(tt.tensor(e)) is y
    assert_close(y, a * 2.0 ** e, dtype)
    xg, _ = make((3, 4), dtype, layout, requires_grad=True)
    tt.ldexp(xg, tt.tensor(e)).sum().backward()
    assert_close(xg.grad, np.broadcast_to(2.0 ** e, (3, 4)), dtype, GRAD_TOL[dtype])


def test_ldexp_integer_operands():
    out = tt.ldexp(tt.tensor([1, 2]), tt.tensor([3, 4]))
    assert out.dtype == tt.float32 and out.tolist() == [8.0, 32.0]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tt.tensor([1, 2]).ldexp_(tt.tensor([3, 4]))


def _np_nanmedian(a, axis):
    """Lower median of the non-NaN values along axis (NaN where all are NaN)."""
    s = np.sort(a, axis=axis)                            # NaN last
    k = np.maximum((~np.isnan(a)).sum(axis=axis, keepdims=True) - 1, 0) // 2
    return np.take_along_axis(s, k, axis=axis).squeeze(axis)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_nanmedian_matches_numpy(dtype, layout):
    x, a = make((5, 6), dtype, layout, seed=4)
    with tt.no_grad():
        for i, j in ((0, 1), (0, 3), (2, 2), (4, 0), (4, 1), (4, 2), (4, 3), (4, 4), (4, 5)):
            x[i, j] = float("nan")                       # row 4 is all NaN
            a[i, j] = np.nan
    for dim in (0, 1, -1):
        values, indices = tt.nanmedian(x, dim)
        ref = _np_nanmedian(a, dim)
        assert_close(values, ref, dtype)
        picked = np.take_along_axis(a, np.expand_dims(to_numpy(indices), dim), axis=dim).squeeze(dim)
        np.testing.assert_array_equal(np.isnan(picked), np.isnan(ref))
        assert_close(picked, ref, dtype)                 # the index points at the median value
        kept = x.nanmedian(dim, keepdim=True)
        assert tuple(kept.values.shape) == tuple(np.expand_dims(ref, dim).shape)
    assert to_numpy(values)[4] != to_numpy(values)[4] and int(indices[4]) == 0   # all NaN: the first NaN
    assert_close(tt.nanmedian(x), _np_nanmedian(a.reshape(-1), 0), dtype)


def test_nanmedian_gradient_integers_and_errors():
    x = tt.tensor([[3.0, float("nan"), 1.0, 2.0], [4.0, 0.0, 5.0, 6.0]], dtype=tt.float64, requires_grad=True)
    x.nanmedian(1).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0, 1], [1, 0, 0, 0]])
    ints = tt.tensor([[3, 1, 2, 4]])
    v, i = ints.nanmedian(1)
    assert v.tolist() == [2] and i.tolist() == [2]
    assert np.isnan(tt.nanmedian(tt.tensor([float("nan")] * 3)).item())
    assert np.isnan(tt.nanmedian(tt.zeros(0)).item())
    with pytest.raises(IndexError, match="Dimension out of range"):
        tt.zeros(2, 3).nanmedian(2)
    with pytest.raises(IndexError, match="non-zero size"):
        tt.zeros(2, 0).nanmedian(1)


def _np_unique_consecutive(a, axis=None):
    """(values, inverse, counts) of the runs of equal elements (slices along axis)."""
    items = a.reshape(-1) if axis is None else np.moveaxis(a, axis, 0)
    values, inverse, counts = [], [], []
    for _, run in itertools.groupby(range(len(items)), key=lambda i: items[i].tobytes()):
        run = list(run)
        values.append(items[run[0]])
        inverse += [len(values) - 1] * len(run)
        counts.append(len(run))
    values = np.array(values).reshape((len(values),) + items.shape[1:])
    values = values if axis is None else np.moveaxis(values, 0, axis)
    inverse = np.array(inverse).reshape(a.shape) if axis is None else np.array(inverse)
    return values, inverse, np.array(counts)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int64"])
def test_unique_consecutive_matches_numpy(dtype):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, (6, 3)).astype(np.float64)
    a[2] = a[1]                                  # equal consecutive rows for dim=0
    t = tt.tensor(a.T.copy(), dtype=getattr(tt, dtype)).t()   # non-contiguous
    for dim in (None, 0, 1):
        values, inverse, counts = tt.unique_consecutive(t, return_inverse=True, return_counts=True, dim=dim)
        rv, ri, rc = _np_unique_consecutive(a, dim)
        np.testing.assert_array_equal(to_numpy(values), rv, err_msg=f"dim={dim}")
        np.testing.assert_array_equal(inverse.numpy(), ri)
        np.testing.assert_array_equal(counts.numpy(), rc)
        assert inverse.dtype == tt.int64 and counts.dtype == tt.int64
    np.testing.assert_array_equal(to_numpy(t.unique_consecutive()), _np_unique_consecutive(a)[0])
    values, counts = tt.unique_consecutive(tt.zeros(0), return_counts=True)
    assert tuple(values.shape) == (0,) and tuple(counts.shape) == (0,)


def _np_expm(a):
    """exp of each matrix in a float64 batch, from its eigendecomposition (distinct eigenvalues)."""
    w, v = np.linalg.eig(a)
    return np.real(v @ (np.exp(w)[..., None] * np.linalg.inv(v)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("scale", [0.2, 3.0])   # no squaring, and several squarings
def test_matrix_exp_matches_numpy(dtype, layout, scale):
    x, a = make((2, 4, 4), dtype, layout, seed=6)
    for out in (tt.matrix_exp(x * scale), tt.linalg.matrix_exp(x * scale), (x * scale).matrix_exp()):
        assert out.dtype == x.dtype and tuple(out.shape) == (2, 4, 4)
        ref = _np_expm(to_numpy(x * scale))
        rtol, atol = TOL[dtype]
        assert_close(out, ref, dtype, (rtol * 4, atol * float(np.abs(ref).max())))   # relative to exp's scale


def test_matrix_exp_gradient():
    x = tt.tensor(np.random.default_rng(7).uniform(-1.5, 1.5, (2, 3, 3)), dtype=tt.float64, requires_grad=True)
    assert tt.autograd.gradcheck(tt.linalg.matrix_exp, (x,))
    w = np.random.default_rng(8).uniform(-1, 1, (2, 3, 3))
    (tt.matrix_exp(x) * tt.tensor(w)).sum().backward()
    g64 = x.grad.numpy()
    for dtype in ("float32", "float16", "bfloat16"):
        xl = x.detach().to(getattr(tt, dtype)).requires_grad_(True)
        (tt.matrix_exp(xl) * tt.tensor(w, dtype=getattr(tt, dtype))).sum().backward()
        rtol, atol = GRAD_TOL[dtype]
        assert_close(xl.grad, g64, dtype, (rtol, atol * float(np.abs(g64).max())))


def test_matrix_exp_bad_input_and_edges():
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        tt.matrix_exp(tt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        tt.linalg.matrix_exp(tt.zeros(2, 2, dtype=tt.int64))
    assert_close(tt.matrix_exp(tt.zeros(3, 3)), np.eye(3), "float32")
    assert tuple(tt.linalg.matrix_exp(tt.zeros(0, 2, 2)).shape) == (0, 2, 2)


def test_cholesky_methods():
    a = np.random.default_rng(9).uniform(-1, 1, (3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    L = tt.tensor(np.linalg.cholesky(spd))
    b = tt.tensor(np.random.default_rng(10).uniform(-1, 1, (3, 2)))
    assert_close(b.cholesky_solve(L), np.linalg.solve(spd, b.numpy()), "float64")
    assert_close(L.cholesky_inverse(), np.linalg.inv(spd), "float64")
