"""meshgrid, cartesian_prod, diff, cross, cdist, block_diag, cov, corrcoef, trapezoid, bincount,
bucketize/searchsorted, histc and unique against numpy; gradients of the differentiable ones by
gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make, to_numpy

rng = np.random.default_rng(0)


def test_grids_and_differences():
    x, xr = make((4,), "float64", seed=1)
    y, yr = make((3,), "float64", seed=2)
    for ind in ("ij", "xy"):
        for g, r in zip(tt.meshgrid(x, y, indexing=ind), np.meshgrid(xr, yr, indexing=ind)):
            assert_close(g, r)
    assert_close(tt.cartesian_prod(x, y), np.stack([a.reshape(-1) for a in np.meshgrid(xr, yr, indexing="ij")], 1))
    m, mr = make((3, 5), "float64", "transposed", seed=3)
    assert_close(tt.diff(m, n=2, dim=1, prepend=m[:, :1]), np.diff(mr, n=2, axis=1, prepend=mr[:, :1]))
    a, ar = make((4, 3), "float64", seed=4)
    b, br = make((4, 3), "float64", seed=5)
    assert_close(tt.cross(a, b, dim=1), np.cross(ar, br))
    assert_close(tt.trapezoid(m, dx=0.5), np.trapezoid(mr, dx=0.5))
    xs = np.sort(rng.standard_normal(5))
    assert_close(tt.trapz(m, tt.tensor(xs)), np.trapezoid(mr, xs))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
def test_cdist(p):
    a, ar = make((2, 5, 3), "float64", seed=6)
    b, br = make((2, 4, 3), "float64", seed=7)
    d = ar[:, :, None, :] - br[:, None, :, :]
    ref = np.abs(d).max(-1) if p == float("inf") else (np.abs(d) ** p).sum(-1) ** (1 / p)
    assert_close(tt.cdist(a, b, p), ref)
    if p != float("inf"):
        a.requires_grad_()
        assert gradcheck(lambda t: tt.cdist(t, b, p), (a,))


def test_matrices_and_statistics():
    m, mr = make((3, 5), "float64", seed=8)
    v, vr = make((4,), "float64", seed=9)
    ref = np.zeros((5, 10))                      # blocks: (3, 5), a (1, 4) row, a (1, 1) scalar
    ref[:3, :5], ref[3, 5:9], ref[4, 9] = mr, vr, 2.0
    assert_close(tt.block_diag(m, v, tt.tensor(2.0, dtype=tt.float64)), ref)
    assert_close(tt.cov(m), np.cov(mr))
    assert_close(tt.cov(m, correction=0), np.cov(mr, bias=True))
    assert_close(tt.corrcoef(m), np.corrcoef(mr))
    m.requires_grad_()
    assert gradcheck(tt.corrcoef, (m,))


def test_counting_and_searching():
    ints = rng.integers(0, 6, 20)
    wts = rng.standard_normal(20)
    assert_close(tt.bincount(tt.tensor(ints), minlength=8), np.bincount(ints, minlength=8))
    assert_close(tt.bincount(tt.tensor(ints), tt.tensor(wts)), np.bincount(ints, wts))
    bnd, vals = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([-2.0, 0.0, 0.3, 0.5, 3.0, -1.0])
    assert_close(tt.bucketize(tt.tensor(vals), tt.tensor(bnd)), np.searchsorted(bnd, vals, side="left"))
    assert_close(tt.bucketize(tt.tensor(vals), tt.tensor(bnd), right=True), np.searchsorted(bnd, vals, side="right"))
    seq = np.sort(rng.standard_normal((3, 6)), 1)
    q = rng.standard_normal((3, 4))
    ref = np.stack([np.searchsorted(seq[i], q[i], side="right") for i in range(3)])
    assert_close(tt.searchsorted(tt.tensor(seq), tt.tensor(q), side="right"), ref)
    hv = rng.standard_normal(50)
    assert_close(tt.histc(tt.tensor(hv), bins=7, min=-1, max=1), np.histogram(hv[(hv >= -1) & (hv <= 1)], 7, (-1, 1))[0])
    u = rng.integers(0, 5, (3, 4))
    vals_u, inv, counts = tt.unique(tt.tensor(u), return_inverse=True, return_counts=True)
    rv, ri, rc = np.unique(u, return_inverse=True, return_counts=True)
    assert_close(vals_u, rv)
    assert_close(inv, ri.reshape(u.shape))
    assert_close(counts, rc)
    with pytest.raises(RuntimeError, match="non-negative integral"):
        tt.bincount(tt.tensor([-1, 2]))
    assert to_numpy(tt.unique(tt.tensor([3, 1, 3]))).tolist() == [1, 3]

