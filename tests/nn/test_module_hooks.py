"""nn.Module hooks with PyTorch's signatures and semantics: full backward hooks and pre-hooks
(gradients w.r.t. the module's positional tensor inputs and its outputs, replacement, removal,
global hooks), state_dict pre/post hooks and load_state_dict pre/post hooks; a hook that is not
callable or can't take its arguments is a TypeError when registered."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.nn.modules import module as module_mod
from support.numeric import assert_close, to_numpy

F64 = (1e-10, 1e-12)


def lin64(w: np.ndarray, b: np.ndarray) -> nn.Linear:
    m = nn.Linear(w.shape[1], w.shape[0]).double()
    with tt.no_grad():
        m.weight.copy_(tt.tensor(w))
        m.bias.copy_(tt.tensor(b))
    return m


RNG = np.random.default_rng(0)
W1, B1 = RNG.standard_normal((4, 3)), RNG.standard_normal(4)
W2, B2 = RNG.standard_normal((2, 4)), RNG.standard_normal(2)
X = RNG.standard_normal((5, 3))
C = RNG.standard_normal((5, 2))   # loss = sum(C * y^2)


class Mix(nn.Module):
    """out = tanh(a) * b * scale + a^2: two tensor inputs around a non-tensor one."""

    def forward(self, a, scale, b):
        return tt.tanh(a) * b * scale + a * a


def mix_loss(a, scale, b, w):
    return float(np.sum(w * (np.tanh(a) * b * scale + a * a)))


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# ------------------------------------------------------------------ full backward hooks

def test_full_backward_hook_sees_grad_input_and_grad_output_of_linear():
    lin = lin64(W1[:2], B1[:2])
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((m, gi, go)))
    x = tt.tensor(X, requires_grad=True)
    y = lin(x)
    (tt.tensor(C) * y * y).sum().backward()
    assert len(seen) == 1
    m, gi, go = seen[0]
    assert m is lin and isinstance(gi, tuple) and isinstance(go, tuple) and len(gi) == 1 and len(go) == 1
    y_ref = X @ W1[:2].T + B1[:2]
    go_ref = 2 * C * y_ref                       # dL/dy
    assert_close(go[0], go_ref, tol=F64)
    assert_close(gi[0], go_ref @ W1[:2], tol=F64)  # dL/dx = dL/dy W
    assert_close(x.grad, go_ref @ W1[:2], tol=F64)
    assert_close(lin.weight.grad, go_ref.T @ X, tol=F64)


def test_grad_input_matches_finite_differences_with_a_non_tensor_argument():
    a0, b0, w = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    mod, seen = Mix(), []
    mod.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    a, b = tt.tensor(a0, requires_grad=True), tt.tensor(b0, requires_grad=True)
    (mod(a, 1.5, b) * tt.tensor(w)).sum().backward()
    (gi, go), = seen
    assert len(gi) == 3 and gi[1] is None          # one entry per positional argument
    assert_close(go[0], w, tol=F64)
    assert_close(gi[0], fd_grad(lambda v: mix_loss(v, 1.5, b0, w), a0), tol=(1e-7, 1e-8))
    assert_close(gi[2], fd_grad(lambda v: mix_loss(a0, 1.5, v, w), b0), tol=(1e-7, 1e-8))


def test_input_that_does_not_require_grad_gets_none():
    mod, seen = Mix(), []
    mod.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    a = tt.tensor(np.ones((2,)) * 0.5, requires_grad=True)
    b = tt.tensor(np.array([2.0, -1.0]))   # no grad
    mod(a, 1.0, b).sum().backward()
    gi, = seen
    assert gi[1] is None and gi[2] is None
    assert_close(gi[0], np.array([2.0, -1.0]) * (1 - np.tanh(0.5) ** 2) + 1.0, tol=F64)


def test_replacing_grad_input_changes_upstream_parameter_gradients():
    def run(hook=None):
        l1, l2 = lin64(W1, B1), lin64(W2, B2)
        model = nn.Sequential(l1, nn.Tanh(), l2)
        if hook is not None:
            l2.register_full_backward_hook(hook)
        x = tt.tensor(X, requires_grad=True)
        (tt.tensor(C) * model(x) ** 2).sum().backward()
        return to_numpy(l1.weight.grad), to_numpy(l1.bias.grad), to_numpy(l2.weight.grad), to_numpy(x.grad)

    base = run()
    hooked = run(lambda m, gi, go: (gi[0] * 2.0,))
    np.testing.assert_allclose(hooked[0], 2 * base[0], rtol=1e-12)   # upstream layer: doubled
    np.testing.assert_allclose(hooked[1], 2 * base[1], rtol=1e-12)
    np.testing.assert_allclose(hooked[3], 2 * base[3], rtol=1e-12)
    np.testing.assert_allclose(hooked[2], base[2], rtol=1e-12)       # the module's own weight: unchanged
    # a returned None (or a hook returning nothing) leaves everything as it is
    same = run(lambda m, gi, go: None)
    for s, b in zip(same, base):
        np.testing.assert_allclose(s, b, rtol=1e-12)
    # the reference by hand: tanh layer between two linears
    h = X @ W1.T + B1
    y = np.tanh(h) @ W2.T + B2
    gh = ((2 * C * y) @ W2) * (1 - np.tanh(h) ** 2)
    assert_close(base[0], gh.T @ X, tol=F64)


def test_backward_pre_hook_sees_and_replaces_grad_output():
    def run(pre=None):
        l1, l2 = lin64(W1, B1), lin64(W2, B2)
        model = nn.Sequential(l1, nn.Tanh(), l2)
        seen = []
        if pre is not None:
            l2.register_full_backward_pre_hook(lambda m, go: seen.append(go) or pre(go))
        (tt.tensor(C) * model(tt.tensor(X)) ** 2).sum().backward()
        return seen, to_numpy(l1.weight.grad), to_numpy(l2.weight.grad)

    _, g1, g2 = run()
    seen, h1, h2 = run(lambda go: (go[0] * 3.0,))
    y = np.tanh(X @ W1.T + B1) @ W2.T + B2
    assert len(seen) == 1 and len(seen[0]) == 1
    assert_close(seen[0][0], 2 * C * y, tol=F64)
    np.testing.assert_allclose(h2, 3 * g2, rtol=1e-12)   # inside the module: tripled
    np.testing.assert_allclose(h1, 3 * g1, rtol=1e-12)   # and everything before it


def test_pre_hook_runs_before_full_hook_which_sees_the_replaced_grad_output():
    lin, order = lin64(W2, B2), []
    lin.register_full_backward_hook(lambda m, gi, go: order.append(("full", to_numpy(go[0]))))
    lin.register_full_backward_pre_hook(lambda m, go: order.append(("pre", to_numpy(go[0]))) or (go[0] * 0.5,))
    x = tt.tensor(X @ W1.T, requires_grad=True)
    lin(x).sum().backward()
    assert [o[0] for o in order] == ["pre", "full"]
    np.testing.assert_allclose(order[0][1], np.ones((5, 2)))
    np.testing.assert_allclose(order[1][1], 0.5 * np.ones((5, 2)))
    assert_close(x.grad, 0.5 * np.ones((5, 2)) @ W2, tol=F64)


def test_first_layer_without_input_grad_gets_all_none_grad_input():
    lin, seen = lin64(W1, B1), []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    lin(tt.tensor(X)).sum().backward()
    (gi, go), = seen
    assert gi == (None,)
    np.testing.assert_allclose(to_numpy(go[0]), np.ones((5, 4)))
    lin2 = lin64(W1, B1)
    lin2.register_full_backward_hook(lambda m, gi, go: (tt.ones(5, 3),))
    with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
        lin2(tt.tensor(X)).sum().backward()


def test_tuple_output_and_unused_output_get_none():
    class Split(nn.Module):
        def forward(self, x):
            return x * 2.0, x * x

    mod, seen = Split(), []
    mod.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    x0 = np.array([1.0, -2.0, 3.0])
    x = tt.tensor(x0, requires_grad=True)
    p, q = mod(x)
    assert isinstance(p, tt.Tensor) and isinstance(q, tt.Tensor)
    (p * tt.tensor([1.0, 2.0, 3.0])).sum().backward()   # q unused
    (gi, go), = seen
    assert len(go) == 2 and go[1] is None
    np.testing.assert_allclose(to_numpy(go[0]), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(to_numpy(gi[0]), [2.0, 4.0, 6.0])


def test_kwargs_are_not_in_grad_input():
    class Scale(nn.Module):
        def forward(self, x, *, s):
            return x * s

    mod, seen = Scale(), []
    mod.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    x, s = tt.tensor([1.0, 2.0], requires_grad=True), tt.tensor([3.0, 4.0], requires_grad=True)
    mod(x, s=s).sum().backward()
    gi, = seen
    assert len(gi) == 1
    np.testing.assert_allclose(to_numpy(gi[0]), [3.0, 4.0])
    np.testing.assert_allclose(to_numpy(s.grad), [1.0, 2.0])   # kwargs still get their gradients


def test_handle_remove_and_context_manager_and_prepend():
    lin, calls = lin64(W2, B2), []
    h1 = lin.register_full_backward_hook(lambda m, gi, go: calls.append("a"))
    h2 = lin.register_full_backward_hook(lambda m, gi, go: calls.append("b"), prepend=True)
    hp = lin.register_full_backward_pre_hook(lambda m, go: calls.append("pre"))
    x = tt.tensor(X @ W1.T, requires_grad=True)
    lin(x).sum().backward()
    assert calls == ["pre", "b", "a"]
    h2.remove()
    h2.remove()   # twice is fine
    lin(x).sum().backward()
    assert calls == ["pre", "b", "a", "pre", "a"]
    h1.remove()
    hp.remove()
    y = lin(x)
    assert y.grad_fn.name() != "BackwardHookFunctionBackward"   # no hooks: the plain call
    y.sum().backward()
    assert len(calls) == 5
    with lin.register_full_backward_hook(lambda m, gi, go: calls.append("ctx")):
        lin(x).sum().backward()
    lin(x).sum().backward()
    assert calls[5:] == ["ctx"]


def test_hooks_do_not_run_without_grad_and_run_again_each_backward():
    lin, calls = lin64(W2, B2), []
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(to_numpy(go[0]).sum()))
    with tt.no_grad():
        out = lin(tt.tensor(X @ W1.T, requires_grad=True))
    assert out.grad_fn is None and calls == []
    x = tt.tensor(X @ W1.T, requires_grad=True)
    y = lin(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert calls == [10.0, 10.0]
    assert_close(x.grad, 2 * np.ones((5, 2)) @ W2, tol=F64)


def test_global_full_backward_hooks_run_first_for_every_module():
    l1, l2 = lin64(W1, B1), lin64(W2, B2)
    model = nn.Sequential(l1, nn.Tanh(), l2)
    calls = []
    l2.register_full_backward_hook(lambda m, gi, go: calls.append(("own", m)))
    hg = module_mod.register_module_full_backward_hook(lambda m, gi, go: calls.append(("global", m)))
    hp = module_mod.register_module_full_backward_pre_hook(lambda m, go: calls.append(("global_pre", m)))
    try:
        model(tt.tensor(X, requires_grad=True)).sum().backward()
    finally:
        hg.remove()
        hp.remove()
    # backward visits the modules last to first; the outer Sequential's hooks run around them
    names = [(k, type(m).__name__ if m is not l2 else "l2") for k, m in calls]
    assert names[:2] == [("global_pre", "Sequential"), ("global_pre", "l2")]
    assert names[2:4] == [("global", "l2"), ("own", "l2")]
    assert ("global", "Tanh") in names and ("global", "Linear") in names and names[-1] == ("global", "Sequential")
    calls.clear()
    model(tt.tensor(X, requires_grad=True)).sum().backward()
    assert calls == [("own", l2)]


def test_hook_returning_wrong_number_of_gradients_raises():
    lin = lin64(W2, B2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        lin(tt.tensor(X @ W1.T, requires_grad=True)).sum().backward()
    lin2 = lin64(W2, B2)
    lin2.register_full_backward_pre_hook(lambda m, go: ())
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 0, but expected 1"):
        lin2(tt.tensor(X @ W1.T, requires_grad=True)).sum().backward()
    lin3 = lin64(W2, B2)
    lin3.register_full_backward_hook(lambda m, gi, go: gi[0])
    with pytest.raises(TypeError, match="expected None or a tuple of 1 gradients"):
        lin3(tt.tensor(X @ W1.T, requires_grad=True)).sum().backward()


# ------------------------------------------------------------------ registration errors

REGISTER = [
    ("register_full_backward_hook", lambda m, gi: None),
    ("register_full_backward_pre_hook", lambda m: None),
    ("register_state_dict_pre_hook", lambda m, prefix: None),
    ("register_state_dict_post_hook", lambda m, sd, prefix: None),
    ("_register_state_dict_hook", lambda m, sd: None),
    ("register_load_state_dict_pre_hook", lambda m, sd, prefix: None),
    ("_register_load_state_dict_pre_hook", lambda sd, prefix: None),
    ("register_load_state_dict_post_hook", lambda m: None),
]


@pytest.mark.parametrize("method,wrong", REGISTER, ids=[r[0] for r in REGISTER])
def test_non_callable_or_wrong_signature_is_a_type_error(method, wrong):
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="hook must be callable, got int"):
        getattr(m, method)(3)
    with pytest.raises(TypeError, match=f"{method}: hook.* can't be called as hook\\("):
        getattr(m, method)(wrong)
    # *args hooks and callable objects are accepted
    h = getattr(m, method)(lambda *args: None)
    h.remove()


def test_global_hook_registration_is_checked():
    with pytest.raises(TypeError, match="must be callable"):
        module_mod.register_module_full_backward_hook(None)
    with pytest.raises(TypeError, match="can't be called as hook\\(module, grad_output\\)"):
        module_mod.register_module_full_backward_pre_hook(lambda m, a, b: None)


# ------------------------------------------------------------------ state_dict hooks

def _net():
    net = nn.Sequential(OrderedDict(fc=lin64(W1, B1), act=nn.Tanh(), out=lin64(W2, B2)))
    return net


def test_state_dict_pre_hook_is_called_per_module_with_its_prefix():
    net, calls = _net(), []
    for m in net.modules():
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append((type(mod).__name__, prefix,
                                                                                    keep_vars)))
    sd = net.state_dict(keep_vars=True)
    assert calls == [("Sequential", "", True), ("Linear", "fc.", True), ("Tanh", "act.", True),
                     ("Linear", "out.", True)]
    assert list(sd) == ["fc.weight", "fc.bias", "out.weight", "out.bias"]
    assert sd._metadata[""] == {"version": 1} and "fc" in sd._metadata


def test_state_dict_post_hooks():
    net = _net()
    seen = []

    def post(mod, sd, prefix, local_metadata):
        seen.append((prefix, list(sd), local_metadata))
        sd[prefix + "scale"] = tt.tensor(2.0)

    h = net.out.register_state_dict_post_hook(post)
    sd = net.state_dict()
    assert seen == [("out.", ["fc.weight", "fc.bias", "out.weight", "out.bias"], {"version": 1})]
    assert float(sd["out.scale"]) == 2.0
    h.remove()
    assert "out.scale" not in net.state_dict()
    net.register_state_dict_post_hook(lambda mod, sd, prefix, md: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        net.state_dict()


def test_private_state_dict_hook_may_replace_the_result():
    net = _net()
    net._register_state_dict_hook(lambda mod, sd, prefix, md: OrderedDict((k.upper(), v) for k, v in sd.items()))
    sd = net.state_dict()
    assert list(sd) == ["FC.WEIGHT", "FC.BIAS", "OUT.WEIGHT", "OUT.BIAS"]
    assert_close(sd["OUT.WEIGHT"], W2, tol=F64)


# ------------------------------------------------------------------ load_state_dict hooks

def test_load_pre_hook_renames_legacy_keys():
    src = _net()
    legacy = OrderedDict((k.replace("weight", "w"), v) for k, v in src.state_dict().items())
    dst = nn.Sequential(OrderedDict(fc=nn.Linear(3, 4).double(), act=nn.Tanh(), out=nn.Linear(4, 2).double()))
    calls = []

    def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        calls.append((prefix, strict, type(module).__name__))
        if prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    for m in (dst.fc, dst.out):
        m.register_load_state_dict_pre_hook(rename)
    with pytest.raises(RuntimeError):   # without the hooks the legacy names don't load
        nn.Linear(3, 4).double().load_state_dict({"w": legacy["fc.w"], "bias": legacy["fc.bias"]})
    res = dst.load_state_dict(legacy)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert calls == [("fc.", True, "Linear"), ("out.", True, "Linear")]
    assert_close(dst.fc.weight, W1, tol=F64)
    assert_close(dst.out.weight, W2, tol=F64)
    assert "fc.w" in legacy    # the caller's dict is not changed


def test_private_load_pre_hook_without_module_and_metadata():
    src, dst = _net(), _net()
    sd = src.state_dict()
    got = []
    dst.fc._register_load_state_dict_pre_hook(
        lambda state_dict, prefix, md, strict, missing, unexpected, errors: got.append((prefix, md)))
    dst.fc._register_load_state_dict_pre_hook(
        lambda module, state_dict, prefix, md, strict, missing, unexpected, errors: got.append(module),
        with_module=True)
    dst.load_state_dict(sd, assign=True)
    assert got == [("fc.", {"version": 1, "assign_to_params_buffers": True}), dst.fc]


def test_load_pre_hook_error_msgs_fail_the_load_before_copying():
    dst = _net()
    dst.out.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, md, strict, missing, unexpected, errors: errors.append("bad checkpoint version"))
    zeros = {k: v * 0 for k, v in dst.state_dict().items()}
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Sequential:\n\tbad checkpoint"):
        dst.load_state_dict(zeros, strict=False)
    assert_close(dst.fc.weight, W1, tol=F64)   # nothing copied


def test_load_post_hook_sees_and_may_clear_incompatible_keys():
    dst = _net()
    sd = {k: v * 2 for k, v in _net().state_dict().items() if k != "out.bias"}
    sd["extra"] = tt.tensor(1.0)
    order, seen = [], []

    def post(module, incompatible):
        order.append(module)
        seen.append((list(incompatible.missing_keys), list(incompatible.unexpected_keys)))

    dst.out.register_load_state_dict_post_hook(post)
    dst.register_load_state_dict_post_hook(post)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra".\n\tMissing key\\(s\\) in '
                                           'state_dict: "out.bias".'):
        dst.load_state_dict(sd)
    assert order == [dst.out, dst]   # children before parents
    assert seen == [(["out.bias"], ["extra"])] * 2
    assert_close(dst.fc.weight, 2 * W1, tol=F64)   # loaded before the hooks ran, as torch

    def clear(module, incompatible):
        incompatible.missing_keys.clear()
        incompatible.unexpected_keys.clear()

    dst2 = _net()
    dst2.register_load_state_dict_post_hook(clear)
    res = dst2.load_state_dict(sd)      # strict, but the hook forgave the keys
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert_close(dst2.out.weight, 2 * W2, tol=F64)
    assert_close(dst2.out.bias, B2, tol=F64)

    dst3 = _net()
    dst3.register_load_state_dict_post_hook(lambda m, inc: inc)
    with pytest.raises(RuntimeError, match="not expected to return new values"):
        dst3.load_state_dict(_net().state_dict())


def test_load_state_dict_hooks_removed_by_handle():
    dst, calls = _net(), []
    h1 = dst.register_load_state_dict_pre_hook(lambda *a: calls.append("pre"))
    h2 = dst.register_load_state_dict_post_hook(lambda m, inc: calls.append("post"))
    dst.load_state_dict(_net().state_dict())
    h1.remove()
    h2.remove()
    dst.load_state_dict(_net().state_dict())
    assert calls == ["pre", "post"]


def test_load_state_dict_refuses_a_non_mapping():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        nn.Linear(2, 2).load_state_dict([("weight", tt.ones(2, 2))])
