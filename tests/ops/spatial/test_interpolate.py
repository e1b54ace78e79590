"""F.interpolate and the Upsample modules against per-pixel numpy references (PyTorch's index
formulas: nearest, nearest-exact; bilinear as a four-neighbour weighted sum; area as block means),
for size and scale_factor, align_corners, every float dtype and layout; gradients by gradcheck.
The deprecated F.upsample, upsample_bilinear and upsample_nearest warn and equal F.interpolate."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make


def _scale(n_in, n_out, sf, align_corners):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / sf if sf is not None else n_in / n_out


def nearest_ref(x, out, sf, exact=False):
    for d, n_out in enumerate(out):
        axis = x.ndim - len(out) + d
        n_in = x.shape[axis]
        s = _scale(n_in, n_out, sf, False)
        idx = [min(int(math.floor((i + 0.5) * s if exact else i * s)), n_in - 1) for i in range(n_out)]
        x = np.take(x, idx, axis=axis)
    return x


def bilinear_ref(x, out, sf, align_corners):
    """Each output pixel from its four input neighbours (not separable passes)."""
    h, w = x.shape[-2:]
    res = np.zeros(x.shape[:-2] + tuple(out))

    def src(i, n_in, n_out):
        s = _scale(n_in, n_out, sf, align_corners)
        v = i * s if align_corners else max((i + 0.5) * s - 0.5, 0.0)
        lo = min(int(math.floor(v)), n_in - 1)
        return lo, min(lo + 1, n_in - 1), v - lo
    for i in range(out[0]):
        y0, y1, ly = src(i, h, out[0])
        for j in range(out[1]):
            x0, x1, lx = src(j, w, out[1])
            res[..., i, j] = ((1 - ly) * (1 - lx) * x[..., y0, x0] + (1 - ly) * lx * x[..., y0, x1]
                              + ly * (1 - lx) * x[..., y1, x0] + ly * lx * x[..., y1, x1])
    return res


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("spec", [dict(scale_factor=2), dict(scale_factor=1.5), dict(size=(3, 7))])
def test_nearest_and_bilinear(spec, dtype, layout):
    x, xr = make((2, 3, 4, 5), dtype, layout, seed=1)
    sf = spec.get("scale_factor")
    out = list(spec["size"]) if "size" in spec else [int(math.floor(n * sf)) for n in (4, 5)]
    rtol, atol = TOL[dtype]
    tol = (rtol * 4, atol * 4)
    assert_close(F.interpolate(x, mode="nearest", **spec), nearest_ref(xr, out, sf), dtype)
    assert_close(F.interpolate(x, mode="nearest-exact", **spec), nearest_ref(xr, out, sf, exact=True), dtype)
    for ac in (False, True):
        assert_close(F.interpolate(x, mode="bilinear", align_corners=ac, **spec), bilinear_ref(xr, out, sf, ac),
                     dtype, tol)


def test_linear_area_and_3d_nearest():
    x, xr = make((2, 3, 7), "float64", seed=2)
    ref = bilinear_ref(xr[:, :, None, :], [1, 11], None, False)[:, :, 0]
    assert_close(F.interpolate(x, size=11, mode="linear"), ref)
    y, yr = make((1, 2, 6, 9), "float64", seed=3)
    assert_close(F.interpolate(y, size=(2, 3), mode="area"), yr.reshape(1, 2, 2, 3, 3, 3).mean((3, 5)))
    v, vr = make((1, 1, 2, 3, 2), "float64", seed=4)
    assert_close(F.interpolate(v, scale_factor=2), vr.repeat(2, 2).repeat(2, 3).repeat(2, 4))
    up = F.interpolate(y, scale_factor=3, mode="bilinear", align_corners=True)
    assert_close(up[..., 0, 0], yr[..., 0, 0])                # corners stay put
    assert_close(up[..., -1, -1], yr[..., -1, -1])


@pytest.mark.parametrize("mode,ac", [("nearest", None), ("bilinear", False), ("bilinear", True), ("area", None)])
def test_interpolate_gradients(mode, ac):
    x, _ = make((1, 2, 3, 4), "float64", "transposed", requires_grad=True)
    assert gradcheck(lambda t: F.interpolate(t, size=(5, 3), mode=mode, align_corners=ac), (x,))


def test_upsample_modules_and_errors():
    x, xr = make((1, 1, 2, 3), "float64")
    assert_close(nn.Upsample(scale_factor=2)(x), xr.repeat(2, 2).repeat(2, 3))
    assert_close(nn.UpsamplingNearest2d(size=(4, 6))(x), xr.repeat(2, 2).repeat(2, 3))
    assert_close(nn.UpsamplingBilinear2d(scale_factor=2)(x), bilinear_ref(xr, [4, 6], None, True))
    assert "scale_factor=2.0, mode='nearest'" in repr(nn.Upsample(scale_factor=2))
    with pytest.raises(ValueError, match="not both"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners option"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="expects an input with"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.interpolate(x, scale_factor=2, mode="bicubic")


def test_deprecated_upsample_names():
    x = make((1, 2, 3, 4), seed=21)[0]
    with pytest.warns(UserWarning, match="deprecated"):
        a = F.upsample(x, scale_factor=2)
    np.testing.assert_array_equal(a.numpy(), F.interpolate(x, scale_factor=2).numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        b = F.upsample_bilinear(x, size=(5, 7))
    np.testing.assert_array_equal(b.numpy(), F.interpolate(x, (5, 7), mode="bilinear", align_corners=True).numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        c = F.upsample_nearest(x, size=(6, 8))
    np.testing.assert_array_equal(c.numpy(), F.interpolate(x, (6, 8)).numpy())
