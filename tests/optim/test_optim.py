"""tinytorch.optim against float64 NumPy implementations of PyTorch's documented update rules.

Each optimizer runs several steps on two parameters of different shapes with a fixed sequence
of gradients (set directly on .grad); after every step the parameters must match the reference.
Also here: what a step does besides the rule (skipped params, version bumps, no allocation, a
training smoke test, a grad of another shape). The Optimizer interface (groups, zero_grad,
state_dict, argument checks) is in test_optim_api.py.
"""
from __future__ import annotations

import gc
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.optim as optim

SHAPES = [(4, 5), (7,)]
N_STEPS = 6
# (rtol, atol) of the parameters after N_STEPS against the float64 reference
PARAM_TOL = {"float64": (1e-9, 1e-11), "float32": (2e-5, 2e-6), "float16": (2e-2, 2e-2),
             "bfloat16": (8e-2, 8e-2)}


def np64(t: tt.Tensor) -> np.ndarray:
    return t.detach().double().cpu().numpy()  # np.asarray refuses bfloat16, as PyTorch


def make_problem(seed=0):
    rng = np.random.default_rng(seed)
    inits = [rng.uniform(-1, 1, s) for s in SHAPES]
    grads = [[rng.uniform(-1, 1, s) for s in SHAPES] for _ in range(N_STEPS)]
    return inits, grads


def make_params(inits, dtype="float64"):
    return [tt.tensor(a, dtype=getattr(tt, dtype)).requires_grad_() for a in inits]


def set_grads(params, gs):
    for p, g in zip(params, gs):
        p.grad = tt.tensor(g, dtype=p.dtype)


# ---------------------------------------------------------------------------- references (float64)
# Each reference is step(p, g, state, hp) -> new p for one parameter; `state` is its dict.

def ref_sgd(p, g, st, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    g = -g if maximize else g
    if weight_decay:
        g = g + weight_decay * p
    if momentum:
        if "buf" not in st:
            st["buf"] = g.copy()
        else:
            st["buf"] = momentum * st["buf"] + (1 - dampening) * g
        g = g + momentum * st["buf"] if nesterov else st["buf"]
    return p - lr * g


def ref_adam(p, g, st, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
             decoupled=False):
    b1, b2 = betas
    g = -g if maximize else g
    if weight_decay:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    st["step"] = t = st.get("step", 0) + 1
    st["m"] = st.get("m", 0) * b1 + (1 - b1) * g
    st["v"] = st.get("v", 0) * b2 + (1 - b2) * g * g
    v = st["v"]
    if amsgrad:
        st["vmax"] = v = np.maximum(st.get("vmax", 0), v)
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    denom = np.sqrt(v) / math.sqrt(bc2) + eps
    return p - lr / bc1 * st["m"] / denom


def ref_adamw(p, g, st, weight_decay=1e-2, **kw):
    return ref_adam(p, g, st, weight_decay=weight_decay, decoupled=True, **kw)


def ref_adadelta(p, g, st, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    g = -g if maximize else g
    if weight_decay:
        g = g + weight_decay * p
    st["v"] = rho * st.get("v", 0) + (1 - rho) * g * g
    u = st.get("u", np.zeros_like(p))
    delta = np.sqrt(u + eps) / np.sqrt(st["v"] + eps) * g
    st["u"] = rho * u + (1 - rho) * delta * delta
    return p - lr * delta


def ref_adagrad(p, g, st, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    st["step"] = t = st.get("step", 0) + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    st["sum"] = st.get("sum", np.full_like(p, initial_accumulator_value)) + g * g
    return p - clr * g / (np.sqrt(st["sum"]) + eps)


def ref_rmsprop(p, g, st, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    g = -g if maximize else g
    if weight_decay:
        g = g + weight_decay * p
    st["v"] = alpha * st.get("v", 0) + (1 - alpha) * g * g
    if centered:
        st["ga"] = st.get("ga", 0) + (1 - alpha) * (g - st.get("ga", 0))
        avg = np.sqrt(st["v"] - st["ga"] ** 2) + eps
    else:
        avg = np.sqrt(st["v"]) + eps
    if momentum > 0:
        st["buf"] = momentum * st.get("buf", 0) + g / avg
        return p - lr * st["buf"]
    return p - lr * g / avg


def ref_adamax(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    b1, b2 = betas
    g = -g if maximize else g
    if weight_decay:
        g = g + weight_decay * p
    st["step"] = t = st.get("step", 0) + 1
    st["m"] = st.get("m", 0) * b1 + (1 - b1) * g
    st["u"] = np.maximum(b2 * st.get("u", np.zeros_like(p)), np.abs(g) + eps)
    return p - lr / (1 - b1 ** t) * st["m"] / st["u"]


def _step_and_weight_decay(p, g, st, lr, weight_decay, decoupled_weight_decay, maximize):
    """The prologue of NAdam/RAdam: maximize, count the step, then weight decay (decoupled or L2)."""
    g = -g if maximize else g
    st["step"] = t = st.get("step", 0) + 1
    if weight_decay:
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    return p, g, t


def ref_nadam(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
              decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    p, g, t = _step_and_weight_decay(p, g, st, lr, weight_decay, decoupled_weight_decay, maximize)
    mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    # PyTorch keeps mu_product as a float32 tensor
    st["mu_product"] = mu_product = float(np.float32(st.get("mu_product", 1.0) * mu))
    st["m"] = st.get("m", 0) * b1 + (1 - b1) * g
    st["v"] = st.get("v", 0) * b2 + (1 - b2) * g * g
    denom = np.sqrt(st["v"] / (1 - b2 ** t)) + eps
    p = p - lr * (1 - mu) / (1 - mu_product) * g / denom
    return p - lr * mu_next / (1 - mu_product * mu_next) * st["m"] / denom


def ref_radam(p, g, st, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
              maximize=False):
    b1, b2 = betas
    p, g, t = _step_and_weight_decay(p, g, st, lr, weight_decay, decoupled_weight_decay, maximize)
    st["m"] = st.get("m", 0) * b1 + (1 - b1) * g
    st["v"] = st.get("v", 0) * b2 + (1 - b2) * g * g
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    m_hat = st["m"] / bc1
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2 ** t / bc2
    if rho_t > 5:
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return p - m_hat * lr * (math.sqrt(bc2) / (np.sqrt(st["v"]) + eps)) * rect
    return p - m_hat * lr


CASES = [
    (optim.SGD, ref_sgd, {}),
    (optim.SGD, ref_sgd, dict(lr=0.1)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, dampening=0.3)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.5, weight_decay=0.1)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05, maximize=True)),
    (optim.Adam, ref_adam, {}),
    (optim.Adam, ref_adam, dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)),
    (optim.Adam, ref_adam, dict(lr=0.05, weight_decay=0.1)),
    (optim.Adam, ref_adam, dict(lr=0.05, amsgrad=True)),
    (optim.Adam, ref_adam, dict(lr=0.05, amsgrad=True, maximize=True, weight_decay=0.1)),
    (optim.AdamW, ref_adamw, {}),
    (optim.AdamW, ref_adamw, dict(lr=0.05, weight_decay=0.3)),
    (optim.AdamW, ref_adamw, dict(lr=0.05, weight_decay=0.3, amsgrad=True, maximize=True)),
    (optim.Adadelta, ref_adadelta, {}),
    (optim.Adadelta, ref_adadelta, dict(lr=0.5, rho=0.8, eps=1e-4)),
    (optim.Adadelta, ref_adadelta, dict(weight_decay=0.1, maximize=True)),
    (optim.Adagrad, ref_adagrad, {}),
    (optim.Adagrad, ref_adagrad, dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2)),
    (optim.Adagrad, ref_adagrad, dict(lr=0.1, weight_decay=0.1, eps=1e-6, maximize=True)),
    (optim.RMSprop, ref_rmsprop, {}),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01, alpha=0.9, centered=True)),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01, momentum=0.8)),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01, momentum=0.8, centered=True, weight_decay=0.1, maximize=True)),
    (optim.Adamax, ref_adamax, {}),
    (optim.Adamax, ref_adamax, dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    (optim.Adamax, ref_adamax, dict(lr=0.05, maximize=True)),
    (optim.NAdam, ref_nadam, {}),
    (optim.NAdam, ref_nadam, dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    (optim.NAdam, ref_nadam, dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    (optim.RAdam, ref_radam, {}),
    (optim.RAdam, ref_radam, dict(lr=0.05, betas=(0.5, 0.6))),  # rho_t > 5 from step 3: both branches
    (optim.RAdam, ref_radam, dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.RAdam, ref_radam, dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1, maximize=True)),
]


def case_id(case):
    cls, _, kw = case
    return cls.__name__ + ("-" + ",".join(f"{k}={v}" for k, v in kw.items()) if kw else "")


def run_reference(ref, kw, inits, grads):
    ps = [a.copy() for a in inits]
    states = [{} for _ in ps]
    history = []
    for gs in grads:
        ps = [ref(p, g, st, **kw) for p, g, st in zip(ps, gs, states)]
        history.append([p.copy() for p in ps])
    return history


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_reference(case, dtype):
    cls, ref, kw = case
    inits, grads = make_problem()
    want = run_reference(ref, kw, inits, grads)
    params = make_params(inits, dtype)
    opt = cls(params, **kw)
    rtol, atol = PARAM_TOL[dtype]
    for step, gs in enumerate(grads):
        set_grads(params, gs)
        opt.step()
        for p, w in zip(params, want[step]):
            np.testing.assert_allclose(np64(p), w, rtol=rtol, atol=atol, err_msg=f"step {step + 1}")


@pytest.mark.parametrize("case", [c for c in CASES if c[2]], ids=[case_id(c) for c in CASES if c[2]])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_params(case, dtype):
    cls, ref, kw = case
    inits, grads = make_problem(1)
    # start from values the 16-bit type represents exactly, so only the updates differ
    inits = [np64(tt.tensor(a, dtype=getattr(tt, dtype))) for a in inits]
    grads = [[np64(tt.tensor(g, dtype=getattr(tt, dtype))) for g in gs] for gs in grads]
    want = run_reference(ref, kw, inits, grads)[-1]
    params = make_params(inits, dtype)
    opt = cls(params, **kw)
    for gs in grads:
        set_grads(params, gs)
        opt.step()
    for p, w in zip(params, want):
        assert p.dtype == getattr(tt, dtype)
        for v in opt.state[p].values():
            if isinstance(v, tt.Tensor) and v.dim() > 0:
                assert v.dtype == p.dtype
        rtol, atol = PARAM_TOL[dtype]
        np.testing.assert_allclose(np64(p), w, rtol=rtol, atol=atol)


def test_params_without_grad_are_skipped():
    inits, grads = make_problem()
    params = make_params(inits)
    opt = optim.Adam(params, lr=0.1)
    params[0].grad = tt.tensor(grads[0][0])
    before = np64(params[1])
    opt.step()
    np.testing.assert_array_equal(np64(params[1]), before)
    assert params[1] not in opt.state or not opt.state[params[1]]
    assert float(opt.state[params[0]]["step"]) == 1.0


def test_param_version_is_bumped():
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    w.grad = tt.tensor([1.0, 1.0])
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.Adadelta, optim.RMSprop):
        v = w._version
        cls([w]).step()
        assert w._version > v, cls.__name__


# ---------------------------------------------------------------------------- no allocation per step

def _live_tensors():
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, tt.Tensor))


@pytest.mark.parametrize("cls,kw", [(optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                                    (optim.Adam, dict(lr=0.01, amsgrad=True)),
                                    (optim.AdamW, dict(lr=0.01)),
                                    (optim.Adadelta, {})])
def test_steps_allocate_nothing(cls, kw):
    inits, grads = make_problem(3)
    params = make_params(inits, "float32")
    set_grads(params, grads[0])
    opt = cls(params, **kw)
    opt.step()  # the first step creates the state
    param_ptrs = [p.data_ptr() for p in params]
    state_ptrs = {(i, k): v.data_ptr() for i, p in enumerate(params) for k, v in opt.state[p].items()
                  if isinstance(v, tt.Tensor)}
    live = _live_tensors()
    for _ in range(5):
        opt.step()
    assert [p.data_ptr() for p in params] == param_ptrs
    assert {(i, k): v.data_ptr() for i, p in enumerate(params) for k, v in opt.state[p].items()
            if isinstance(v, tt.Tensor)} == state_ptrs
    assert _live_tensors() == live


# ---------------------------------------------------------------------------- training smoke test

@pytest.mark.parametrize("cls,kw", [(optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=0.05)),
                                    (optim.AdamW, dict(lr=0.05)), (optim.Adadelta, {}),
                                    (optim.RMSprop, dict(lr=0.01)), (optim.Adagrad, dict(lr=0.1)),
                                    (optim.Adamax, dict(lr=0.05)), (optim.NAdam, dict(lr=0.05)),
                                    (optim.RAdam, dict(lr=0.05))])
def test_least_squares_loss_decreases(cls, kw):
    rng = np.random.default_rng(5)
    x_np = rng.normal(size=(64, 8))
    xs = tt.tensor(x_np, dtype=tt.float32)
    ys = tt.tensor(x_np @ rng.normal(size=(8, 1)) + 0.5, dtype=tt.float32)
    w = tt.zeros(8, 1, requires_grad=True)
    b = tt.zeros(1, requires_grad=True)
    opt = cls([w, b], **kw)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = ((xs @ w + b - ys) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.75 * losses[0], losses[::10]  # Adadelta (lr=1) starts slowly


# ---------------------------------------------------------------------------- bad input

def test_grad_of_another_shape():
    w = tt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.grad = tt.tensor([1.0, 1.0, 1.0])
    w.data = tt.zeros(2, 3)  # the param changes shape under its old grad
    for cls in (optim.SGD, optim.Adam, optim.Adadelta, optim.RMSprop, optim.Adagrad, optim.Adamax, optim.NAdam,
                optim.RAdam):
        with pytest.raises(RuntimeError, match=r"grad of tensor 0 has shape \[3\] but its param has shape \[2, 3\]"):
            cls([w], lr=0.1).step()
