"""The CPU thread pool behind every parallel kernel (cpp/src/parallel.cpp): results independent of
the thread count, regions from several Python threads at once, a fork's child, and the spin
setting; each checked against numpy's float64 results."""
import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tinytorch as tt

RNG = np.random.default_rng(0)
A = RNG.standard_normal((257, 300)).astype(np.float32)
B = RNG.standard_normal((300, 129)).astype(np.float32)
X = RNG.standard_normal(1 << 20).astype(np.float32)


def run_ops():
    a, b, x = tt.tensor(A), tt.tensor(B), tt.tensor(X)
    return (a @ b).numpy(), float(x.sum()), tt.softmax(a, -1).numpy()


def check(results):
    mm, total, sm = results
    np.testing.assert_allclose(mm, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)
    assert abs(total - X.astype(np.float64).sum()) < 1e-2
    e = np.exp(A.astype(np.float64) - A.max(-1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.fixture
def threads():
    before = tt.get_num_threads()
    yield tt.set_num_threads
    tt.set_num_threads(before)


def test_same_bits_at_every_thread_count(threads):
    outs = []
    for n in (1, 2, 3, 8):
        threads(n)
        outs.append(run_ops())
        check(outs[-1])
    for o in outs[1:]:
        assert np.array_equal(o[0], outs[0][0]) and o[1] == outs[0][1] and np.array_equal(o[2], outs[0][2])


def test_regions_from_several_python_threads(threads):
    threads(2)
    want = run_ops()
    got, errors = [], []

    def worker():
        try:
            for _ in range(5):
                got.append(run_ops())
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not errors and len(got) == 20
    for o in got:
        assert np.array_equal(o[0], want[0]) and o[1] == want[1]


def _child(queue):
    queue.put(run_ops())


@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_fork_child_gets_a_working_pool(threads):
    threads(2)
    run_ops()  # the parent's pool has started its workers
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    out = q.get(timeout=120)
    p.join(timeout=60)
    assert p.exitcode == 0
    check(out)


@pytest.mark.parametrize("env", [{"TINYTORCH_THREAD_SPIN_US": "0"}, {"OMP_WAIT_POLICY": "PASSIVE"},
                                 {"TINYTORCH_THREAD_SPIN_US": "100000"}])
def test_spin_settings(env):
    code = ("import sys; sys.path.insert(0, %r); import test_threads as t, tinytorch as tt; "
            "tt.set_num_threads(2); t.check(t.run_ops()); print('ok')" % os.path.dirname(__file__))
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
