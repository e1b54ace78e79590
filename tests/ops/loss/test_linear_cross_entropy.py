"""F.linear_cross_entropy / nn.LinearCrossEntropyLoss against a float64 numpy reference (class
weights, ignore_index, label smoothing, reductions, K-dimensional weights), with and without
chunking (LinearCrossEntropyOptions): values; gradients of the input, weight and bias by gradcheck."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make


def ce_ref(logits, y, w=None, ignore=-100, reduction="mean", eps=0.0):
    """logits (N, C), y (N,): PyTorch's weighted, label-smoothed cross entropy."""
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    C = logits.shape[1]
    w = np.ones(C) if w is None else w
    keep = y != ignore
    yc = np.where(keep, y, 0)
    nll = -logp[np.arange(len(y)), yc] * w[yc] * keep
    smooth = -(logp * w).sum(1) / C * keep
    loss = (1 - eps) * nll + eps * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (w[yc] * keep).sum()


CASES = [dict(), dict(reduction="sum"), dict(ignore_index=2), dict(weight=True, label_smoothing=0.1),
         dict(weight=True, ignore_index=2, label_smoothing=0.2, reduction="sum"), dict(reduction="none")]


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_reference(case, chunked):
    kw = dict(CASES[case])
    x, xr = make((13, 5), "float64", "transposed", seed=1, requires_grad=True)
    W, Wr = make((7, 5), "float64", seed=2, requires_grad=True)
    b, br = make((7,), "float64", seed=3, requires_grad=True)
    rng = np.random.default_rng(4)
    y = rng.integers(0, 7, 13)
    y[[3, 5]] = 2
    cw = rng.random(7) + 0.5
    if kw.pop("weight", False):
        kw["weight"] = tt.tensor(cw)
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=4) if chunked else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # reduction='none' falls back to the reference path
        loss = F.linear_cross_entropy(x, W, tt.tensor(y), linear_bias=b, options=opts, **kw)
    ref = ce_ref(xr @ Wr.T + br, y, cw if "weight" in kw else None, kw.get("ignore_index", -100),
                 kw.get("reduction", "mean"), kw.get("label_smoothing", 0.0))
    assert_close(loss, ref, "float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda a, w, c: F.linear_cross_entropy(a, w, tt.tensor(y), linear_bias=c, options=opts,
                                                                **kw), (x, W, b))


def test_k_dimensional_weight_and_the_module():
    tt.manual_seed(0)
    m = nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True, dtype=tt.float64)
    assert list(m.state_dict()) == ["linear.weight", "linear.bias"]
    assert tuple(m.linear.weight.shape) == (12, 5)
    assert repr(m).splitlines()[1].strip() == ("in_features=5, num_classes=4, out_features=(3,), bias=True, "
                                               "reduction=mean, ignore_index=None, label_smoothing=0.0, options=None")
    x, xr = make((6, 5), "float64", seed=5)
    y = np.random.default_rng(6).integers(0, 4, (6, 3))
    logits = (xr @ m.linear.weight.detach().numpy().T + m.linear.bias.detach().numpy()).reshape(6, 4, 3)
    ref = np.mean([ce_ref(logits[:, :, j], y[:, j], reduction="none") for j in range(3)])
    assert_close(m(x, tt.tensor(y)), ref, "float64")


def test_chunked_gradcheck_and_errors():
    x, _ = make((5, 3), "float64", seed=7, requires_grad=True)
    W, _ = make((4, 3), "float64", seed=8, requires_grad=True)
    y = tt.tensor([0, 3, 1, 1, 2])
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    assert gradcheck(lambda a, w: F.linear_cross_entropy(a, w, y, options=opts), (x, W))
    with pytest.warns(UserWarning, match="not supported by the chunked path"):
        F.linear_cross_entropy(x, W, y, reduction="none", options=opts)
    with pytest.raises(RuntimeError, match="expected weight shape to be \\(4,\\), got \\(3,\\)"):
        nn.LinearCrossEntropyLoss(3, 4, weight=tt.ones(3))
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range \\[0, 1\\], got 1.5"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)
    with pytest.raises(ValueError, match="batch_chunk_size must be positive"):
        F.linear_cross_entropy(x, W, y, options=nn.LinearCrossEntropyOptions(batch_chunk_size=0))
