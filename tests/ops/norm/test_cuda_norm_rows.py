"""The row-in-registers CUDA kernels (cuda/src/norm_rows.cuh) against float64 numpy references:
layer_norm / rms_norm forward and backward (x, weight, bias gradients) and softmax / log_softmax, at
widths that reach every (threads per row, vectors per thread) configuration, partly filled last
vectors, widths that fall back to the general kernels (odd, not a multiple of the vector width, over
4096 vectors), and non-contiguous inputs.

Run on a GPU machine:  python -m pytest -q tests/ops/norm/test_cuda_norm_rows.py"""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import GRAD_TOL, TOL, assert_close, make, to_numpy

pytestmark = pytest.mark.cuda

DTYPES = ["float32", "float16", "bfloat16"]
# 16-bit: 8 elements a vector, float32: 4. Warp rows (<= 1024) with 1, 2, 4, 8 vectors a lane;
# block rows with 128, 256, 512 threads x 4 and 512 x 8; 1023 / 1030 / 16390 / 40000: general kernels.
WIDTHS = [8, 256, 264, 520, 1000, 1023, 1024, 1030, 2056, 4096, 8200, 16384, 16392, 16390, 40000]


def _layout(D):
    return "transposed" if D in (264, 2056) else "contiguous"


def _norm_ref(x, g, w, b, eps, rms):
    """float64 forward and backward of layer_norm (rms=False) / rms_norm over the last dim."""
    D = x.shape[-1]
    mu = np.zeros(x.shape[:-1] + (1,)) if rms else x.mean(-1, keepdims=True)
    var = (x * x).mean(-1, keepdims=True) if rms else ((x - mu) ** 2).mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = (x - mu) * rstd
    y = xhat * w + (0 if b is None else b)
    gh = g * w
    mean_gh = 0 if rms else gh.sum(-1, keepdims=True) / D
    gx = rstd * (gh - mean_gh - xhat * (gh * xhat).sum(-1, keepdims=True) / D)
    return y, gx, (g * xhat).sum(0), g.sum(0)


@pytest.mark.parametrize("D", WIDTHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_norm_rows_vs_float64(kind, dtype, D):
    rms = kind == "rms_norm"
    N = 37 if D <= 16392 else 5
    x, xr = make((N, D), dtype, _layout(D), seed=D)
    g, gr = make((N, D), dtype, low=-1, high=1, seed=D + 1)
    w, wr = make((D,), dtype, low=0.5, high=1.5, seed=D + 2)
    b, br = make((D,), dtype, low=-0.5, high=0.5, seed=D + 3)
    x, g, w, b = x.cuda().requires_grad_(), g.cuda(), w.cuda().requires_grad_(), b.cuda().requires_grad_()
    eps = 1e-6 if rms else 1e-5
    y = F.rms_norm(x, (D,), w, eps) if rms else F.layer_norm(x, (D,), w, b, eps)
    (y * g).sum().backward()
    ey, egx, egw, egb = _norm_ref(xr, gr, wr, None if rms else br, eps, rms)
    assert_close(y, ey, dtype, what=f"{kind} y D={D}")
    assert_close(x.grad, egx, dtype, tol=GRAD_TOL[dtype], what=f"{kind} grad x D={D}")
    # sums over N rows of values rounded to dtype: scale by the sum of magnitudes
    scale = np.abs(gr).sum(0) + 1.0
    assert_close(to_numpy(w.grad) / scale, egw / scale, dtype, tol=GRAD_TOL[dtype], what=f"{kind} grad w D={D}")
    if not rms:
        assert_close(to_numpy(b.grad) / scale, egb / scale, dtype, tol=GRAD_TOL[dtype], what=f"{kind} grad b D={D}")


@pytest.mark.parametrize("D", [256, 4096])
def test_norm_rows_no_affine(D):
    x, xr = make((19, D), "bfloat16", seed=3)
    y = F.layer_norm(x.cuda(), (D,))
    ey, *_ = _norm_ref(xr, np.zeros_like(xr), 1.0, None, 1e-5, False)
    assert_close(y, ey, "bfloat16", what="layer_norm without weight")


@pytest.mark.parametrize("D", WIDTHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_rows_vs_float64(fn, dtype, D):
    N = 37 if D <= 16392 else 5
    x, xr = make((N, D), dtype, _layout(D), low=-6, high=6, seed=D)
    y = getattr(F, fn)(x.cuda(), -1)
    e = np.exp(xr - xr.max(-1, keepdims=True))
    ref = np.log(e / e.sum(-1, keepdims=True)) if fn == "log_softmax" else e / e.sum(-1, keepdims=True)
    assert_close(y, ref, dtype, what=f"{fn} D={D}")


def test_softmax_rows_non_finite():
    data = np.random.default_rng(5).uniform(-2, 2, (4, 256))
    data[0, :10] = -np.inf
    data[1, :] = -np.inf
    data[2, 3] = np.inf
    data[3, 4] = np.nan
    y = to_numpy(F.softmax(tt.tensor(data, dtype=tt.bfloat16).cuda(), -1))
    e = np.exp(data[0] - data[0].max())
    np.testing.assert_allclose(y[0], e / e.sum(), *TOL["bfloat16"])
    assert np.isnan(y[1:]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_rows_split_param_grads(dtype):
    # many rows: the weight/bias gradient splits rows over blocks and adds the partials in a
    # second kernel (deterministic: the same bits twice)
    N, D = 4096, 520
    x, xr = make((N, D), dtype, seed=7)
    g, gr = make((N, D), dtype, low=-1, high=1, seed=8)
    _, _, egw, egb = _norm_ref(xr, gr, 1.0, None, 1e-5, False)
    scale = np.abs(gr).sum(0) + 1.0
    grads = []
    for _ in range(2):
        xc = x.cuda().requires_grad_()
        w = tt.ones(D, dtype=getattr(tt, dtype)).cuda().requires_grad_()
        b = tt.zeros(D, dtype=getattr(tt, dtype)).cuda().requires_grad_()
        (F.layer_norm(xc, (D,), w, b) * g.cuda()).sum().backward()
        grads.append((to_numpy(w.grad), to_numpy(b.grad)))
    assert_close(grads[0][0] / scale, egw / scale, dtype, tol=GRAD_TOL[dtype], what="grad w")
    assert_close(grads[0][1] / scale, egb / scale, dtype, tol=GRAD_TOL[dtype], what="grad b")
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("D", [3, 8, 1000, 1024, 16390])
def test_norm_rows_constant_rows(dtype, D):
    """The variance of a constant row is exactly 0 on every kernel path (the row is shifted by its
    first element before the sums): eps=0 gives 0/0 = NaN and eps > 0 gives 0, as on the CPU."""
    for value in (0.1, 1.7, -7.3, 123.456):
        x = tt.full((3, D), value, dtype=getattr(tt, dtype)).cuda()
        assert bool(F.layer_norm(x, (D,), eps=0.0).isnan().all().item()), (value, D)
        assert F.layer_norm(x, (D,)).abs().max().item() == 0.0, (value, D)
