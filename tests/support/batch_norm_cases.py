"""batch_norm's fused kernels against float64 numpy (shared by the CPU and CUDA tests): forward,
running statistics and gradients, over dtypes, layouts and odd shapes."""
import numpy as np

import tinytorch.nn.functional as F
from support.numeric import GRAD_TOL, TOL, assert_close, make

SHAPES = [(5, 3), (4, 3, 7), (3, 5, 6, 7), (2, 16, 1, 1), (16, 4, 4, 5)]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


def bn_ref(x, w, b, g, training, rm=None, rv=None, eps=1e-5):
    """y, gx, gw, gb, batch mean, biased batch var in float64."""
    dims = (0,) + tuple(range(2, x.ndim))
    sh = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    mu, var = (x.mean(dims), x.var(dims)) if training else (rm, rv)
    inv = 1 / np.sqrt(var + eps)
    xhat = (x - mu.reshape(sh)) * inv.reshape(sh)
    y = xhat * w.reshape(sh) + b.reshape(sh)
    gy = g * w.reshape(sh)
    if training:
        gx = inv.reshape(sh) * (gy - gy.mean(dims, keepdims=True) - xhat * (gy * xhat).mean(dims, keepdims=True))
    else:
        gx = inv.reshape(sh) * gy
    return y, gx, (g * xhat).sum(dims), g.sum(dims), mu, var


def check_batch_norm(device, dtype, layout, shape, training):
    """Forward, gradients and running statistics of F.batch_norm on ``device`` against numpy."""
    c = shape[1]
    x, xn = make(shape, dtype, layout, seed=1)
    w, wn = make((c,), dtype, low=0.5, high=1.5, seed=2)
    b, bn = make((c,), dtype, seed=3)
    x, w, b = (t.to(device).requires_grad_(True) for t in (x, w, b))
    rm, rmn = make((c,), "float32", seed=4)
    rv, rvn = make((c,), "float32", low=0.5, high=2.0, seed=5)
    rm, rv = rm.to(device), rv.to(device)
    rm0, rv0 = rmn.copy(), rvn.copy()
    g, gn = make(shape, dtype, seed=6)
    g = g.to(device)
    y = F.batch_norm(x, rm, rv, w, b, training, 0.1, 1e-5)
    yr, gxr, gwr, gbr, mu, var = bn_ref(xn, wn, bn, gn, training, rm0, rv0)
    assert y.dtype == x.dtype and tuple(y.shape) == shape and y.device == x.device
    scale = max(1.0, np.abs(yr).max())
    rtol, atol = TOL[dtype]
    assert_close(y, yr, tol=(rtol * 4, atol * 4 * scale), what="y")
    y.backward(g)
    rtol, atol = GRAD_TOL[dtype]
    # gx is a difference of terms of size |g * w| * invstd (which cancel to ~0 for channels of
    # two elements): its rounding error scales with them, not with the result
    gscale = max(1.0, np.abs(gn * wn.reshape((1, c) + (1,) * (len(shape) - 2))).max() / np.sqrt(var.min() + 1e-5))
    assert_close(x.grad, gxr, tol=(rtol, atol * gscale), what="grad input")
    assert_close(w.grad, gwr, tol=(rtol, atol * max(1.0, np.abs(gwr).max())), what="grad weight")
    assert_close(b.grad, gbr, tol=(rtol, atol * max(1.0, np.abs(gbr).max())), what="grad bias")
    n = xn.size // c
    if training:  # running statistics: momentum 0.1, unbiased variance
        assert_close(rm, 0.9 * rm0 + 0.1 * mu, dtype="float32", tol=(1e-5, 1e-5), what="running_mean")
        assert_close(rv, 0.9 * rv0 + 0.1 * var * n / (n - 1), dtype="float32", tol=(1e-5, 1e-5),
                     what="running_var")
    else:
        assert_close(rm, rm0, dtype="float64", what="running_mean unchanged")
