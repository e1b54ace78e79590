"""F.affine_grid (2-D and 3-D) and F.grid_sample (bilinear/nearest; zeros/border/reflection padding;
align_corners) against float64 numpy references, with gradients to the input and the grid by
gradcheck."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make

rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def _np_affine_grid(theta, size, ac):
    n, _, h, w = size

    def base(k):
        return np.linspace(-1, 1, k) if ac else (np.arange(k) * 2 + 1) / k - 1

    ys, xs = np.meshgrid(base(h), base(w), indexing="ij")
    pts = np.stack([xs, ys, np.ones_like(xs)], -1)           # (H, W, 3)
    return np.einsum("hwk,njk->nhwj", pts, theta)


def _np_reflect(x, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    d = abs(x - lo)
    flips = math.floor(d / span)
    extra = d - flips * span
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _np_grid_sample(x, grid, mode, pad, ac):
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    out = np.zeros((n, c, ho, wo))

    def coord(g, size):
        v = (g + 1) / 2 * (size - 1) if ac else ((g + 1) * size - 1) / 2
        if pad == "border":
            v = min(max(v, 0), size - 1)
        elif pad == "reflection":
            v = _np_reflect(v, 0, 2 * (size - 1)) if ac else _np_reflect(v, -1, 2 * size - 1)
            v = min(max(v, 0), size - 1)
        return v

    def at(b, i, j):
        return x[b, :, i, j] if 0 <= i < h and 0 <= j < w else np.zeros(c)

    for b, i, j in itertools.product(range(n), range(ho), range(wo)):
        px, py = coord(grid[b, i, j, 0], w), coord(grid[b, i, j, 1], h)
        if mode == "nearest":
            out[b, :, i, j] = at(b, int(np.rint(py)), int(np.rint(px)))
            continue
        x0, y0 = math.floor(px), math.floor(py)
        fx, fy = px - x0, py - y0
        out[b, :, i, j] = (at(b, y0, x0) * (1 - fx) * (1 - fy) + at(b, y0, x0 + 1) * fx * (1 - fy)
                           + at(b, y0 + 1, x0) * (1 - fx) * fy + at(b, y0 + 1, x0 + 1) * fx * fy)
    return out


@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid(ac, dtype):
    theta = rng.standard_normal((2, 2, 3))
    t = tt.tensor(theta, dtype=getattr(tt, dtype))
    got = F.affine_grid(t, [2, 3, 5, 7], align_corners=ac)
    assert list(got.shape) == [2, 5, 7, 2]
    assert_close(got, _np_affine_grid(tt.tensor(theta, dtype=getattr(tt, dtype)).double().numpy(), (2, 3, 5, 7), ac),
                 dtype)
    assert gradcheck(lambda th: F.affine_grid(th, [2, 3, 4, 3], align_corners=ac), (_t64(theta, True),))


def test_affine_grid_3d_and_errors():
    theta = rng.standard_normal((1, 3, 4))
    g = F.affine_grid(_t64(theta), [1, 1, 2, 3, 4], align_corners=True).numpy()
    zs, ys, xs = np.meshgrid(np.linspace(-1, 1, 2), np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    ref = np.einsum("dhwk,njk->ndhwj", np.stack([xs, ys, zs, np.ones_like(xs)], -1), theta)
    assert_close(g, ref, "float64")
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(_t64(np.zeros((1, 3, 3))), [1, 1, 2, 2], align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.affine_grid(_t64(np.zeros((1, 2, 3))), [1, 1, 2, 2])


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_sample(mode, pad, ac, dtype):
    x, xr = make((2, 3, 4, 5), dtype, "transposed", seed=1)
    g, gr = make((2, 3, 4, 2), dtype, "contiguous", low=-1.6, high=1.6, seed=2)
    got = F.grid_sample(x, g, mode, pad, ac)
    assert_close(got, _np_grid_sample(xr, gr, mode, pad, ac), dtype, what=f"{mode} {pad} {ac}")


@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_gradients(pad, ac):
    x = _t64(rng.standard_normal((1, 2, 3, 4)), True)
    # grid points away from pixel boundaries, where bilinear sampling is differentiable
    g = _t64(rng.uniform(-1.3, 1.3, (1, 2, 3, 2)), True)
    assert gradcheck(lambda a, b: F.grid_sample(a, b, "bilinear", pad, ac), (x, g))
    assert gradcheck(lambda a: F.grid_sample(a, g.detach(), "nearest", pad, ac), (x,))


def test_grid_sample_errors():
    x = tt.zeros(1, 1, 2, 2)
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, tt.zeros(1, 2, 2, 2), padding_mode="wrap", align_corners=False)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(x, tt.zeros(1, 2, 2, 2), mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="grid_sampler"):
        F.grid_sample(x, tt.zeros(1, 2, 2, 3), align_corners=False)
