"""tinytorch.optim.lr_scheduler against float64 closed forms written out here."""
from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.optim import lr_scheduler as S
from tinytorch.optim.lr_scheduler import (
    CosineAnnealingLR, CosineAnnealingWarmRestarts, ExponentialLR, LambdaLR, LinearLR, LRScheduler, MultiStepLR,
    OneCycleLR, ReduceLROnPlateau, SequentialLR, StepLR,
)

BASE = [0.1, 0.02]


class FakeOptimizer:
    """Stands in for an optimizer: param_groups and defaults are all a scheduler touches."""

    def __init__(self, lrs=BASE, **extra):
        self.param_groups = [dict(lr=lr, **extra) for lr in lrs]
        self.defaults = dict(lr=lrs[0], **extra)


def run(make, steps, opt=None):
    """lrs of every group after construction and after each of ``steps`` steps: shape (steps+1, groups)."""
    opt = opt or FakeOptimizer()
    s = make(opt)
    out = [s.get_last_lr()]
    for _ in range(steps):
        s.step()
        out.append(s.get_last_lr())
        assert out[-1] == [g["lr"] for g in opt.param_groups]
    return np.array(out)


def expect(fn, steps, base=BASE):
    return np.array([[fn(b, e) for b in base] for e in range(steps + 1)])


def check(make, fn, steps=30, rtol=1e-12, atol=1e-15):
    np.testing.assert_allclose(run(make, steps), expect(fn, steps), rtol=rtol, atol=atol)


def test_step_multistep_exponential():
    check(lambda o: StepLR(o, step_size=3, gamma=0.5), lambda b, e: b * 0.5 ** (e // 3))
    ms = [2, 5, 5, 11]  # a repeated milestone decays twice
    check(lambda o: MultiStepLR(o, ms, gamma=0.1), lambda b, e: b * 0.1 ** sum(m <= e for m in ms))
    check(lambda o: ExponentialLR(o, gamma=0.9), lambda b, e: b * 0.9 ** e)


def test_lambda_and_linear():
    check(lambda o: LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1.0 / (e + 1)]),
          lambda b, e: b * (0.95 ** e if b == BASE[0] else 1.0 / (e + 1)))
    check(lambda o: LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=8),
          lambda b, e: b * (0.25 + 0.75 * min(8, e) / 8))
    check(lambda o: LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=5),
          lambda b, e: b * (1.0 - 0.9 * min(5, e) / 5))
    with pytest.raises(ValueError):
        LinearLR(FakeOptimizer(), start_factor=0)


def test_cosine_annealing_recursive_matches_closed_form():
    eta = 1e-3
    check(lambda o: CosineAnnealingLR(o, T_max=10, eta_min=eta),
          lambda b, e: eta + (b - eta) * (1 + math.cos(math.pi * e / 10)) / 2, steps=45, rtol=1e-10)


def sgdr(b, e, T0, Tm, eta):
    start, T = 0, T0
    while e >= start + T:
        start, T = start + T, T * Tm
    return eta + (b - eta) * (1 + math.cos(math.pi * (e - start) / T)) / 2


def test_cosine_warm_restarts():
    check(lambda o: CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
          lambda b, e: sgdr(b, e, 3, 2, 0.001), steps=40)
    check(lambda o: CosineAnnealingWarmRestarts(o, T_0=4), lambda b, e: sgdr(b, e, 4, 1, 0.0), steps=20)
    opt = FakeOptimizer()
    s = CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
    s.step(4.5)  # fractional epochs, as with per-batch stepping: T_cur = 1.5 in the 6-long 2nd cycle
    np.testing.assert_allclose(s.get_last_lr(), [b * (1 + math.cos(math.pi * 1.5 / 6)) / 2 for b in BASE])
    with pytest.raises(ValueError):
        CosineAnnealingWarmRestarts(opt, T_0=0)


def onecycle_ref(step, max_lr, total, pct=0.3, div=25.0, final_div=1e4, mode="cos", lo=0.85, hi=0.95,
                 three=False):
    init = max_lr / div
    mn = init / final_div

    def ann(a, b, p):
        return b + (a - b) / 2 * (math.cos(math.pi * p) + 1) if mode == "cos" else a + (b - a) * p

    e1 = pct * total - 1
    if three:
        e2 = 2 * pct * total - 2
        if step <= e1:
            return ann(init, max_lr, step / e1), ann(hi, lo, step / e1)
        if step <= e2:
            return ann(max_lr, init, (step - e1) / (e2 - e1)), ann(lo, hi, (step - e1) / (e2 - e1))
        return ann(init, mn, (step - e2) / (total - 1 - e2)), hi
    if step <= e1:
        return ann(init, max_lr, step / e1), ann(hi, lo, step / e1)
    p = (step - e1) / (total - 1 - e1)
    return ann(max_lr, mn, p), ann(lo, hi, p)


@pytest.mark.parametrize("mode,three,beta", [("cos", False, False), ("linear", False, True), ("cos", True, False)])
def test_one_cycle(mode, three, beta):
    total = 20
    extra = {"betas": (0.9, 0.999)} if beta else {"momentum": 0.9}
    opt = FakeOptimizer([0.1], **extra)
    s = OneCycleLR(opt, max_lr=1.0, total_steps=total, anneal_strategy=mode, three_phase=three)
    for step in range(total):
        lr_ref, m_ref = onecycle_ref(step, 1.0, total, mode=mode, three=three)
        g = opt.param_groups[0]
        m = g["betas"][0] if beta else g["momentum"]
        assert math.isclose(g["lr"], lr_ref, rel_tol=1e-12, abs_tol=1e-15), step
        assert math.isclose(m, m_ref, rel_tol=1e-12), step
        if beta:
            assert g["betas"][1] == 0.999
        if step < total - 1:
            s.step()
    s.step()
    with pytest.raises(ValueError, match="Tried to step"):
        s.step()
    with pytest.raises(ValueError, match="momentum"):
        OneCycleLR(FakeOptimizer([0.1]), max_lr=1.0, total_steps=5)
    assert OneCycleLR(FakeOptimizer([0.1]), 1.0, epochs=2, steps_per_epoch=5, cycle_momentum=False).total_steps == 10


def test_sequential_warmup_then_decay():
    def make(o):
        warm = LinearLR(o, start_factor=0.1, total_iters=3)
        decay = ExponentialLR(o, gamma=0.9)
        return SequentialLR(o, [warm, decay], milestones=[3])
    check(make, lambda b, e: b * (0.1 + 0.9 * e / 3) if e < 3 else b * 0.9 ** (e - 3), steps=15)
    with pytest.raises(ValueError):
        SequentialLR(FakeOptimizer(), [StepLR(FakeOptimizer(), 2)], milestones=[])


def test_chained_schedulers_multiply():
    def make(o):
        a = StepLR(o, step_size=3, gamma=0.5)
        b = ExponentialLR(o, gamma=0.9)

        class Both:
            def step(self):
                a.step()
                b.step()

            def get_last_lr(self):
                return b.get_last_lr()
        return Both()
    check(make, lambda b, e: b * 0.9 ** e * 0.5 ** (e // 3))


def test_step_with_epoch_uses_closed_form():
    opt = FakeOptimizer()
    s = StepLR(opt, step_size=3, gamma=0.5)
    with pytest.warns(UserWarning):
        s.step(7)
    assert s.get_last_lr() == [b * 0.25 for b in BASE] and s.last_epoch == 7


def test_reduce_on_plateau():
    opt = FakeOptimizer([1.0])
    s = ReduceLROnPlateau(opt, factor=0.5, patience=2, min_lr=0.2)
    losses = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.9, 0.9, 0.9, 0.9]
    lrs = []
    for v in losses:
        s.step(tt.tensor(v))
        lrs.append(s.get_last_lr()[0])
    assert lrs == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2, 0.2]
    opt = FakeOptimizer([1.0])
    s = ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, cooldown=2, threshold=0.5, threshold_mode="abs")
    out = []
    for v in [1.0, 1.2, 1.3, 1.4, 1.5, 2.0]:
        s.step(v)
        out.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(out, [1, 0.1, 0.1, 0.1, 0.01, 0.01])  # cooldown hides 2 bad epochs
    with pytest.raises(ValueError):
        ReduceLROnPlateau(opt, factor=1.0)


def roundtrip(sd):
    buf = io.BytesIO()
    tt.save(sd, buf)
    buf.seek(0)
    return tt.load(buf)


@pytest.mark.parametrize("make", [
    lambda o: MultiStepLR(o, [3, 6, 6], gamma=0.5),
    lambda o: CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    lambda o: CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
    lambda o: OneCycleLR(o, max_lr=0.5, total_steps=12),
    lambda o: SequentialLR(o, [LinearLR(o, 0.5, total_iters=2), StepLR(o, 2)], milestones=[2]),
    lambda o: LambdaLR(o, lambda e: 1 / (1 + e)),
], ids=["multistep", "cosine", "sgdr", "onecycle", "sequential", "lambda"])
def test_state_dict_resume_through_save_load(make):
    ref_opt = FakeOptimizer(momentum=0.9)
    ref = make(ref_opt)
    opt = FakeOptimizer(momentum=0.9)
    s = make(opt)
    for _ in range(4):
        ref.step()
        s.step()
    sd, groups = roundtrip(s.state_dict()), roundtrip(opt.param_groups)
    opt2 = FakeOptimizer(momentum=0.9)
    s2 = make(opt2)
    s2.load_state_dict(sd)
    opt2.param_groups[:] = groups
    for _ in range(6):
        ref.step()
        s2.step()
        assert s2.get_last_lr() == ref.get_last_lr()


def test_plateau_state_dict_and_base_class():
    opt = FakeOptimizer([1.0])
    s = ReduceLROnPlateau(opt, patience=0)
    s.step(1.0)
    sd = roundtrip(s.state_dict())
    assert sd["best"] == 1.0 and sd["mode_worse"] == math.inf
    s2 = ReduceLROnPlateau(FakeOptimizer([1.0]), patience=0)
    s2.load_state_dict(sd)
    s2.step(2.0)
    assert s2.get_last_lr() == [0.1]
    with pytest.raises(NotImplementedError):
        LRScheduler(FakeOptimizer())
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(FakeOptimizer(), step_size=2, last_epoch=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        StepLR(FakeOptimizer(), step_size=2).step()  # no warnings on the normal path


def _opt(kind="sgd"):
    p = tt.nn.Parameter(tt.zeros(2))
    return tt.optim.SGD([p], lr=0.1, momentum=0.9) if kind == "sgd" else tt.optim.Adam([p], lr=0.1)


def _trace(opt, sched, steps=20):
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        g = opt.param_groups[0]
        out.append((g["lr"], g["momentum"] if "momentum" in g else g["betas"][0]))
    return np.array(out)


def test_multiplicative_constant_polynomial_chained():
    o = _opt()
    lrs = _trace(o, S.MultiplicativeLR(o, lambda e: 0.95))[:, 0]
    np.testing.assert_allclose(lrs, 0.1 * 0.95 ** np.arange(1, 21))
    o = _opt()
    lrs = _trace(o, S.ConstantLR(o, factor=0.5, total_iters=4))[:, 0]
    np.testing.assert_allclose(lrs, [0.05] * 3 + [0.1] * 17)
    o = _opt()
    lrs = _trace(o, S.PolynomialLR(o, total_iters=10, power=2.0))[:, 0]
    e = np.minimum(np.arange(1, 21), 10)
    np.testing.assert_allclose(lrs, 0.1 * (1 - e / 10) ** 2, atol=1e-15)
    o = _opt()
    lrs = _trace(o, S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3), S.ExponentialLR(o, 0.9)]))[:, 0]
    n = np.arange(1, 21)
    np.testing.assert_allclose(lrs, 0.1 * 0.9 ** n * np.where(n < 3, 0.5, 1.0))


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_cyclic(mode, kind):
    o = _opt(kind)
    got = _trace(o, S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=5, mode=mode, gamma=0.97), 30)
    ref = []
    for it in range(1, 31):
        cycle = math.floor(1 + it / 8)
        x = 1 + it / 8 - cycle
        scale = x / (3 / 8) if x <= 3 / 8 else (x - 1) / (3 / 8 - 1)
        f = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": 0.97 ** it}[mode]
        ref.append((0.01 + 0.09 * scale * f, 0.9 - 0.1 * scale * f))
    np.testing.assert_allclose(got, np.array(ref), atol=1e-12)
    with pytest.raises(ValueError, match="momentum or beta1"):
        S.CyclicLR(tt.optim.Adagrad([tt.nn.Parameter(tt.zeros(1))]), 0.01, 0.1)
