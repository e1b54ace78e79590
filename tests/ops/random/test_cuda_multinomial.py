"""tinytorch.multinomial on CUDA: the same seed gives (nearly) the CPU's draws, since both run the
same Philox stream through the same composite (a tie or last-ulp difference in log/cumsum may
flip a rare draw), the frequencies pass the CPU tests' chi-square check, and the checks raise."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt

from support.sampling_stats import P, assert_matches

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("replacement, n", [(True, 100_000), (False, 1), (False, 3)])
def test_cuda_matches_cpu(dtype, replacement, n):
    rows = np.tile(P, (20_000 if n <= 3 else 2, 1))
    dt = getattr(tt, dtype)
    tt.manual_seed(11)
    c = tt.multinomial(tt.tensor(rows, dtype=dt), n, replacement).numpy()
    tt.manual_seed(11)
    g = tt.multinomial(tt.tensor(rows, dtype=dt, device="cuda"), n, replacement)
    assert g.device.type == "cuda" and g.dtype == tt.int64
    g = g.cpu().numpy()
    assert g.shape == c.shape
    assert (g != c).mean() < 1e-3
    assert_matches(np.bincount(g[:, 0] if n <= 3 else g.ravel(), minlength=len(P)), P, f"cuda {dtype}")
    if not replacement:
        assert all(len(set(r)) == n for r in g[:100])


def test_cuda_errors():
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        tt.multinomial(tt.zeros(2, 3, device="cuda"), 1)
    with pytest.raises(RuntimeError, match="element < 0"):
        tt.multinomial(tt.tensor([1.0, -1.0], device="cuda"), 1)
