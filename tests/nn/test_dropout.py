"""Dropout1d/2d (whole channels drop, the rest scaled by 1/(1-p)) and AlphaDropout /
FeatureAlphaDropout (mean and variance kept), in training and eval mode."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import TOL, assert_close, make, to_numpy


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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_alpha_dropout(dtype):
    p, alpha = 0.3, 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    x, xr = make((400, 50), dtype, seed=18, requires_grad=True)
    assert F.alpha_dropout(x, p, training=False) is x
    y = nn.AlphaDropout(p)(x)
    yr = y.detach().double().numpy()
    kept_val, dropped_val = a * xr + alpha * a * p, -alpha * a + alpha * a * p
    kept = np.isclose(yr, kept_val, rtol=TOL[dtype][0] * 10, atol=TOL[dtype][1] * 10)
    dropped = np.isclose(yr, dropped_val, rtol=1e-5)
    assert np.all(kept | dropped)
    assert abs(1 - kept.mean() - p) < 0.02
    y.sum().backward()
    # where x makes the kept value equal the dropped one, y can't tell which happened: skip those
    clear = kept != dropped
    assert clear.mean() > 0.99
    assert_close(x.grad.double().numpy()[clear], np.where(kept, a, 0.0)[clear], dtype)
    # standard normal input keeps mean 0 and std 1 (the point of alpha dropout)
    z = F.alpha_dropout(tt.randn(200000, dtype=getattr(tt, dtype)), 0.2, training=True).double().numpy()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    # feature alpha dropout: one draw per channel
    f = nn.FeatureAlphaDropout(0.5)(tt.ones(8, 16, 5, dtype=getattr(tt, dtype))).numpy()
    assert np.all(f == f[:, :, :1])
