"""The 3-D nn layers (avg/max pool3d, adaptive pool3d, BatchNorm3d /
InstanceNorm3d, Dropout3d) against float64 numpy references, with gradients by gradcheck."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make

rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def _np_pool3d(x, k, s, p, reduce, ceil=False, include_pad=True):
    # direct windows over (D, H, W) of (N, C, D, H, W), float64
    fill = -np.inf if reduce == "max" else 0.0
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p], constant_values=fill)
    valid = np.pad(np.ones(x.shape[2:]), [(q, q) for q in p])
    outs = []
    for d in range(3):
        n = x.shape[2 + d] + 2 * p[d] - k[d]
        o = (-(-n // s[d]) if ceil else n // s[d]) + 1
        if ceil and (o - 1) * s[d] >= x.shape[2 + d] + p[d]:
            o -= 1
        outs.append(o)
    out = np.zeros(x.shape[:2] + tuple(outs))
    for i, j, l in itertools.product(*(range(o) for o in outs)):
        sl = tuple(slice(a * st, a * st + kk) for a, st, kk in zip((i, j, l), s, k))
        win = xp[(slice(None), slice(None)) + sl]
        if reduce == "max":
            out[:, :, i, j, l] = win.max((2, 3, 4))
        else:
            # count_include_pad: the window clipped to the padded input; else the valid elements
            cnt = valid[sl].sum() if not include_pad else np.prod([w for w in win.shape[2:]])
            out[:, :, i, j, l] = win.sum((2, 3, 4)) / cnt
    return out


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("k, s, p", [((2, 2, 2), (2, 2, 2), (0, 0, 0)), ((3, 2, 3), (2, 1, 2), (1, 0, 1))])
def test_pool3d(dtype, k, s, p):
    x, xr = make((2, 2, 5, 4, 6), dtype, "transposed", seed=22)
    assert_close(nn.MaxPool3d(k, s, p)(x), _np_pool3d(xr, k, s, p, "max"), dtype)
    for include in (True, False):
        assert_close(nn.AvgPool3d(k, s, p, count_include_pad=include)(x),
                     _np_pool3d(xr, k, s, p, "avg", include_pad=include), dtype)
    g = _t64(rng.standard_normal((1, 2, 4, 4, 5)), True)
    assert gradcheck(lambda a: F.avg_pool3d(a, k, s, p), (g,))
    assert gradcheck(lambda a: F.max_pool3d(a, k, s, p), (g,))
    vals, _ = F.max_pool3d(x, k, s, p, return_indices=True)      # indices: tests/ops/pool/test_pooling3d.py
    assert_close(vals, _np_pool3d(xr, k, s, p, "max"), dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_adaptive_pool3d(dtype):
    x, xr = make((2, 3, 5, 4, 7), dtype, "sliced", seed=23)
    out = (2, None, 3)
    sizes = (2, 4, 3)

    def windows(n, o):
        return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]

    ref_avg, ref_max = np.zeros((2, 3) + sizes), np.zeros((2, 3) + sizes)
    for (i, (d0, d1)), (j, (h0, h1)), (l, (w0, w1)) in itertools.product(
            enumerate(windows(5, 2)), enumerate(windows(4, 4)), enumerate(windows(7, 3))):
        win = xr[:, :, d0:d1, h0:h1, w0:w1]
        ref_avg[:, :, i, j, l] = win.mean((2, 3, 4))
        ref_max[:, :, i, j, l] = win.max((2, 3, 4))
    assert_close(nn.AdaptiveAvgPool3d(out)(x), ref_avg, dtype)
    assert_close(nn.AdaptiveMaxPool3d(out)(x), ref_max, dtype)
    assert gradcheck(lambda a: F.adaptive_avg_pool3d(a, (2, 3, 2)), (_t64(rng.standard_normal((1, 1, 5, 4, 3)), True),))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norm3d_and_dropout3d(dtype):
    x, xr = make((2, 3, 3, 4, 2), dtype, "transposed", seed=24)
    bn = nn.BatchNorm3d(3)
    mean, var = xr.mean((0, 2, 3, 4), keepdims=True), xr.var((0, 2, 3, 4), keepdims=True)
    assert_close(bn(x), (xr - mean) / np.sqrt(var + 1e-5), dtype)
    mean, var = xr.mean((2, 3, 4), keepdims=True), xr.var((2, 3, 4), keepdims=True)
    assert_close(nn.InstanceNorm3d(3)(x), (xr - mean) / np.sqrt(var + 1e-5), dtype)
    with pytest.raises(ValueError):
        bn(x[0, 0])
    d = nn.Dropout3d(0.5)(tt.ones(4, 8, 2, 3, 2, dtype=getattr(tt, dtype))).numpy()
    assert set(np.unique(d)) <= {0.0, 2.0} and np.all(d == d[:, :, :1, :1, :1])
