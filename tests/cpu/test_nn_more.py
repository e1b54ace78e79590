"""Layers composed from existing ops against numpy formulas: SELU, CELU, Softsign, Tanhshrink,
Threshold, GLU, PReLU, PixelShuffle/Unshuffle, Dropout1d/2d, InstanceNorm1d/2d (running stats too),
the padding layers, CosineSimilarity, PairwiseDistance; gradients by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from conftest import FLOAT_DTYPES, TOL, assert_close, make, to_numpy

ALPHA, SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
ACTIVATIONS = {
    "selu": (nn.SELU(), lambda x: SCALE * np.where(x > 0, x, ALPHA * np.expm1(x))),
    "celu": (nn.CELU(0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x / 0.7))),
    "softsign": (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    "threshold": (nn.Threshold(0.1, -2.0), lambda x: np.where(x > 0.1, x, -2.0)),
    "glu": (nn.GLU(1), lambda x: x[:, :2] / (1 + np.exp(-x[:, 2:]))),
    "hardshrink": (nn.Hardshrink(0.6), lambda x: np.where(np.abs(x) > 0.6, x, 0.0)),
    "softshrink": (nn.Softshrink(0.6), lambda x: np.where(x > 0.6, x - 0.6, np.where(x < -0.6, x + 0.6, 0.0))),
    "softmin": (nn.Softmin(1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
    "hardsigmoid": (nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations(name, dtype, layout):
    module, ref = ACTIVATIONS[name]
    x, xr = make((3, 4, 5), dtype, layout, seed=len(name))
    rtol, atol = TOL[dtype]
    assert_close(module(x), ref(xr), dtype, (rtol * 4, atol * 4))
    xg, _ = make((2, 4, 3), "float64", seed=1, requires_grad=True)
    assert gradcheck(module, (xg,))


def test_prelu():
    m = nn.PReLU(3).double()
    with tt.no_grad():
        m.weight.copy_(tt.tensor([0.1, 0.2, 0.3], dtype=tt.float64))
    x, xr = make((2, 3, 4), "float64")
    assert_close(m(x), np.where(xr > 0, xr, xr * np.array([0.1, 0.2, 0.3])[None, :, None]))
    assert_close(nn.PReLU()(x.float()), np.where(xr > 0, xr, 0.25 * xr), "float32")
    x.requires_grad_()
    assert gradcheck(lambda a, w: F.prelu(a, w), (x, m.weight))


def test_pixel_shuffle_round_trip():
    x, xr = make((2, 8, 3, 4), "float64", "transposed")
    ref = xr.reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    y = nn.PixelShuffle(2)(x)
    assert_close(y, ref)
    assert_close(nn.PixelUnshuffle(2)(y), xr)
    assert_close(F.pixel_shuffle(x[0], 2), ref[0])               # unbatched
    with pytest.raises(RuntimeError, match="divisible by the square"):
        F.pixel_shuffle(tt.zeros(1, 3, 2, 2), 2)


@pytest.mark.parametrize("cls,shape", [(nn.Dropout1d, (4, 16, 7)), (nn.Dropout2d, (4, 16, 3, 5))])
def test_channel_dropout(cls, shape):
    tt.manual_seed(0)
    m = cls(0.4)
    x = tt.ones(*shape)
    y = to_numpy(m(x)).reshape(shape[0], shape[1], -1)
    per_channel = y[:, :, 0]
    assert np.all((per_channel == 0) | np.isclose(per_channel, 1 / 0.6))
    assert (y == per_channel[:, :, None]).all()                 # whole channels kept or zeroed
    assert 0.2 < (per_channel == 0).mean() < 0.6
    m.eval()
    assert_close(m(x), np.ones(shape))


def test_instance_norm():
    x, xr = make((3, 4, 5, 6), "float64", seed=2)
    mu, var = xr.mean((2, 3), keepdims=True), xr.var((2, 3), keepdims=True)
    assert_close(nn.InstanceNorm2d(4)(x), (xr - mu) / np.sqrt(var + 1e-5))
    m = nn.InstanceNorm2d(4, affine=True, track_running_stats=True, momentum=0.3).double()
    with tt.no_grad():
        m.weight.copy_(tt.tensor([1.0, 2.0, 3.0, 4.0], dtype=tt.float64))
    y = m(x)
    assert_close(y, (xr - mu) / np.sqrt(var + 1e-5) * np.array([1, 2, 3, 4.0])[None, :, None, None])
    n_unbiased = 30 / 29
    assert_close(m.running_mean, 0.3 * mu.mean((0, 2, 3)))
    assert_close(m.running_var, 0.7 + 0.3 * (var * n_unbiased).mean((0, 2, 3)))
    m.eval()
    rm, rv = to_numpy(m.running_mean), to_numpy(m.running_var)
    ref = (xr - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5) * np.array([1, 2, 3, 4.0])[
        None, :, None, None]
    assert_close(m(x), ref)
    x1, x1r = make((4, 7), "float64", seed=3)                  # InstanceNorm1d on unbatched (C, L)
    assert_close(nn.InstanceNorm1d(4)(x1), (x1r - x1r.mean(1, keepdims=True)) / np.sqrt(x1r.var(1, keepdims=True) + 1e-5))


def test_padding_layers():
    x, xr = make((2, 3, 4, 5), "float64", "transposed")
    cases = [(nn.ZeroPad2d((1, 2, 0, 1)), dict(mode="constant")), (nn.ConstantPad2d(1, 2.5), dict(mode="constant",
             constant_values=2.5)), (nn.ReflectionPad2d((2, 1, 1, 3)), dict(mode="reflect")),
             (nn.ReplicationPad2d(2), dict(mode="edge")), (nn.CircularPad2d((1, 0, 2, 1)), dict(mode="wrap"))]
    for m, kw in cases:
        p = m.padding
        assert_close(m(x), np.pad(xr, ((0, 0), (0, 0), (p[2], p[3]), (p[0], p[1])), **kw), what=repr(m))
    assert_close(nn.ReflectionPad1d(2)(x[0]), np.pad(xr[0], ((0, 0), (0, 0), (2, 2)), mode="reflect"))
    assert repr(nn.ConstantPad1d((1, 2), 3.5)) == "ConstantPad1d(padding=(1, 2), value=3.5)"


def test_distance_modules():
    a, ar = make((4, 6), "float64", seed=4)
    b, br = make((4, 6), "float64", seed=5)
    cs = (ar * br).sum(1) / (np.linalg.norm(ar, axis=1) * np.linalg.norm(br, axis=1))
    assert_close(nn.CosineSimilarity()(a, b), cs)
    assert_close(nn.PairwiseDistance(3.0)(a, b), (np.abs(ar - br + 1e-6) ** 3).sum(1) ** (1 / 3))
    assert_close(nn.PairwiseDistance(keepdim=True)(a, b), np.linalg.norm(ar - br + 1e-6, axis=1, keepdims=True))


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


def _im2col_ref(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    ho = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    wo = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], ho, wo))
    for a in range(k[0]):
        for b in range(k[1]):
            cols[:, :, a, b] = xp[:, :, a * d[0]:a * d[0] + s[0] * ho:s[0], b * d[1]:b * d[1] + s[1] * wo:s[1]]
    return cols.reshape(n, c * k[0] * k[1], ho * wo)


def test_unfold_fold():
    x, xr = make((2, 3, 6, 7), "float64", "transposed", seed=9)
    kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 1), stride=(2, 1))
    cols = nn.Unfold(**kw)(x)
    assert_close(cols, _im2col_ref(xr, (2, 3), (2, 1), (1, 1), (2, 1)))
    blocks = nn.Unfold(kernel_size=2, stride=2)(x[:, :, :, :6])     # non-overlapping: fold undoes unfold
    assert_close(nn.Fold((6, 6), kernel_size=2, stride=2)(blocks), xr[:, :, :, :6])
    ones = nn.Fold((4, 4), kernel_size=3)(tt.ones(1, 9, 4, dtype=tt.float64))
    counts = np.zeros((4, 4))
    for i in range(2):
        for j in range(2):
            counts[i:i + 3, j:j + 3] += 1
    assert_close(ones[0, 0], counts)                                  # overlaps are summed
    x.requires_grad_()
    assert gradcheck(lambda t: F.fold(F.unfold(t, **kw) * 2, (6, 7), **kw), (x,))
