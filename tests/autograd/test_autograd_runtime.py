"""The engine around the graph: grad modes (thread-local), backward from several threads and from
inside a hook, and memory (no leaks over a training loop, graphs freed by refcounting alone).
The graph itself (accumulation, hooks, version counters, bad input) is in test_autograd_graph.py."""
import gc
import os
import sys
import threading
import weakref

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy
from test_autograd_graph import leaf


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
