"""3-D pooling with indices (max_pool3d / adaptive_max_pool3d with return_indices), max_unpool3d,
lp_pool3d and MaxUnpool3d / LPPool3d against float64 numpy loops over windows: values, flat
(D, H, W) indices (the first maximum in scan order on ties, as PyTorch's), padding, dilation,
ceil_mode; every float dtype; gradients by gradcheck."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, GRAD_TOL, assert_close, make


def _t3(v):
    return (v,) * 3 if isinstance(v, int) else tuple(v)


def _out_len(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil_mode else span // s) + 1
    return out - 1 if ceil_mode and (out - 1) * s >= n + p else out


def max_pool3d_ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Windows in (d, h, w) scan order; the first maximum wins."""
    k, p, dl = _t3(kernel_size), _t3(padding), _t3(dilation)
    s = k if stride is None else _t3(stride)
    n, c, *size = x.shape
    out_sz = [_out_len(size[i], k[i], s[i], p[i], dl[i], ceil_mode) for i in range(3)]
    vals, idx = np.full((n, c, *out_sz), -np.inf), np.zeros((n, c, *out_sz), dtype=np.int64)
    for o in np.ndindex(*out_sz):
        for tap in np.ndindex(*k):
            pos = [o[i] * s[i] - p[i] + tap[i] * dl[i] for i in range(3)]
            if any(not 0 <= pos[i] < size[i] for i in range(3)):
                continue
            v = x[:, :, pos[0], pos[1], pos[2]]
            better = v > vals[(slice(None), slice(None)) + o]
            vals[(slice(None), slice(None)) + o] = np.where(better, v, vals[(slice(None), slice(None)) + o])
            flat = (pos[0] * size[1] + pos[1]) * size[2] + pos[2]
            idx[(slice(None), slice(None)) + o] = np.where(better, flat, idx[(slice(None), slice(None)) + o])
    return vals, idx


def adaptive_max_pool3d_ref(x, out_sz):
    n, c, *size = x.shape
    vals, idx = np.zeros((n, c, *out_sz)), np.zeros((n, c, *out_sz), dtype=np.int64)
    for o in np.ndindex(*out_sz):
        lo = [(o[i] * size[i]) // out_sz[i] for i in range(3)]
        hi = [-((-(o[i] + 1) * size[i]) // out_sz[i]) for i in range(3)]
        win = x[:, :, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]].reshape(n, c, -1)
        a = win.argmax(-1)
        dd, hh, ww = np.unravel_index(a, (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]))
        vals[(slice(None), slice(None)) + o] = win.max(-1)
        idx[(slice(None), slice(None)) + o] = ((dd + lo[0]) * size[1] + hh + lo[1]) * size[2] + ww + lo[2]
    return vals, idx


CASES = [
    ((2, 3, 5, 6, 7), dict(kernel_size=2)),
    ((2, 2, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 6, 5, 6), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), dilation=(2, 1, 1))),
    ((1, 2, 7, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_max_pool3d_with_indices(case, dtype):
    xs, kw = CASES[case]
    x, xr = make(xs, dtype, "transposed", seed=case)
    vals, idx = F.max_pool3d(x, return_indices=True, **kw)
    rv, ri = max_pool3d_ref(xr, **kw)
    assert vals.dtype == x.dtype and idx.dtype == tt.int64
    assert_close(vals, rv, dtype)
    np.testing.assert_array_equal(idx.numpy(), ri)
    v2, i2 = F.max_pool3d_with_indices(x[0], **kw)        # unbatched
    assert_close(v2, rv[0], dtype)
    np.testing.assert_array_equal(i2.numpy(), ri[0])


def test_max_pool3d_ties_pick_the_first_in_scan_order():
    x = tt.tensor(np.round(np.random.default_rng(0).standard_normal((1, 2, 4, 4, 4)), 0))   # many ties
    vals, idx = F.max_pool3d(x, 2, return_indices=True)
    rv, ri = max_pool3d_ref(x.numpy(), 2)
    assert_close(vals, rv, "float32")
    np.testing.assert_array_equal(idx.numpy(), ri)


@pytest.mark.parametrize("xs, out", [((2, 3, 5, 6, 7), (2, 3, 4)), ((1, 2, 4, 4, 4), (4, 2, 2)),
                                     ((1, 2, 5, 6, 7), (3, 4, 5))])
def test_adaptive_max_pool3d_with_indices(xs, out):
    x, xr = make(xs, "float64", "transposed", seed=7)
    vals, idx = F.adaptive_max_pool3d(x, out, return_indices=True)
    rv, ri = adaptive_max_pool3d_ref(xr, out)
    assert_close(vals, rv, "float64")
    np.testing.assert_array_equal(idx.numpy(), ri)
    m = nn.AdaptiveMaxPool3d(out, return_indices=True)
    np.testing.assert_array_equal(m(x)[1].numpy(), ri)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_max_pool3d_gradcheck(case):
    xs, kw = CASES[case]
    x, _ = make((1, 1) + xs[2:], "float64", "transposed", seed=case, requires_grad=True)
    assert gradcheck(lambda t: F.max_pool3d(t, return_indices=True, **kw)[0], (x,))
    assert gradcheck(lambda t: F.adaptive_max_pool3d_with_indices(t, (2, 3, 2))[0], (x,))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_unpool3d_roundtrip(dtype):
    x, xr = make((2, 3, 4, 6, 6), dtype, seed=3)
    vals, idx = F.max_pool3d(x, 2, return_indices=True)
    up = F.max_unpool3d(vals, idx, 2)
    want = np.zeros_like(xr).reshape(2, 3, -1)
    np.put_along_axis(want, idx.numpy().reshape(2, 3, -1), vals.double().numpy().reshape(2, 3, -1), -1)
    assert_close(up, want.reshape(xr.shape), dtype)
    m = nn.MaxUnpool3d(2)
    assert repr(m) == "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))"
    assert_close(m(vals, idx, output_size=[4, 6, 6]), want.reshape(xr.shape), dtype)
    with pytest.raises(RuntimeError, match="max_unpool3d: found an invalid max index"):
        F.max_unpool3d(vals, idx + 1000, 2)
    with pytest.raises(RuntimeError, match="expected shape of indices to be same as that of the input"):
        F.max_unpool3d(vals, idx[:, :1], 2)


def lp_pool3d_ref(x, p, k):
    n, c, d, h, w = x.shape
    out = np.zeros((n, c, d // k, h // k, w // k))
    for o in np.ndindex(d // k, h // k, w // k):
        win = x[:, :, o[0] * k:o[0] * k + k, o[1] * k:o[1] * k + k, o[2] * k:o[2] * k + k]
        out[(slice(None), slice(None)) + o] = (win ** p).sum((2, 3, 4)) ** (1 / p)
    return out


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_lp_pool3d(p, dtype):
    x, xr = make((2, 2, 4, 4, 6), dtype, "transposed", low=0.1, high=2.0, seed=int(p))
    tol = None if dtype in ("float32", "float64") else GRAD_TOL[dtype]   # a power, a mean, a root
    assert_close(F.lp_pool3d(x, p, 2), lp_pool3d_ref(xr, p, 2), dtype, tol=tol)
    m = nn.LPPool3d(p, 2)
    assert repr(m) == f"LPPool3d(norm_type={p}, kernel_size=2, stride=None, ceil_mode=False)"
    assert_close(m(x), lp_pool3d_ref(xr, p, 2), dtype, tol=tol)
    g, _ = make((1, 1, 4, 2, 4), "float64", low=0.1, high=2.0, seed=9, requires_grad=True)
    assert gradcheck(lambda t: F.lp_pool3d(t, p, 2), (g,))
