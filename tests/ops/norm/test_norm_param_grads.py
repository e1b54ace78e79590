"""layer_norm / rms_norm weight and bias gradients summed over many rows (the CPU kernel sums
rows in blocks, then in float64) against float64 numpy."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import GRAD_TOL, FLOAT_DTYPES, make


def _check(got, want, scale, dtype, what):
    rtol, atol = GRAD_TOL[dtype]
    got = got.detach().double().numpy()
    np.testing.assert_allclose(got / scale, want / scale, rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows", [1, 31, 33, 1000])
@pytest.mark.parametrize("rms", [False, True])
def test_param_grads(dtype, rows, rms):
    D, eps = 37, 1e-5
    x, xr = make((rows, D), dtype, seed=1, requires_grad=True)
    w, wr = make((D,), dtype, seed=2, requires_grad=True)
    b, _ = make((D,), dtype, seed=3, requires_grad=True)
    g, gr = make((rows, D), dtype, seed=4)
    if rms:
        F.rms_norm(x, (D,), w, eps).backward(g)
        xhat = xr / np.sqrt((xr * xr).mean(-1, keepdims=True) + eps)
    else:
        (F.layer_norm(x, (D,), w, b, eps)).backward(g)
        mu = xr.mean(-1, keepdims=True)
        xhat = (xr - mu) / np.sqrt(((xr - mu) ** 2).mean(-1, keepdims=True) + eps)
    # sums of many terms: compared relative to the sum of their magnitudes
    _check(w.grad, (gr * xhat).sum(0), np.abs(gr * xhat).sum(0), dtype, "weight grad")
    if not rms:
        _check(b.grad, gr.sum(0), np.abs(gr).sum(0), dtype, "bias grad")
