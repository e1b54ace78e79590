"""F.ctc_loss against a float64 numpy forward algorithm (every reduction and float dtype), its
gradient by gradcheck, infeasible targets (zero_infinity), and torch's loss through log_softmax."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close


rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def _np_ctc(lp, target, T, blank=0):
    # the forward algorithm in probability space, float64: -log p(target | lp[:T])
    ext = [blank]
    for v in target:
        ext += [v, blank]
    S = len(ext)
    p = np.exp(lp)
    a = np.zeros(S)
    a[0] = p[0, ext[0]]
    if S > 1:
        a[1] = p[0, ext[1]]
    for t in range(1, T):
        new = np.zeros(S)
        for s in range(S):
            v = a[s] + (a[s - 1] if s >= 1 else 0.0)
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                v += a[s - 2]
            new[s] = v * p[t, ext[s]]
        a = new
    prob = a[S - 1] + (a[S - 2] if S > 1 else 0.0)
    return -np.log(prob) if prob > 0 else np.inf


CTC_T, CTC_N, CTC_C = 10, 4, 5
CTC_TARGETS = np.array([[1, 2, 2, 3, 0], [4, 1, 0, 0, 0], [3, 3, 3, 0, 0], [2, 0, 0, 0, 0]])
CTC_TLEN, CTC_ILEN = [4, 2, 3, 1], [10, 9, 6, 1]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_loss_values(reduction, dtype):
    lp = np.log(rng.dirichlet(np.ones(CTC_C), (CTC_T, CTC_N)))
    x = tt.tensor(lp, dtype=getattr(tt, dtype))
    ref = np.array([_np_ctc(x.double().numpy()[:, b], CTC_TARGETS[b, :CTC_TLEN[b]], CTC_ILEN[b]) for b in range(CTC_N)])
    got = F.ctc_loss(x, tt.tensor(CTC_TARGETS), CTC_ILEN, CTC_TLEN, reduction=reduction)
    want = {"none": ref, "sum": ref.sum(), "mean": (ref / np.maximum(CTC_TLEN, 1)).mean()}[reduction]
    assert_close(got, want, dtype)
    # concatenated 1-D targets and tensor lengths give the same
    flat = np.concatenate([CTC_TARGETS[b, :CTC_TLEN[b]] for b in range(CTC_N)])
    got1 = nn.CTCLoss(reduction=reduction)(x, tt.tensor(flat), tt.tensor(CTC_ILEN), tt.tensor(CTC_TLEN))
    assert_close(got1, want, dtype)


def test_ctc_loss_gradient_and_infeasible():
    lp = np.log(rng.dirichlet(np.ones(4), (6, 2)))
    targets = tt.tensor([[1, 2, 1], [3, 3, 0]])
    x = _t64(lp, True)
    assert gradcheck(lambda a: F.ctc_loss(a, targets, [6, 5], [3, 2]), (x,))
    # a target longer than its input can't be aligned: inf, or 0 with a zero gradient under zero_infinity
    short = F.ctc_loss(x, targets, [2, 5], [3, 2], reduction="none")
    assert math.isinf(short[0].item()) and math.isfinite(short[1].item())
    z = F.ctc_loss(x, targets, [2, 5], [3, 2], reduction="none", zero_infinity=True)
    assert z[0].item() == 0.0
    z.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(x.grad.numpy()[:, 0] == 0)
    with pytest.raises(RuntimeError, match="blank"):
        F.ctc_loss(x, tt.tensor([[0, 1, 1], [1, 1, 1]]), [6, 6], [3, 3])


def test_ctc_loss_matches_torch_through_log_softmax():
    torch = pytest.importorskip("torch")
    logits = rng.standard_normal((8, 3, 6))
    tg, il, tl = np.array([[1, 2, 3], [5, 5, 0], [2, 0, 0]]), [8, 7, 5], [3, 2, 1]
    lt = torch.tensor(logits, requires_grad=True)
    ref = torch.nn.functional.ctc_loss(lt.log_softmax(-1), torch.tensor(tg), il, tl)
    ref.backward()
    x = _t64(logits, True)
    got = F.ctc_loss(x.log_softmax(-1), tt.tensor(tg), il, tl)
    got.backward()
    assert_close(got, ref.item(), "float64")
    assert_close(x.grad, lt.grad.numpy(), "float64")
