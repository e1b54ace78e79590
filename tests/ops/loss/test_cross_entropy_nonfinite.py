"""cross_entropy on an empty batch (probability targets: the mean over no samples is NaN) and
with a +inf logit (NaN, as PyTorch's log_softmax gives inf - inf there), forward and backward."""
from __future__ import annotations

import math

import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

INF = math.inf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_probability_targets_on_empty_batch(dtype):
    d = getattr(tt, dtype)
    x, t = tt.zeros(0, 3, dtype=d), tt.zeros(0, 3, dtype=d)
    assert math.isnan(F.cross_entropy(x, t).item())                 # 0 / 0
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0
    assert tuple(F.cross_entropy(x, t, reduction="none").shape) == (0,)
    assert math.isnan(F.cross_entropy(x, t, label_smoothing=0.1).item())


@pytest.mark.parametrize("target", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_class_index_target_with_inf_logit_is_nan(dtype, target):
    x = tt.tensor([[INF, 0.0, -1.0], [0.5, 0.25, 1.0]], dtype=getattr(tt, dtype), requires_grad=True)
    t = tt.tensor([target, 2])
    losses = F.cross_entropy(x, t, reduction="none")
    assert math.isnan(losses[0].item())
    assert math.isfinite(losses[1].item())
    loss = F.cross_entropy(x, t)
    assert math.isnan(loss.item())
    loss.backward()
    assert bool(x.grad[0].isnan().all())


def test_probability_target_with_inf_logit_is_nan():
    x = tt.tensor([[INF, 0.0]], requires_grad=True)
    loss = F.cross_entropy(x, tt.tensor([[0.0, 1.0]]))
    assert math.isnan(loss.item())
