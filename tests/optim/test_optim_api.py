"""The Optimizer interface: closures and step hooks, parameter groups, zero_grad, state_dict
round trips, and the checks of hyperparameters and parameters. The update rules against float64
NumPy references are in test_optim.py."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.optim as optim
from test_optim import CASES, case_id, make_params, make_problem, np64, ref_adam, ref_sgd, run_reference, set_grads

# ---------------------------------------------------------------------------- step: closure, hooks

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
