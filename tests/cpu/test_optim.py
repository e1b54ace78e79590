"""tinytorch.optim against float64 NumPy implementations of PyTorch's documented update rules.

Each optimizer runs several steps on two parameters of different shapes with a fixed sequence
of gradients (set directly on .grad); after every step the parameters must match the reference.
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
    return np.asarray(t.detach(), dtype=np.float64)


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


def ref_nadam(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
              decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    g = -g if maximize else g
    st["step"] = t = st.get("step", 0) + 1
    if weight_decay:
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
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
    g = -g if maximize else g
    st["step"] = t = st.get("step", 0) + 1
    if weight_decay:
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
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


def test_closure_runs_with_grad_and_returns_loss():
    w = tt.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    seen = {}

    def closure():
        opt.zero_grad()
        seen["grad_enabled"] = tt.is_grad_enabled()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert seen["grad_enabled"]
    assert float(loss) == pytest.approx(5.0)
    np.testing.assert_allclose(np64(w), [0.8, -1.6], rtol=1e-6)


def test_step_runs_under_no_grad():
    w = tt.tensor([1.0], requires_grad=True)
    w.grad = tt.tensor([1.0])
    opt = optim.SGD([w], lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", tt.is_grad_enabled())))
    h = opt.register_step_post_hook(lambda o, a, k: seen.append(("post", tt.is_grad_enabled())))
    opt.step()
    assert seen == [("pre", True), ("post", True)]
    assert tt.is_grad_enabled()
    h.remove()
    opt.step()
    assert seen[-1] == ("pre", True) and len(seen) == 3


def test_param_version_is_bumped():
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    w.grad = tt.tensor([1.0, 1.0])
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.Adadelta, optim.RMSprop):
        v = w._version
        cls([w]).step()
        assert w._version > v, cls.__name__


# ---------------------------------------------------------------------------- groups

def test_param_groups_with_different_lrs():
    inits, grads = make_problem()
    params = make_params(inits)
    opt = optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    assert set(opt.param_groups[0]) == {"params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
                                        "maximize", "foreach", "differentiable", "fused"}
    want0 = run_reference(ref_sgd, dict(lr=0.1), [inits[0]], [[g[0]] for g in grads])
    want1 = run_reference(ref_sgd, dict(lr=0.5, momentum=0.9), [inits[1]], [[g[1]] for g in grads])
    for step, gs in enumerate(grads):
        set_grads(params, gs)
        opt.step()
        np.testing.assert_allclose(np64(params[0]), want0[step][0], rtol=1e-12)
        np.testing.assert_allclose(np64(params[1]), want1[step][0], rtol=1e-12)


def test_lr_changed_in_group_takes_effect():
    w = tt.tensor([1.0], dtype=tt.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    w.grad = tt.tensor([1.0], dtype=tt.float64)
    opt.step()
    opt.param_groups[0]["lr"] = 0.01
    opt.step()
    assert float(w) == pytest.approx(1.0 - 0.1 - 0.01)


def test_add_param_group():
    inits, grads = make_problem()
    params = make_params(inits)
    opt = optim.Adam([params[0]], lr=0.1)
    opt.add_param_group({"params": params[1], "lr": 0.01})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["params"] == [params[1]] or opt.param_groups[1]["params"][0] is params[1]
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    want1 = run_reference(ref_adam, dict(lr=0.01), [inits[1]], [[g[1]] for g in grads])
    for step, gs in enumerate(grads):
        set_grads(params, gs)
        opt.step()
    np.testing.assert_allclose(np64(params[1]), want1[-1][0], rtol=1e-10)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [params[0]]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([params[0]])


def test_required_parameter_and_empty_list():
    from tinytorch.optim.optimizer import required

    class Dummy(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": required})

    w = tt.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        Dummy([w])
    assert Dummy([{"params": [w], "lr": 1.0}]).param_groups[0]["lr"] == 1.0
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)


def test_named_parameters_accepted():
    w = tt.tensor([1.0], requires_grad=True)
    opt = optim.SGD([("weight", w)], lr=0.1)
    assert opt.param_groups[0]["params"][0] is w
    assert opt.param_groups[0]["param_names"] == ["weight"]


# ---------------------------------------------------------------------------- zero_grad

def test_zero_grad_set_to_none():
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    assert w.grad is not None
    opt.zero_grad()
    assert w.grad is None
    opt.zero_grad()  # no grad: nothing to do


def test_zero_grad_in_place():
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    g = w.grad
    ptr = g.data_ptr()
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and w.grad.data_ptr() == ptr
    np.testing.assert_array_equal(np64(w.grad), [0.0, 0.0])
    (w * w).sum().backward()
    np.testing.assert_allclose(np64(w.grad), [2.0, 4.0])


# ---------------------------------------------------------------------------- state_dict

@pytest.mark.parametrize("case", [c for c in CASES if c[2]], ids=[case_id(c) for c in CASES if c[2]])
def test_state_dict_round_trip(case):
    cls, _, kw = case
    inits, grads = make_problem(2)
    a = make_params(inits)
    opt_a = cls(a, **kw)
    for gs in grads[:3]:
        set_grads(a, gs)
        opt_a.step()
    sd = opt_a.state_dict()
    assert sorted(sd["state"]) == ([0, 1] if opt_a.state else [])  # plain SGD keeps no state
    assert sd["param_groups"][0]["params"] == [0, 1]
    for k, v in kw.items():
        assert sd["param_groups"][0][k] == v
    b = [tt.tensor(np64(p), dtype=tt.float64).requires_grad_() for p in a]
    opt_b = cls(b, **{**kw, "lr": 123.0})  # hyperparameters come from the state dict
    opt_b.load_state_dict(sd)
    assert opt_b.param_groups[0]["lr"] == kw.get("lr", opt_a.defaults["lr"])
    assert opt_b.param_groups[0]["params"][0] is b[0]
    for gs in grads[3:]:
        set_grads(a, gs)
        set_grads(b, gs)
        opt_a.step()
        opt_b.step()
    for pa, pb in zip(a, b):
        np.testing.assert_array_equal(np64(pa), np64(pb))
    # the loaded state is a copy, not shared with the source optimizer
    for st_a, st_b in zip(opt_a.state.values(), opt_b.state.values()):
        for key, v in st_a.items():
            if isinstance(v, tt.Tensor):
                assert v.data_ptr() != st_b[key].data_ptr()


def test_state_dict_layout_and_casting():
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True)
    w.grad = tt.tensor([0.5, -0.5])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"][0]["step"].dtype == tt.float32 and float(sd["state"][0]["step"]) == 1.0
    # load into float64 params: floating state is cast to the param dtype, step stays float32
    w64 = tt.tensor([1.0, 2.0], dtype=tt.float64, requires_grad=True)
    opt64 = optim.Adam([w64], lr=0.1, amsgrad=True)
    opt64.load_state_dict(sd)
    assert opt64.state[w64]["exp_avg"].dtype == tt.float64
    assert opt64.state[w64]["step"].dtype == tt.float32
    w64.grad = tt.tensor([0.5, -0.5], dtype=tt.float64)
    opt64.step()
    assert float(opt64.state[w64]["step"]) == 2.0


def test_load_state_dict_validates_groups():
    w1 = tt.tensor([1.0], requires_grad=True)
    w2 = tt.tensor([1.0], requires_grad=True)
    sd = optim.SGD([w1, w2], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [w1]}, {"params": [w2]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([w1], lr=0.1).load_state_dict(sd)


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

def test_invalid_hyperparameters():
    w = tt.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"^Invalid learning rate: -1$"):
        optim.SGD([w], lr=-1)
    for cls in (optim.Adam, optim.AdamW, optim.Adamax, optim.NAdam, optim.RAdam):
        with pytest.raises(ValueError, match="Invalid learning rate: -0.5"):
            cls([w], lr=-0.5)
        with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
            cls([w], betas=(1.0, 0.999))
        with pytest.raises(ValueError, match="Invalid beta parameter at index 1: -0.1"):
            cls([w], betas=(0.9, -0.1))
        with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
            cls([w], eps=-1)
        with pytest.raises(ValueError, match="Invalid weight_decay value: -1"):
            cls([w], weight_decay=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.1"):
        optim.SGD([w], lr=0.1, momentum=-0.1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        optim.Adadelta([w], rho=1.5)
    with pytest.raises(ValueError, match="Invalid alpha value: -1"):
        optim.RMSprop([w], alpha=-1)
    with pytest.raises(ValueError, match="Invalid lr_decay value: -1"):
        optim.Adagrad([w], lr_decay=-1)
    with pytest.raises(ValueError, match="Invalid momentum_decay value: -1"):
        optim.NAdam([w], momentum_decay=-1)


def test_params_must_be_tensors():
    w = tt.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts, but got tinytorch.Tensor"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is float"):
        optim.Adam([w, 1.0])
    with pytest.raises(TypeError, match="iterable"):
        optim.Adam(5)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.Adam({w})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([w * 2])


def test_grad_of_another_shape():
    w = tt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.grad = tt.tensor([1.0, 1.0, 1.0])
    w.data = tt.zeros(2, 3)  # the param changes shape under its old grad
    for cls in (optim.SGD, optim.Adam, optim.Adadelta, optim.RMSprop, optim.Adagrad, optim.Adamax, optim.NAdam,
                optim.RAdam):
        with pytest.raises(RuntimeError, match=r"grad of tensor 0 has shape \[3\] but its param has shape \[2, 3\]"):
            cls([w], lr=0.1).step()
