"""tinytorch.optim.Chuck: each level on constructed loss / gradient sequences, Adam when neutral.

Gradients are set directly on ``.grad`` and the loss is passed with ``step(loss=...)``, so every
sequence the levels see is chosen by the test.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.optim as optim
from support.numeric import TOL, assert_close

# Every level held neutral: λ, λ_p and s stay 1, no noise, nothing freezes.
NEUTRAL = dict(damp_up=1.0, damp_down=1.0, noise_magnitude=0.0, freeze_threshold=0.0, macro_decay=1.0,
               macro_recovery=1.0)


def _param(shape=(4, 5), seed=0, dtype=tt.float32):
    rng = np.random.default_rng(seed)
    return tt.tensor(rng.uniform(-1, 1, shape), dtype=dtype).requires_grad_()


def _grads(n, shape=(4, 5), seed=1, scales=None):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape) * (1.0 if scales is None else scales[i]) for i in range(n)]


def _run(opt, params, grads, losses):
    for i, loss in enumerate(losses):
        for p in params:
            p.grad = tt.tensor(grads[i], dtype=p.dtype)
        opt.step(loss=loss)


def np_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    """float64 AdamW (decoupled decay), PyTorch's documented rule."""
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        p = p * (1 - lr * weight_decay)
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        p = p - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps)
    return p


# ---------------------------------------------------------------------------- neutral == Adam
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_neutral_chuck_is_adam_step_for_step(dtype, weight_decay):
    n = 40
    grads = _grads(n)
    losses = list(np.random.default_rng(2).uniform(0.5, 3.0, n))  # noisy losses move every trend
    a, b = _param(dtype=getattr(tt, dtype)), _param(dtype=getattr(tt, dtype))
    chuck = optim.Chuck([a], lr=1e-2, weight_decay=weight_decay, **NEUTRAL)
    adam = optim.AdamW([b], lr=1e-2, weight_decay=weight_decay) if weight_decay else optim.Adam([b], lr=1e-2)
    p0 = np.array(a.detach(), dtype=np.float64)     # a copy: np.asarray shares the memory, as in torch
    for i in range(n):
        _run(chuck, [a], grads[i:i + 1], losses[i:i + 1])
        b.grad = tt.tensor(grads[i], dtype=b.dtype)
        adam.step()
        np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()), err_msg=f"step {i}")
        assert_close(a, np_adam(p0, grads[:i + 1], 1e-2, weight_decay=weight_decay), tol=TOL[dtype])


def test_step_is_adam_with_lr_times_lambda_lambdap_s():
    """With the levels live (no noise/freezing), each step is Adam's with lr·λ·λ_p·s."""
    n = 60
    losses = [2.0 * 1.05 ** i if i < 30 else 2.0 * 1.05 ** 30 * 0.9 ** (i - 30) for i in range(n)]
    grads = _grads(n, scales=[1.1 ** i if i < 30 else 1.1 ** 30 * 0.85 ** (i - 30) for i in range(n)])
    a, b = _param(), _param()
    chuck = optim.Chuck([a], lr=1e-2, noise_magnitude=0.0, freeze_threshold=0.0, macro_interval=20)
    adam = optim.Adam([b], lr=1e-2)
    seen = set()
    for i in range(n):
        _run(chuck, [a], grads[i:i + 1], losses[i:i + 1])
        g, st = chuck.state["chuck"], chuck.state[a]
        adam.param_groups[0]["lr"] = 1e-2 * g["damping"] * st["damping"] * g["scale"]
        seen.add((round(g["damping"], 6) != 1.0, round(st["damping"], 6) != 1.0))
        b.grad = tt.tensor(grads[i], dtype=b.dtype)
        adam.step()
        np.testing.assert_allclose(np.asarray(a.detach()), np.asarray(b.detach()), rtol=1e-6, atol=1e-7)
    assert (True, True) in seen  # both dampings moved


# ---------------------------------------------------------------------------- level 1
def _global_after(losses, **kw):
    p = _param()
    opt = optim.Chuck([p], lr=1e-3, **kw)
    _run(opt, [p], _grads(len(losses)), losses)
    return opt.state["chuck"]


def test_level1_rising_loss_brakes_lambda():
    # Rising 10 %/step: the ring's trend first exists at its 8th entry, above +0.02.
    losses = [1.0 * 1.1 ** i for i in range(8)]
    st = _global_after(losses[:7])
    assert st["damping"] == 1.0  # fewer than 8 entries: no trend; mean reversion keeps 1
    st = _global_after(losses)
    assert math.isclose(st["damping"], 0.999 * 0.97 + 0.001, rel_tol=1e-12)
    assert _global_after([1.1 ** i for i in range(400)])["damping"] == 0.3  # clamped below


def test_level1_falling_loss_pushes_lambda():
    st = _global_after([0.5 ** i for i in range(8)])
    assert math.isclose(st["damping"], 0.999 * 1.03 + 0.001, rel_tol=1e-12)
    assert _global_after([0.95 ** i for i in range(300)])["damping"] == 2.0  # clamped above


def test_level1_ema_and_quarter_trend():
    losses = [3.0, 1.0, 2.0, 5.0, 4.0, 1.0, 0.5, 2.5, 3.0]
    st = _global_after(losses)
    ema, ring = None, []
    for x in losses:
        ema = x if ema is None else 0.99 * ema + 0.01 * x
        ring.append(ema)
    assert st["loss_ring"] == pytest.approx(ring, rel=1e-12)
    assert st["loss_ema"] == pytest.approx(ema, rel=1e-12)


# ---------------------------------------------------------------------------- level 2
def _param_state_after(scales, **kw):
    p = _param()
    opt = optim.Chuck([p], lr=1e-3, **kw)
    base = _grads(1)[0]  # one direction, so the norm follows the scale
    _run(opt, [p], [base * s for s in scales], [1.0] * len(scales))
    return opt.state[p]


def test_level2_rising_grad_norm_raises_lambda_p():
    st = _param_state_after([1.2 ** i for i in range(8)])
    assert math.isclose(st["damping"], 0.999 * 1.03 + 0.001, rel_tol=1e-12)
    st = _param_state_after([0.8 ** i for i in range(8)])
    assert math.isclose(st["damping"], 0.999 * 0.97 + 0.001, rel_tol=1e-12)
    st = _param_state_after([1.0 + 0.001 * i for i in range(20)])  # within ±0.05: only mean reversion
    assert st["damping"] == 1.0


def test_level2_grad_norm_ring_holds_the_last_window():
    grads = _grads(20, scales=[0.5 + 0.1 * i for i in range(20)])
    p = _param()
    opt = optim.Chuck([p], lr=1e-3)
    _run(opt, [p], grads, [1.0] * 20)
    st = opt.state[p]
    assert st["grad_norm_ring"] == pytest.approx([float(np.linalg.norm(np.float32(g))) for g in grads[-16:]],
                                                 rel=1e-6)


# ---------------------------------------------------------------------------- level 3
def test_level3_stagnation_sets_noise_then_it_decays():
    # Constant loss: trend 0 from the 8th step; the 8th consecutive stagnant step is step 15.
    st = _global_after([1.0] * 14)
    assert st["noise"] == 0.0 and st["stagnation_count"] == 7
    st = _global_after([1.0] * 15)
    assert st["noise"] == 0.001 and st["stagnation_count"] == 0
    # then a moving loss: each non-stagnant step multiplies the magnitude by 0.9
    st = _global_after([1.0] * 15 + [2.0, 4.0, 8.0])
    assert st["noise"] == pytest.approx(0.001 * 0.9 ** 3, rel=1e-12)


def test_level3_noise_is_gaussian_of_that_scale():
    n = 16
    shape = (200, 100)
    grads = _grads(n, shape=shape)
    a, b = _param(shape), _param(shape)
    chuck = optim.Chuck([a], lr=1e-3, damp_up=1.0, damp_down=1.0, freeze_threshold=0.0,
                        generator=tt.Generator().manual_seed(0))
    adam = optim.Adam([b], lr=1e-3)
    for i in range(n):
        _run(chuck, [a], grads[i:i + 1], [1.0])
        b.grad = tt.tensor(grads[i], dtype=b.dtype)
        adam.step()
        if i < 14:  # no noise yet
            np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))
    # two noisy steps (15, 16): the difference is N(0, 2 * 0.001²) per element
    diff = np.asarray(a.detach(), dtype=np.float64) - np.asarray(b.detach(), dtype=np.float64)
    assert abs(diff.mean()) < 5e-5
    assert diff.std() == pytest.approx(0.001 * math.sqrt(2), rel=0.05)


# ---------------------------------------------------------------------------- level 4
def test_level4_small_gradients_freeze_a_parameter():
    small, big = _param(seed=3), _param(seed=4)
    opt = optim.Chuck([small, big], lr=1e-2)
    for i in range(12):
        small.grad = tt.full((4, 5), 1e-3)  # norm 0.0045 < 0.01
        big.grad = tt.full((4, 5), 1.0)
        before = np.asarray(small.detach()).copy()
        opt.step(loss=1.0 + i)
        after = np.asarray(small.detach())
        frozen = opt.state[small]["frozen"]
        assert frozen == (i >= 7), i
        if i >= 8:  # frozen at step 8: skipped from then on, its state untouched
            np.testing.assert_array_equal(after, before)
            assert opt.state[small]["step"].item() == 8
        else:
            assert not np.array_equal(after, before)
    assert not opt.state[big]["frozen"]
    # a larger gradient in between resets the count
    p = _param()
    opt = optim.Chuck([p], lr=1e-2)
    for i in range(12):
        p.grad = tt.full((4, 5), 1.0 if i == 5 else 1e-3)
        opt.step(loss=1.0)
    assert not opt.state[p]["frozen"] and opt.state[p]["low_grad_count"] == 6


# ---------------------------------------------------------------------------- level 5
def test_level5_macro_patience_halves_then_recovers_scale():
    kw = dict(macro_interval=20, noise_magnitude=0.0)
    # constant loss: new best at 20, no improvement at 40, 60, 80 → s halves at 80
    st = _global_after([1.0] * 79, **kw)
    assert st["scale"] == 1.0 and st["macro_count"] == 2
    st = _global_after([1.0] * 80, **kw)
    assert st["scale"] == 0.5 and st["macro_count"] == 0
    # then an improving loss: the next check (100) sets a new best and multiplies s by 1.2
    st = _global_after([1.0] * 80 + [0.5] * 20, **kw)
    assert st["scale"] == pytest.approx(0.6, rel=1e-12) and st["macro_best"] < 1.0
    # floor 0.05
    st = _global_after([1.0] * 20 * 3 * 6, macro_interval=20, macro_patience=1, noise_magnitude=0.0)
    assert st["scale"] == 0.05


# ---------------------------------------------------------------------------- state, API, errors
def test_state_dict_round_trip_continues_identically():
    losses = [2.0 * 0.97 ** i for i in range(40)]
    grads = _grads(40, scales=[1.05 ** i for i in range(40)])
    a = _param()
    opt = optim.Chuck([a], lr=1e-2, macro_interval=10)
    _run(opt, [a], grads[:25], losses[:25])
    sd = opt.state_dict()
    b = tt.tensor(np.asarray(a.detach())).requires_grad_()
    opt2 = optim.Chuck([b], lr=1e-2, macro_interval=10)
    opt2.load_state_dict(sd)
    assert opt2.state["chuck"] == opt.state["chuck"] and opt2.state["chuck"] is not opt.state["chuck"]
    for key in ("damping", "grad_norm_ring", "low_grad_count", "frozen"):
        assert opt2.state[b][key] == opt.state[a][key]
    _run(opt, [a], grads[25:], losses[25:])
    _run(opt2, [b], grads[25:], losses[25:])
    np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))
    assert opt2.state["chuck"] == opt.state["chuck"]


def test_serialization_round_trip(tmp_path):
    a = _param()
    opt = optim.Chuck([a], lr=1e-2)
    _run(opt, [a], _grads(10), [1.0 / (i + 1) for i in range(10)])
    tt.save(opt.state_dict(), tmp_path / "opt.pt")
    opt2 = optim.Chuck([_param()], lr=1e-2)
    opt2.load_state_dict(tt.load(tmp_path / "opt.pt"))
    assert opt2.state["chuck"] == opt.state["chuck"]


def test_closure_supplies_the_loss_and_trains():
    rng = np.random.default_rng(0)
    x = tt.tensor(rng.normal(size=(64, 3)), dtype=tt.float32)
    y = x @ tt.tensor([[1.0], [-2.0], [0.5]])
    w = tt.zeros(3, 1, requires_grad=True)
    opt = optim.Chuck([w], lr=5e-2)

    def closure():
        opt.zero_grad()
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        return loss

    first = closure().item()
    for _ in range(300):
        loss = opt.step(closure)
    assert isinstance(loss, tt.Tensor) and loss.item() < 1e-2 * first


def test_errors_name_the_argument():
    p = _param()
    opt = optim.Chuck([p])
    p.grad = tt.ones(4, 5)
    with pytest.raises(ValueError, match=r"loss.*step\(closure\).*step\(loss=value\)"):
        opt.step()
    with pytest.raises(ValueError, match="either closure or loss"):
        opt.step(lambda: 1.0, loss=1.0)
    with pytest.raises(ValueError, match="scalar"):
        opt.step(loss=tt.ones(2))
    with pytest.raises(ValueError, match="finite"):
        opt.step(loss=float("nan"))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Chuck([p], lr=-1.0)
    with pytest.raises(ValueError, match="window"):
        optim.Chuck([p], window=4)
    with pytest.raises(ValueError, match="damp_min"):
        optim.Chuck([p], damp_min=0.0)
