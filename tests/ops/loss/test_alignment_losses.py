"""nn.functional post-training losses (dpo_loss, grpo_loss, distillation_loss, log-prob helpers)
against float64 numpy, gradients by gradcheck, and their bad-input errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make


def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def np_logsigmoid(x):
    return -np.logaddexp(0.0, -x)


def leaf64(a):
    return tt.tensor(np.asarray(a, dtype=np.float64)).requires_grad_()


# ---------------------------------------------------------------------------- log-prob helpers
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_token_and_sequence_log_probs(dtype, layout):
    B, T, V = 3, 6, 5
    logits, ref = make((B, T, V), dtype, layout=layout, seed=1)
    rng = np.random.default_rng(2)
    labels = rng.integers(0, V, (B, T))
    labels[0, :2] = -100  # a prompt not scored
    mask = np.ones((B, T), bool)
    mask[2, -2:] = False  # padding
    lt, mt = tt.tensor(labels), tt.tensor(mask)
    lp = np_log_softmax(ref)
    tok = np.where(labels != -100, np.take_along_axis(lp, np.maximum(labels, 0)[..., None], -1)[..., 0], 0.0)
    tol = TOL[dtype] if dtype in ("float32", "float64") else TOL["float32"]  # computed in float32 at least
    assert_close(F.token_log_probs(logits, lt), tok, tol=tol)
    # shifted: logits[:, t] score labels[:, t + 1]
    sh = np.take_along_axis(lp[:, :-1], np.maximum(labels[:, 1:], 0)[..., None], -1)[..., 0]
    valid = (labels[:, 1:] != -100) & mask[:, 1:]
    expect = np.where(valid, sh, 0.0).sum(-1)
    assert_close(F.sequence_log_probs(logits, lt, mt), expect, tol=tol)
    assert_close(F.sequence_log_probs(logits, lt, mt, average=True), expect / valid.sum(-1), tol=tol)
    unshifted = np.where((labels != -100) & mask, tok, 0.0).sum(-1)
    assert_close(F.sequence_log_probs(logits, lt, mt, shift=False), unshifted, tol=tol)


def test_sequence_log_probs_gradcheck():
    rng = np.random.default_rng(0)
    x = leaf64(rng.normal(size=(2, 4, 3)))
    y = tt.tensor([[0, 2, 1, -100], [1, 1, 0, 2]])
    assert gradcheck(lambda x: F.sequence_log_probs(x, y), (x,))


# ---------------------------------------------------------------------------- DPO
def np_dpo(pc, pr, rc, rr, beta, ls, loss_type):
    h = (pc - pr) - (rc - rr)
    if loss_type == "sigmoid":
        losses = -np_logsigmoid(beta * h) * (1 - ls) - np_logsigmoid(-beta * h) * ls
    else:
        losses = (h - 1 / (2 * beta)) ** 2
    return losses, beta * (pc - rc), beta * (pr - rr)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("loss_type,beta,ls", [("sigmoid", 0.1, 0.0), ("sigmoid", 0.5, 0.2), ("ipo", 0.3, 0.0)])
def test_dpo_loss_matches_numpy(dtype, loss_type, beta, ls):
    ins = [make((7,), dtype, layout=lay, low=-30, high=-1, seed=s)
           for s, lay in zip(range(4), ["contiguous", "sliced", "contiguous", "expanded"])]
    out = F.dpo_loss(*(t for t, _ in ins), beta=beta, label_smoothing=ls, loss_type=loss_type)
    ref = np_dpo(*(r for _, r in ins), beta, ls, loss_type)
    for got, want in zip(out, ref):
        # inputs of ~-30 in half precision: compare relative to the inputs' scale
        rtol, atol = TOL[dtype]
        assert_close(got, want, tol=(rtol, atol * 30 * (1 / beta if loss_type == "ipo" else 1)))
    assert not out[1].requires_grad and not out[2].requires_grad


@pytest.mark.parametrize("loss_type,ls", [("sigmoid", 0.0), ("sigmoid", 0.1), ("ipo", 0.0)])
def test_dpo_loss_gradcheck(loss_type, ls):
    rng = np.random.default_rng(3)
    ins = [leaf64(rng.normal(-5, 2, 5)) for _ in range(4)]
    assert gradcheck(lambda *a: F.dpo_loss(*a, beta=0.2, label_smoothing=ls, loss_type=loss_type)[0].mean(),
                     tuple(ins))


def test_dpo_loss_errors():
    a = tt.zeros(4)
    with pytest.raises(ValueError, match=r"dpo_loss.*same shape.*ref_rejected_logps=\[3\]"):
        F.dpo_loss(a, a, a, tt.zeros(3))
    with pytest.raises(ValueError, match="loss_type"):
        F.dpo_loss(a, a, a, a, loss_type="hinge2")
    with pytest.raises(ValueError, match="beta"):
        F.dpo_loss(a, a, a, a, beta=0.0)
    with pytest.raises(ValueError, match="label_smoothing"):
        F.dpo_loss(a, a, a, a, label_smoothing=0.7)
    with pytest.raises(TypeError, match="policy_chosen_logps"):
        F.dpo_loss([1.0], a, a, a)


# ---------------------------------------------------------------------------- GRPO
def np_grpo(lp, old, ref, rewards, g, mask, epsilon, beta, eps=1e-4):
    r = rewards.reshape(-1, g)
    adv = ((r - r.mean(-1, keepdims=True)) / (r.std(-1, ddof=1, keepdims=True) + eps)).reshape(-1, 1)
    ratio = np.exp(lp - old)
    per = -np.minimum(ratio * adv, np.clip(ratio, 1 - epsilon, 1 + epsilon) * adv)
    if beta:
        d = ref - lp
        per = per + beta * (np.exp(d) - d - 1)
    return ((per * mask).sum(-1) / mask.sum(-1)).mean()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_grpo_loss_matches_numpy(dtype, beta):
    B, T, g = 6, 5, 3
    rng = np.random.default_rng(4)
    lp = rng.normal(-2, 0.5, (B, T))
    old = lp + rng.normal(0, 0.3, (B, T))  # ratios both inside and outside [0.8, 1.2]
    ref = lp + rng.normal(0, 0.2, (B, T))
    rewards = rng.integers(0, 3, B).astype(float)
    mask = np.ones((B, T))
    mask[1, 3:] = 0
    t = lambda a: tt.tensor(a, dtype=getattr(tt, dtype))
    got = F.grpo_loss(t(lp), t(rewards), g, old_logps=t(old), ref_logps=t(ref), mask=t(mask), beta=beta)
    assert_close(got, np_grpo(lp, old, ref, rewards, g, mask, 0.2, beta), tol=TOL[dtype])
    adv = F.group_relative_advantages(t(rewards), g)
    r = rewards.reshape(-1, g)
    assert_close(adv, ((r - r.mean(-1, keepdims=True)) / (r.std(-1, ddof=1, keepdims=True) + 1e-4)).reshape(-1),
                 tol=TOL[dtype])


def test_grpo_loss_gradcheck_and_reinforce_limit():
    rng = np.random.default_rng(5)
    B, T = 4, 3
    lp = leaf64(rng.normal(-1, 0.3, (B, T)))
    old = tt.tensor(lp.detach().numpy() + rng.normal(0, 0.1, (B, T)))
    ref = tt.tensor(rng.normal(-1, 0.3, (B, T)))
    rewards = tt.tensor([1.0, 0.0, 0.5, 2.0], dtype=tt.float64)
    assert gradcheck(lambda x: F.grpo_loss(x, rewards, 2, old_logps=old, ref_logps=ref), (lp,))
    # old_logps=None, beta=0: ratio 1, so dL/dlogp = -A / (B·T)
    loss = F.grpo_loss(lp, rewards, 2, beta=0.0)
    loss.backward()
    adv = F.group_relative_advantages(rewards, 2).numpy()
    np.testing.assert_allclose(lp.grad.numpy(), np.repeat(-adv[:, None], T, 1) / (B * T), rtol=1e-12)


def test_grpo_loss_errors():
    lp = tt.zeros(4, 3)
    with pytest.raises(ValueError, match="group_size must be an int >= 2"):
        F.grpo_loss(lp, tt.zeros(4), 1, beta=0.0)
    with pytest.raises(ValueError, match="not a multiple of group_size"):
        F.grpo_loss(lp, tt.zeros(4), 3, beta=0.0)
    with pytest.raises(ValueError, match=r"rewards must be \(4,\)"):
        F.grpo_loss(lp, tt.zeros(5), 2, beta=0.0)
    with pytest.raises(ValueError, match=r"same shape.*old_logps=\[4, 2\]"):
        F.grpo_loss(lp, tt.zeros(4), 2, old_logps=tt.zeros(4, 2), beta=0.0)
    with pytest.raises(ValueError, match="ref_logps is required"):
        F.grpo_loss(lp, tt.zeros(4), 2)


# ---------------------------------------------------------------------------- distillation
def np_distill(s, t, y, T, alpha, ignore=-100):
    s, t, y = s.reshape(-1, s.shape[-1]), t.reshape(-1, t.shape[-1]), y.reshape(-1)
    keep = y != ignore
    ls, lt = np_log_softmax(s / T), np_log_softmax(t / T)
    kl = (np.exp(lt) * (lt - ls)).sum(-1)
    soft = kl[keep].mean()
    ce = -np_log_softmax(s)[np.arange(len(y)), np.maximum(y, 0)][keep].mean()
    return alpha * T * T * soft + (1 - alpha) * ce


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("T,alpha", [(1.0, 0.5), (2.0, 0.9), (4.0, 0.0)])
def test_distillation_loss_matches_numpy(dtype, T, alpha):
    s, sr = make((2, 4, 6), dtype, layout="transposed", seed=6)
    t, tr = make((2, 4, 6), dtype, seed=7)
    y = np.random.default_rng(8).integers(0, 6, (2, 4))
    y[1, 0] = -100
    got = F.distillation_loss(s, t, tt.tensor(y), temperature=T, alpha=alpha)
    assert_close(got, np_distill(sr, tr, y, T, alpha), tol=TOL[dtype])


def test_distillation_loss_gradcheck_and_soft_only():
    rng = np.random.default_rng(9)
    s = leaf64(rng.normal(size=(5, 4)))
    t = tt.tensor(rng.normal(size=(5, 4)))
    y = tt.tensor([0, 3, -100, 1, 2])
    assert gradcheck(lambda s: F.distillation_loss(s, t, y, temperature=3.0, alpha=0.7), (s,))
    soft = F.distillation_loss(s, t, None, temperature=2.0, alpha=1.0)
    assert_close(soft, np_distill(s.detach().numpy(), t.numpy(), np.zeros(5, int), 2.0, 1.0))
    # KL of a distribution with itself is 0
    assert abs(F.distillation_loss(t, t, None, alpha=1.0).item()) < 1e-12


def test_distillation_loss_errors():
    s = tt.zeros(3, 4)
    with pytest.raises(ValueError, match=r"same shape.*teacher_logits=\[3, 5\]"):
        F.distillation_loss(s, tt.zeros(3, 5), tt.zeros(3).long())
    with pytest.raises(ValueError, match="labels must have the logits' shape"):
        F.distillation_loss(s, s, tt.zeros(4).long())
    with pytest.raises(ValueError, match="temperature"):
        F.distillation_loss(s, s, tt.zeros(3).long(), temperature=0.0)
    with pytest.raises(ValueError, match="labels are needed"):
        F.distillation_loss(s, s, None, alpha=0.5)
