"""CosineSimilarity and PairwiseDistance, F.pdist (and Softmax2d) against numpy formulas; gradients
by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make


def test_distance_modules():
    a, ar = make((4, 6), "float64", seed=4)
    b, br = make((4, 6), "float64", seed=5)
    cs = (ar * br).sum(1) / (np.linalg.norm(ar, axis=1) * np.linalg.norm(br, axis=1))
    assert_close(nn.CosineSimilarity()(a, b), cs)
    assert_close(nn.PairwiseDistance(3.0)(a, b), (np.abs(ar - br + 1e-6) ** 3).sum(1) ** (1 / 3))
    assert_close(nn.PairwiseDistance(keepdim=True)(a, b), np.linalg.norm(ar - br + 1e-6, axis=1, keepdims=True))


rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax2d_and_pdist(dtype):
    x, xr = make((2, 3, 2, 4), dtype, "transposed", seed=10)
    e = np.exp(xr - xr.max(1, keepdims=True))
    assert_close(nn.Softmax2d()(x), e / e.sum(1, keepdims=True), dtype)
    m, mr = make((5, 3), dtype, "transposed", seed=11)
    ref = [np.linalg.norm(mr[i] - mr[j]) for i in range(5) for j in range(i + 1, 5)]
    assert_close(F.pdist(m), ref, dtype)
    ref1 = [np.abs(mr[i] - mr[j]).sum() for i in range(5) for j in range(i + 1, 5)]
    assert_close(F.pdist(m, 1.0), ref1, dtype)
    assert gradcheck(lambda a: F.pdist(a), (_t64(rng.standard_normal((4, 3)), True),))
