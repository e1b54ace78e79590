"""lp_pool1d/2d, max_unpool1d/2d, adaptive_max_pool2d and the *_with_indices spellings against
float64 numpy loops over the windows; gradients by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make, to_numpy


def _adaptive_max_ref(x, ho, wo):
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + (ho, wo))
    for i in range(ho):
        for j in range(wo):
            win = x[..., (i * h) // ho:-(-(i + 1) * h // ho), (j * w) // wo:-(-(j + 1) * w // wo)]
            out[..., i, j] = win.max((-2, -1))
    return out


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 9), (3, 4)), ((2, 3, 8, 6), (4, 3)), ((3, 5, 5), (2, 5))])
def test_adaptive_max_pool(shape, out):
    x, xr = make(shape, "float64", "transposed", seed=6)
    y, idx = nn.AdaptiveMaxPool2d(out, return_indices=True)(x)
    assert_close(y, _adaptive_max_ref(xr, *out))
    flat = xr.reshape(*xr.shape[:-2], -1)
    assert_close(y, np.take_along_axis(flat, to_numpy(idx).reshape(*xr.shape[:-2], -1).astype(int), -1).reshape(
        y.shape))
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, out), (make(shape, "float64", seed=7, requires_grad=True)[0],))
    x1, x1r = make((2, 3, 10), "float64", seed=8)
    assert_close(nn.AdaptiveMaxPool1d(4)(x1), _adaptive_max_ref(x1r[:, :, None, :], 1, 4)[:, :, 0])


rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def _np_windows(x, k, s):
    # (..., L) -> (..., Lo, k)
    lo = (x.shape[-1] - k) // s + 1
    return np.stack([x[..., i * s:i * s + k] for i in range(lo)], -2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.5])
def test_lp_pool(dtype, p):
    x, xr = make((2, 3, 9), dtype, "sliced", low=0.1, high=2.0, seed=3)
    assert_close(F.lp_pool1d(x, p, 3, 2), (_np_windows(xr, 3, 2) ** p).sum(-1) ** (1 / p), dtype)
    x2, xr2 = make((2, 3, 6, 7), dtype, "transposed", low=0.1, high=2.0, seed=4)
    ref = np.array([[[[(xr2[n, c, i * 2:i * 2 + 2, j * 3:j * 3 + 3] ** p).sum() ** (1 / p) for j in range(2)]
                      for i in range(3)] for c in range(3)] for n in range(2)])
    assert_close(nn.LPPool2d(p, (2, 3))(x2), ref, dtype)
    assert gradcheck(lambda a: F.lp_pool2d(a, p, 2), (_t64(rng.uniform(0.2, 2, (1, 2, 4, 4)), True),))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_unpool(dtype):
    x, xr = make((2, 3, 4, 6), dtype, "transposed", seed=5)
    y, idx = F.max_pool2d_with_indices(x, 2)
    out = nn.MaxUnpool2d(2)(y, idx)
    ref = np.zeros((2, 3, 4 * 6))
    np.put_along_axis(ref, idx.numpy().reshape(2, 3, -1), y.double().numpy().reshape(2, 3, -1), -1)
    assert_close(out, ref.reshape(2, 3, 4, 6), dtype)
    # every maximum lands where it came from
    assert_close(out.double().numpy()[out.double().numpy() != 0], xr[out.double().numpy() != 0], dtype)
    y1, i1 = F.max_pool1d_with_indices(x[0], 2)
    assert list(F.max_unpool1d(y1, i1, 2, output_size=[3, 4, 7]).shape) == [3, 4, 7]
    idx64 = idx.clone()
    assert gradcheck(lambda a: F.max_unpool2d(a, idx64, 2), (_t64(rng.standard_normal((2, 3, 2, 3)), True),))
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y, idx * 100, 2)
    with pytest.raises(ValueError, match="output_size"):
        F.max_unpool2d(y, idx, 2, output_size=[9, 9])


def test_with_indices_spellings():
    x = make((2, 3, 6, 6), seed=6)[0]
    for a, b in [(F.max_pool2d_with_indices(x, 2), F.max_pool2d(x, 2, return_indices=True)),
                 (F.max_pool1d_with_indices(x[0], 3), F.max_pool1d(x[0], 3, return_indices=True)),
                 (F.adaptive_max_pool2d_with_indices(x, 4), F.adaptive_max_pool2d(x, 4, True)),
                 (F.adaptive_max_pool1d_with_indices(x[0], 4), F.adaptive_max_pool1d(x[0], 4, True))]:
        np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
        np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())
