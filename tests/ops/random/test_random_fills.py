"""In-place random fills (random_, exponential_, log_normal_, geometric_, cauchy_): their ranges,
reproducibility under a seed, and the moments of their distributions."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy


def test_random_():
    g = tt.Generator().manual_seed(0)
    x = tt.empty(2000).random_(3, 7, generator=g)
    assert set(x.tolist()) == {3.0, 4.0, 5.0, 6.0}
    y = tt.empty(1000, dtype=tt.int64).random_(5)
    assert y.min().item() == 0 and y.max().item() == 4
    z = tt.empty(1000, dtype=tt.float16).random_()
    assert z.min().item() >= 0 and z.max().item() <= 2 ** 11
    assert tt.empty(500, dtype=tt.bool).random_().float().mean().item() == pytest.approx(0.5, abs=0.1)
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        tt.empty(2).random_(5, 5)


def test_random_fills_reproduce_and_match_moments():
    n = 40000
    rows = [   # (fill, kwargs, float64 reference mean, std of one draw) for a moment check at 6 standard errors
        ("exponential_", {"lambd": 2.0}, 0.5, 0.5),
        ("log_normal_", {"mean": 0.0, "std": 0.5}, math.exp(0.125), math.sqrt((math.exp(0.25) - 1) * math.exp(0.25))),
        ("geometric_", {"p": 0.25}, 4.0, math.sqrt(0.75) / 0.25),
    ]
    for name, kwargs, mean, std in rows:
        tt.manual_seed(3)
        a = getattr(tt.empty(n, dtype=tt.float64), name)(**kwargs)
        tt.manual_seed(3)
        b = getattr(tt.empty(n, dtype=tt.float64), name)(**kwargs)
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b), err_msg=name)
        assert abs(float(a.mean()) - mean) < 6 * std / math.sqrt(n), name
    g = tt.empty(n).geometric_(0.5)
    assert float(g.min()) >= 1 and bool((g == g.round()).all())
    cauchy = tt.empty(n, dtype=tt.float64).cauchy_(1.0, 2.0)
    median = float(cauchy.median())   # the median's standard error is pi*sigma/(2*sqrt(n))
    assert abs(median - 1.0) < 6 * math.pi * 2.0 / (2 * math.sqrt(n))
    for dtype in ("float16", "bfloat16"):
        assert float(tt.empty(1000, dtype=getattr(tt, dtype)).exponential_().min()) >= 0
