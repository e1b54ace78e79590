"""cross_entropy over rows of big vocabularies (the row paths: CPU's vectorized float rows, CUDA's
block per row in 16-byte vectors or scalar loads) against a float64 reference of log_softmax + nll
and its gradient, every float dtype, transposed (non-contiguous) logits, ignored targets, and
rows with +inf, NaN and only -inf logits."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import DEVICES, assert_close, to_numpy


def _reference(x, t, ignore, scale):
    """(per-sample losses, d(mean loss)/dx * scale) in float64."""
    m = x.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(1))
    keep = t != ignore
    loss = np.where(keep, lse - x[np.arange(len(t)), np.where(keep, t, 0)], 0.0)
    p = np.exp(x - lse[:, None])
    p[np.arange(len(t)), np.where(keep, t, 0)] -= keep
    return loss, p * keep[:, None] * scale / keep.sum()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("C", [3000, 2047])          # whole 16-byte vectors, and not
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_rows_match_float64(C, dtype, device, layout):
    rng = np.random.default_rng(C)
    x = (rng.standard_normal((5, C)) * 3).astype(np.float32)
    t = rng.integers(0, C, 5)
    t[3] = 7                                          # ignore_index
    d = getattr(tt, dtype)
    xt = tt.tensor(x.T.copy(), dtype=d, device=device).t() if layout == "transposed" else \
        tt.tensor(x, dtype=d, device=device)
    xt.requires_grad_(True)
    xv = to_numpy(xt.detach()).astype(np.float64)    # the values as rounded to the dtype
    want_loss, want_grad = _reference(xv, t, 7, 0.5)
    got = F.cross_entropy(xt, tt.tensor(t, device=device), ignore_index=7, reduction="none")
    assert_close(got, want_loss, dtype, what="per-sample loss")
    mean = F.cross_entropy(xt, tt.tensor(t, device=device), ignore_index=7)
    assert_close(mean, want_loss.sum() / 4, dtype, what="mean loss")
    g, = tt.autograd.grad(mean, [xt], tt.tensor(0.5, dtype=d, device=device))
    assert_close(g, want_grad, dtype, what="gradient")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_non_finite_rows(dtype, device):
    C = 2048
    x = np.random.default_rng(1).standard_normal((5, C)) * 3
    x[0, 5] = np.inf                  # NaN
    x[1, 9] = np.nan                  # NaN
    x[2, :] = -np.inf                 # -inf - -inf: NaN
    x[3, :4] = np.nan                 # NaNs before anything finite: NaN
    x[3, 4:] = -np.inf
    x[4, 10] = 88.0                   # big but finite: shifted by the max
    xt = tt.tensor(x, dtype=getattr(tt, dtype), device=device)
    loss = to_numpy(F.cross_entropy(xt, tt.tensor([0, 1, 2, 3, 10], device=device), reduction="none").float())
    assert np.isnan(loss[:4]).all()
    assert loss[4] == pytest.approx(0.0, abs=1e-3)
