"""The autograd graph and engine: accumulation, retain_graph, hooks, grad modes, version
counters, backward(inputs=...), bad input, and memory. Custom Functions, autograd.grad and double
backward are in test_autograd_api.py."""
import gc
import os
import sys
import threading
import weakref

import numpy as np
import pytest

import tinytorch as tt
from conftest import to_numpy


def leaf(values, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, requires_grad=True)


# ------------------------------------------------------------------ accumulation / retain_graph

def test_grads_accumulate_over_two_backwards_with_retain_graph():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(to_numpy(x.grad), [2, 4, 6])
    y.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [4, 8, 12])
    # a fresh graph keeps accumulating into the same .grad until it is reset
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [7, 11, 15])
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 3, 3])


def test_second_backward_through_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    # also through autograd.grad, and for a graph whose root saved nothing itself
    z = (x.sin() + 1.0) * 2.0
    tt.autograd.grad(z.sum(), x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        tt.autograd.grad(z.sum(), x)


def test_accumulated_grad_is_not_aliased_to_upstream_gradient():
    x = leaf([1.0, 2.0])
    g = tt.tensor([1.0, 1.0], dtype=tt.float64)
    (x * 1.0).backward(g)
    g.add_(5.0)                      # must not write into x.grad
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 1])


def test_diamond_graph_sums_both_paths():
    x = leaf([2.0])
    a = x * 3.0
    y = a * a + a.sin()              # a is used three times
    y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3 * (2 * 6.0 + np.cos(6.0))])


# ------------------------------------------------------------------ hooks

def test_leaf_and_non_leaf_hooks_see_the_gradient():
    x = leaf([1.0, 2.0])
    seen = {}
    x.register_hook(lambda g: seen.__setitem__("x", to_numpy(g)))
    y = x * 2.0
    y.register_hook(lambda g: seen.__setitem__("y", to_numpy(g)))
    (y * tt.tensor([3.0, 4.0], dtype=tt.float64)).sum().backward()
    np.testing.assert_array_equal(seen["y"], [3, 4])
    np.testing.assert_array_equal(seen["x"], [6, 8])
    np.testing.assert_array_equal(to_numpy(x.grad), [6, 8])


def test_hook_returning_a_tensor_replaces_the_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.register_hook(lambda g: g * 10.0)          # non-leaf: changes what flows on
    x.register_hook(lambda g: g + 1.0)           # leaf: changes what is accumulated
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [21, 21])


def test_hook_returning_wrong_shape_raises():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward()
    x2 = leaf([1.0, 2.0])
    x2.register_hook(lambda g: tt.zeros(3, dtype=tt.float64))
    with pytest.raises(RuntimeError, match=r"expected \[2\] but got \[3\]"):
        (x2 * 1.0).sum().backward()


def test_hook_handle_remove():
    x = leaf([1.0])
    calls = []
    h = x.register_hook(lambda g: calls.append(1) or g * 2.0)
    y = x * 1.0
    hy = y.register_hook(lambda g: calls.append(2))
    y.backward(retain_graph=True)
    assert sorted(calls) == [1, 2] and to_numpy(x.grad).tolist() == [2.0]
    h.remove()
    hy.remove()
    h.remove()                               # removing twice is harmless
    y.backward()
    assert sorted(calls) == [1, 2] and to_numpy(x.grad).tolist() == [3.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tt.ones(2).register_hook(lambda g: g)


def test_post_accumulate_grad_hook():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(to_numpy(t.grad)))
    (x * 4.0).sum().backward()
    np.testing.assert_array_equal(seen[0], [4, 4])
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 1.0).register_post_accumulate_grad_hook(lambda t: None)


# ------------------------------------------------------------------ retain_grad / is_leaf / grad_fn

def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    z = y * y
    y.retain_grad()
    assert y.retains_grad and not z.retains_grad
    z.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(to_numpy(y.grad), [6, 12])
    assert z.grad is None                     # non-leaf without retain_grad: no .grad
    z.sum().backward()
    np.testing.assert_array_equal(to_numpy(y.grad), [12, 24])   # accumulates like a leaf
    x.retain_grad()                           # no-op on a leaf
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        tt.ones(2).retain_grad()


def test_is_leaf():
    x = leaf([1.0])
    c = tt.ones(1)
    assert x.is_leaf and c.is_leaf and not c.requires_grad
    y = x * 2.0
    assert not y.is_leaf and y.requires_grad
    assert (c * 2.0).is_leaf                  # no input requires grad: no history
    assert y.detach().is_leaf
    with tt.no_grad():
        assert (x * 2.0).is_leaf


def test_grad_fn_names_and_next_functions():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    z = x * w + x.exp()
    assert z.grad_fn.name() == "AddBackward0"
    (mul, _), (exp, _) = z.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and exp.name() == "ExpBackward0"
    acc_x, acc_w = [n for n, _ in mul.next_functions]
    assert acc_x.name() == "AccumulateGrad" and acc_x.variable is x and acc_w.variable is w
    assert exp.next_functions[0][0] is acc_x          # one AccumulateGrad per leaf, shared
    assert x.grad_fn is None
    # inputs that don't require grad have a None edge
    assert (x * tt.ones(2, dtype=tt.float64)).grad_fn.next_functions[1] == (None, 0)
    names = {
        "SumBackward0": x.sum(), "SumBackward1": x.sum(0), "MeanBackward0": x.mean(),
        "ViewBackward0": x.view(2, 1), "TransposeBackward0": x.view(1, 2).t(), "SelectBackward0": x[0],
        "SliceBackward0": x[1:], "IndexBackward0": x[tt.tensor([0])], "CatBackward0": tt.cat([x, x]),
        "ToCopyBackward0": x.float(), "SoftmaxBackward0": x.softmax(0), "DivBackward0": x / w,
        "PowBackward0": x ** 2, "PowBackward1": x ** w, "CloneBackward0": x.clone(),
        "ExpandBackward0": x.expand(3, 2), "UnsqueezeBackward0": x.unsqueeze(0),
        "MaxBackward0": x.max(0).values, "MaxBackward1": x.max(), "WhereBackward0": tt.where(x > 1, x, w),
        "SortBackward0": x.sort().values, "TopkBackward0": x.topk(1).values, "GatherBackward0": x.gather(0, tt.tensor([1])),
    }
    for name, t in names.items():
        assert t.grad_fn.name() == name, (name, t.grad_fn.name())
        assert name in repr(t.grad_fn)


def test_in_place_op_moves_history():
    x = leaf([1.0, -2.0])
    y = x * 1.0
    y.relu_()
    assert y.grad_fn.name() == "ReluBackward0" and not y.is_leaf
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 0])


def test_in_place_on_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[0] = 3.0
    with tt.no_grad():
        x.add_(1.0)                            # allowed without grad (optimizer updates)
    np.testing.assert_array_equal(to_numpy(x), [2, 3])


# ------------------------------------------------------------------ grad modes

def test_grad_mode_context_managers():
    x = leaf([1.0])
    assert tt.is_grad_enabled()
    with tt.no_grad():
        assert not tt.is_grad_enabled()
        assert not (x * 2).requires_grad
        with tt.enable_grad():
            assert tt.is_grad_enabled() and (x * 2).requires_grad
        assert not tt.is_grad_enabled()
    assert tt.is_grad_enabled()
    with tt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tt.is_grad_enabled()
    with tt.inference_mode():
        assert not tt.is_grad_enabled() and not (x * 2).requires_grad
        assert tt.autograd.grad_mode.is_inference_mode_enabled()
    assert tt.is_grad_enabled() and not tt.autograd.grad_mode.is_inference_mode_enabled()
    with tt.inference_mode(False):
        assert (x * 2).requires_grad
    # set_grad_enabled as a plain function call
    tt.set_grad_enabled(False)
    try:
        assert not tt.is_grad_enabled()
    finally:
        tt.set_grad_enabled(True)
    assert tt.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with tt.no_grad():
            raise ValueError
    assert tt.is_grad_enabled()


def test_grad_mode_decorators():
    x = leaf([1.0])

    @tt.no_grad()
    def f():
        return tt.is_grad_enabled(), (x * 2).requires_grad

    @tt.enable_grad()
    def g():
        return tt.is_grad_enabled(), (x * 2).requires_grad

    @tt.set_grad_enabled(False)
    def h():
        return tt.is_grad_enabled()

    @tt.inference_mode()
    def k():
        return tt.is_grad_enabled()

    assert tt.is_grad_enabled()               # set_grad_enabled(False) as decorator must not leak
    assert f() == (False, False)
    with tt.no_grad():
        assert g() == (True, True)
    assert h() is False and k() is False
    assert tt.is_grad_enabled()
    assert f.__name__ == "f"


def test_grad_mode_is_thread_local():
    x = leaf([1.0])
    entered, release = threading.Event(), threading.Event()
    result = {}

    def worker():
        with tt.no_grad():
            result["inside"] = tt.is_grad_enabled()
            entered.set()
            release.wait(5)
            result["still"] = tt.is_grad_enabled()

    th = threading.Thread(target=worker)
    th.start()
    assert entered.wait(5)
    try:
        assert tt.is_grad_enabled()           # the worker's no_grad doesn't reach this thread
        y = x * 2.0
        assert y.requires_grad and y.grad_fn is not None
    finally:
        release.set()
        th.join()
    assert result == {"inside": False, "still": False}
    # and a new thread starts with grad enabled even while this one has it off
    with tt.no_grad():
        out = {}
        t2 = threading.Thread(target=lambda: out.setdefault("g", tt.is_grad_enabled()))
        t2.start(); t2.join()
        assert out["g"] is True


def test_backward_inside_a_hook_on_a_graph_sharing_the_leaf():
    # a run started from a hook must not disturb the state of the run that called the hook
    x = leaf([1.0, 2.0])
    inner = {}

    def hook(g):
        with tt.enable_grad():   # (backward runs hooks with grad mode off, as PyTorch)
            inner["grad"], = tt.autograd.grad((x * x * 5.0).sum(), x)
        return g
    y = x * 3.0
    y.register_hook(hook)
    ((y * x).sum() + (x * 7.0).sum()).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2 * 3 * 1 + 7, 2 * 3 * 2 + 7])
    np.testing.assert_array_equal(to_numpy(inner["grad"]), [10, 20])


def test_concurrent_backward_from_threads_sharing_a_leaf():
    x = leaf([1.0, 2.0])
    errors = []

    def worker(k):
        try:
            for _ in range(200):
                g, = tt.autograd.grad(((x * float(k)).exp() * x).sum(), x)
                want = np.exp(k * np.array([1.0, 2.0])) * (1 + k * np.array([1.0, 2.0]))
                np.testing.assert_allclose(to_numpy(g), want, rtol=1e-12)
        except Exception as e:  # noqa: BLE001  (reported by the main thread)
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in (1, 2, 3)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads inside the engine's runs, not between them
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]


# ------------------------------------------------------------------ version counter

def test_modified_saved_output_raises_with_node_and_versions():
    x = leaf([1.0, 2.0])
    y = x.exp()                               # ExpBackward0 saves its output
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"saved tensor \d of ExpBackward0, is at version 1; expected version 0"):
        y.sum().backward()


def test_modified_saved_input_raises():
    x = leaf([1.0, 2.0])
    a = tt.tensor([3.0, 4.0], dtype=tt.float64)
    y = x * a                                 # MulBackward0 saves a
    a.mul_(2.0)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*MulBackward0, is at version 2; "
                                           r"expected version 0"):
        y.sum().backward()


def test_modification_through_a_view_is_detected():
    x = leaf([1.0, 2.0, 3.0])
    y = x.sigmoid()
    with tt.no_grad():
        y[1:].zero_()                          # writes y's storage through a view
    with pytest.raises(RuntimeError, match="SigmoidBackward0"):
        y.sum().backward()


def test_in_place_after_use_by_op_that_saves_nothing_is_fine():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    z = y + 1.0                               # AddBackward0 saves nothing
    y.mul_(3.0)
    z.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2, 2])


# ------------------------------------------------------------------ detach / requires_grad

def test_detach_shares_storage_and_has_no_grad():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()
    d[0] = 7.0                                # writes through to y
    np.testing.assert_array_equal(to_numpy(y), [7, 4])
    assert y._version == d._version           # shared version counter


def test_detach_in_place():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    out = y.detach_()
    assert out is y and y.is_leaf and not y.requires_grad and y.grad_fn is None
    z = (y * x).sum()
    z.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2, 4])   # only the direct path


def test_requires_grad_flags():
    x = leaf([1.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    y.requires_grad_(True)                    # already requires grad: allowed
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        tt.tensor([1, 2]).requires_grad_()
    c = tt.ones(2)
    assert c.requires_grad_() is c and c.requires_grad
    c.requires_grad = False
    assert not c.requires_grad


# ------------------------------------------------------------------ backward(inputs=...)

def test_backward_inputs_only_accumulates_into_those():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = x * y
    h.retain_grad()
    out = (h * 2.0).sum()
    out.backward(inputs=[x], retain_graph=True)
    np.testing.assert_array_equal(to_numpy(x.grad), [6, 8])
    assert y.grad is None
    out.backward(inputs=[y])
    np.testing.assert_array_equal(to_numpy(y.grad), [2, 4])
    np.testing.assert_array_equal(to_numpy(x.grad), [6, 8])
    # a non-leaf in inputs gets its .grad too (as PyTorch)
    x.grad = None
    z = x * 3.0
    (z * z).sum().backward(inputs=[z])
    np.testing.assert_array_equal(to_numpy(z.grad), [6, 12])
    assert x.grad is None


# ------------------------------------------------------------------ bad input

def test_backward_non_scalar_without_gradient():
    y = leaf([1.0, 2.0]) * 2.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_backward_gradient_of_wrong_shape():
    y = leaf([1.0, 2.0]) * 2.0
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \(3,\)"):
        y.backward(tt.ones(3, dtype=tt.float64))


def test_backward_through_tensor_not_requiring_grad():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        (tt.ones(2) * 2.0).sum().backward()
    x = leaf([1.0])
    with tt.no_grad():
        y = x * 2.0
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_numpy_on_tensor_requiring_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        (x * 2).numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0])
    np.testing.assert_array_equal(np.asarray(x * 2), [2.0])   # __array__ detaches


def test_assigning_bad_grad():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = tt.zeros(3, dtype=tt.float64)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = tt.zeros(2, dtype=tt.float32)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]


# ------------------------------------------------------------------ memory

def _live_tensors():
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, tt.Tensor))


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _model():
    rng = np.random.default_rng(0)
    w = tt.tensor(rng.normal(size=(32, 64)), dtype=tt.float32, requires_grad=True)
    b = tt.tensor(rng.normal(size=(64,)), dtype=tt.float32, requires_grad=True)
    s = tt.tensor(rng.normal(size=(1, 64)), dtype=tt.float32, requires_grad=True)
    x = tt.tensor(rng.normal(size=(32, 64)), dtype=tt.float32)

    def step():
        h = (x * w + b).tanh()
        z = (h * s).softmax(-1) + h.sigmoid() * 0.5
        loss = z.logsumexp(1).mean() + (h ** 2).sum(0).amax() * 1e-3 + w.abs().mean()
        loss.backward()
        with tt.no_grad():
            for p in (w, b, s):
                p.sub_(p.grad * 1e-3)
                p.grad = None
        return loss.item()
    return step, (w, b, s)


def test_training_loop_does_not_leak():
    step, params = _model()
    for _ in range(100):
        step()
    n100, rss100 = _live_tensors(), _rss_bytes()
    for _ in range(900):
        step()
    n1000, rss1000 = _live_tensors(), _rss_bytes()
    assert n1000 <= n100 + 2, f"live tinytorch Tensors grew from {n100} to {n1000}"
    assert rss1000 - rss100 < 4 * 2 ** 20, f"RSS grew by {(rss1000 - rss100) / 2 ** 20:.1f} MiB over 900 steps"
    assert all(np.isfinite(to_numpy(p)).all() for p in params)


def test_graph_is_freed_by_refcounting_alone():
    step, params = _model()
    x = params[0]
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            step()
        base = sum(1 for o in gc.get_objects() if isinstance(o, tt.Tensor))
        for _ in range(200):
            step()
        after = sum(1 for o in gc.get_objects() if isinstance(o, tt.Tensor))
        assert after <= base + 2, f"without the cycle collector live Tensors grew from {base} to {after}"
        # one graph, inspected through weak references: gone as soon as the last strong ref goes
        h = (x * 2.0).exp()
        loss = (h * h.sigmoid()).sum()
        node, hnode, href = weakref.ref(loss.grad_fn), weakref.ref(h.grad_fn), weakref.ref(h)
        loss.backward(retain_graph=True)
        del loss, h
        assert node() is None and hnode() is None and href() is None, "graph kept alive by a reference cycle"
        # retain_grad / hooks on a non-leaf don't create a cycle either
        h = x * 3.0
        h.retain_grad()
        hook_ref = weakref.ref(h)
        h.sum().backward()
        del h
        assert hook_ref() is None
    finally:
        if was:
            gc.enable()
        for p in params:
            p.grad = None
