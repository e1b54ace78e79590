"""PyTorch's shape helpers and statistics composed from existing ops (tinytorch/_composites/reshaping.py and
tinytorch/_composites/statistics.py) against numpy, with gradcheck."""
import math

import numpy as np
import pytest

import tinytorch as tt
from conftest import make

gradcheck = tt.autograd.gradcheck


def _x(shape=(3, 4), seed=0):
    return make(shape, "float64", "transposed" if len(shape) == 2 else "contiguous", seed=seed)


def test_tile_ravel_flips_rot90():
    x, xr = _x()
    np.testing.assert_array_equal(tt.tile(x, (2,)).numpy(), np.tile(xr, (1, 2)))
    np.testing.assert_array_equal(x.tile((2, 1, 3)).numpy(), np.tile(xr, (2, 1, 3)))
    np.testing.assert_array_equal(tt.ravel(x).numpy(), xr.ravel())
    np.testing.assert_array_equal(tt.fliplr(x).numpy(), np.fliplr(xr))
    np.testing.assert_array_equal(x.flipud().numpy(), np.flipud(xr))
    for k in (-1, 0, 1, 2, 3, 5):
        np.testing.assert_array_equal(tt.rot90(x, k).numpy(), np.rot90(xr, k))
    y, yr = make((2, 3, 4), "float64", seed=1)
    np.testing.assert_array_equal(tt.rot90(y, 1, (2, 0)).numpy(), np.rot90(yr, 1, (2, 0)))
    a = x.detach().requires_grad_()
    assert gradcheck(lambda t: tt.rot90(t, 3), (a,)) and gradcheck(lambda t: t.tile((2, 2)), (a,))


def test_stacks_and_splits():
    a, b = tt.tensor([1.0, 2.0]), tt.tensor([3.0, 4.0])
    np.testing.assert_array_equal(tt.column_stack([a, b]).numpy(), np.column_stack([a.numpy(), b.numpy()]))
    np.testing.assert_array_equal(tt.dstack([a, b]).numpy(), np.dstack([a.numpy(), b.numpy()]))
    x = tt.arange(7)
    for spec in (3, [1, 5], [4, 2, 9]):
        got = [t.tolist() for t in tt.tensor_split(x, spec)]
        assert got == [t.tolist() for t in np.array_split(np.arange(7), spec)]
    m = tt.arange(12).reshape(3, 4)
    assert [t.shape for t in tt.hsplit(m, 2)] == [(3, 2), (3, 2)]
    assert [t.shape for t in m.vsplit([1])] == [(1, 4), (2, 4)]
    assert [t.shape for t in tt.dsplit(tt.zeros(1, 2, 6), 3)] == [(1, 2, 2)] * 3
    with pytest.raises(RuntimeError, match="not divisible"):
        tt.hsplit(m, 3)
    with pytest.raises(RuntimeError, match="at least 2 dimension"):
        tt.vsplit(x, 7)


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


def test_nan_reductions_and_moments():
    x = tt.tensor([[1.0, math.nan, 3.0], [math.nan, math.nan, 2.0]], dtype=tt.float64)
    xr = x.numpy()
    assert tt.nansum(x).item() == np.nansum(xr)
    np.testing.assert_array_equal(x.nansum(1).numpy(), np.nansum(xr, 1))
    np.testing.assert_allclose(tt.nanmean(x, 1).numpy(), np.nanmean(xr, 1))
    y, yr = _x((4, 5), seed=2)
    s, m = tt.std_mean(y, 1)
    np.testing.assert_allclose(s.numpy(), yr.std(1, ddof=1))
    np.testing.assert_allclose(m.numpy(), yr.mean(1))
    v, m = tt.var_mean(y, correction=0)
    assert v.item() == pytest.approx(yr.var()) and m.item() == pytest.approx(yr.mean())
    mn, mx = tt.aminmax(y, dim=0)
    np.testing.assert_array_equal(mn.numpy(), yr.min(0))
    np.testing.assert_array_equal(mx.numpy(), yr.max(0))


def test_kthvalue_quantile_msort():
    y, yr = _x((4, 5), seed=3)
    vals, idx = tt.kthvalue(y, 2, dim=1)
    np.testing.assert_array_equal(vals.numpy(), np.sort(yr, 1)[:, 1])
    np.testing.assert_array_equal(np.take_along_axis(yr, idx.numpy()[:, None], 1)[:, 0], vals.numpy())
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        np.testing.assert_allclose(tt.quantile(y, 0.3, dim=1, interpolation=method).numpy(),
                                   np.quantile(yr, 0.3, axis=1, method=method), rtol=1e-12)
    q = tt.tensor([0.1, 0.5, 0.9], dtype=tt.float64)
    np.testing.assert_allclose(tt.quantile(y, q).numpy(), np.quantile(yr, [0.1, 0.5, 0.9]), rtol=1e-12)
    np.testing.assert_allclose(tt.quantile(y, 0.5, dim=0, keepdim=True).numpy(),
                               np.quantile(yr, 0.5, axis=0, keepdims=True), rtol=1e-12)
    n = tt.tensor([1.0, math.nan, 3.0, 2.0], dtype=tt.float64)
    assert math.isnan(tt.quantile(n, 0.5).item())
    assert tt.nanquantile(n, 0.5).item() == np.nanquantile(n.numpy(), 0.5)
    np.testing.assert_array_equal(tt.msort(y).numpy(), np.sort(yr, 0))
    a = y.detach().requires_grad_()
    assert gradcheck(lambda t: tt.quantile(t, 0.3, dim=1), (a,))
    with pytest.raises(RuntimeError, match=r"range \[0, 1\]"):
        tt.quantile(y, 1.5)


def test_dist_logit_fmax_fmin():
    a, ar = _x((3,), seed=4)
    b, br = _x((3,), seed=5)
    for p in (1, 2, 3.5, math.inf, 0):
        ref = np.linalg.norm(ar - br, ord=p) if p else np.count_nonzero(ar - br)
        assert tt.dist(a, b, p).item() == pytest.approx(ref)
    assert tt.logit(tt.tensor([0.0, 0.25]), eps=1e-6)[1].item() == pytest.approx(math.log(1 / 3), rel=1e-6)
    x = tt.tensor([1.0, math.nan, math.nan, 4.0])
    y = tt.tensor([math.nan, 2.0, math.nan, 3.0])
    np.testing.assert_array_equal(tt.fmax(x, y).numpy(), np.fmax(x.numpy(), y.numpy()))
    np.testing.assert_array_equal(x.fmin(y).numpy(), np.fmin(x.numpy(), y.numpy()))


def test_queries_and_switches():
    assert tt.result_type(tt.tensor([1]), 1.0) == tt.float32
    assert tt.result_type(tt.tensor([1], dtype=tt.uint8), tt.tensor(5)) == tt.uint8
    assert tt.result_type(tt.tensor(1.0, dtype=tt.float64), tt.tensor([1], dtype=tt.int32)) == tt.float64
    assert tt.result_type(1, 2.0) == tt.float32 and tt.result_type(tt.tensor([True]), True) == tt.bool
    assert tt.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        tt.broadcast_shapes((2,), (3,))
    assert tt.is_floating_point(tt.ones(1)) and not tt.is_floating_point(tt.ones(1).long())
    assert tt.is_complex(tt.ones(1)) is False and tt.is_same_size(tt.ones(2, 3), tt.zeros(2, 3))
    assert tt.is_nonzero(tt.tensor([1.5])) is True
    with pytest.raises(RuntimeError, match="more than one value"):
        tt.is_nonzero(tt.ones(2))
    s = tt.scalar_tensor(3)
    assert s.dim() == 0 and s.dtype == tt.float32 and s.item() == 3.0
    assert tt.typename(tt.ones(1)) == "torch.FloatTensor" and tt.typename(3) == "int"
    try:
        tt.use_deterministic_algorithms(True)
        assert tt.are_deterministic_algorithms_enabled() and tt.backends.cudnn.deterministic
    finally:
        tt.use_deterministic_algorithms(False)
    assert not tt.backends.cudnn.deterministic
    try:
        tt.set_float32_matmul_precision("high")
        assert tt.get_float32_matmul_precision() == "high" and tt.backends.cuda.matmul.allow_tf32
    finally:
        tt.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="Invalid precision"):
        tt.set_float32_matmul_precision("low")


@pytest.mark.parametrize("alias, name", [("absolute", "abs"), ("arcsin", "asin"), ("arccos", "acos"),
                                         ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
                                         ("arctanh", "atanh"), ("fix", "trunc")])
def test_numpy_style_aliases(alias, name):
    x = tt.tensor([0.5, -0.25, 0.75]) if name != "acosh" else tt.tensor([1.5, 2.0, 3.0])
    np.testing.assert_array_equal(getattr(tt, alias)(x).numpy(), getattr(tt, name)(x).numpy())
    np.testing.assert_array_equal(getattr(x, alias)().numpy(), getattr(x, name)().numpy())
    y = x.clone()
    getattr(y, alias + "_")()
    np.testing.assert_array_equal(y.numpy(), getattr(tt, name)(x).numpy())


def test_binary_and_shape_aliases():
    x, y = tt.tensor([1.0, -2.0]), tt.tensor([-1.0, 3.0])
    np.testing.assert_array_equal(tt.arctan2(x, y).numpy(), tt.atan2(x, y).numpy())
    assert tt.not_equal(x, y).tolist() == [True, True] and x.not_equal(x).tolist() == [False, False]
    assert tt.moveaxis(tt.zeros(2, 3, 4), 0, -1).shape == (3, 4, 2)
