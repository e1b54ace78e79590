"""Statistics composed from existing ops (tinytorch/_composites/statistics.py): median, nanmedian,
count_nonzero, the nan-reductions and moments, kthvalue, quantile and msort against float64 numpy;
gradients, integer inputs and PyTorch's errors."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, f64_leaves, make, to_numpy


gradcheck = tt.autograd.gradcheck


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_median(dtype):
    x, xr = make((5, 6), dtype, "transposed", seed=4)
    r = xr if dtype != "bfloat16" else to_numpy(x)
    assert x.median().item() == pytest.approx(np.sort(r.reshape(-1))[(r.size - 1) // 2], rel=1e-3)
    values, indices = tt.median(x, dim=1, keepdim=True)
    lower = np.sort(r, axis=1)[:, (6 - 1) // 2][:, None]
    np.testing.assert_array_equal(to_numpy(values), lower)
    np.testing.assert_array_equal(np.take_along_axis(r, indices.numpy(), 1), lower)
    out = x.median(0)
    assert out.values.shape == (6,) and out.indices.dtype == tt.int64


def test_median_nan_gradient_and_int():
    values, indices = tt.median(tt.tensor([[1.0, math.nan, 2.0, math.nan]]), 1)
    assert math.isnan(values.item()) and indices.item() == 1
    assert tt.median(tt.tensor([3, 1, 2, 4])).item() == 2
    a, = f64_leaves((4, 5))
    assert gradcheck(lambda t: tt.median(t, 1)[0], (a,))
    assert gradcheck(lambda t: t.median(), (a,))


def test_count_nonzero():
    x = tt.tensor([[0, 1, 2], [0, 0, 3]])
    assert tt.count_nonzero(x).item() == 3
    assert tt.count_nonzero(x, dim=0).tolist() == [0, 1, 2]
    assert x.count_nonzero(dim=(0, 1)).item() == 3


LAYOUTS = ["contiguous", "transposed", "sliced"]


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


def _x(shape=(3, 4), seed=0):
    return make(shape, "float64", "transposed" if len(shape) == 2 else "contiguous", seed=seed)


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
