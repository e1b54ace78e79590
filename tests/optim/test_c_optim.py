"""The fused optimizer kernels through tinytorch._C directly (one- and multi-tensor steps,
threading, argument errors), against the float64 references of test_optim.py."""
from __future__ import annotations

import numpy as np
import pytest

from tinytorch import _C
from test_optim import ref_adadelta, ref_adam, ref_sgd


def _impl(a, dtype=np.float32):
    return _C.from_numpy(np.array(a, dtype=dtype))  # a copy: the kernels write in place


def _steps(n=1, start=0.0):
    return [_impl(np.array(start)) for _ in range(n)]


def test_c_sgd_step_one_tensor():
    rng = np.random.default_rng(7)
    p0, g = rng.normal(size=100), rng.normal(size=100)
    p, gi, buf = _impl(p0, np.float64), _impl(g, np.float64), _impl(np.zeros(100), np.float64)
    v = p.version
    _C.sgd_step_multi_([p], [gi], [buf], 0.1, 0.9, 0.0, 0.01, True, False, True)
    st = {}
    want = ref_sgd(p0, g, st, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(buf.numpy(), st["buf"], rtol=1e-14)
    assert p.version > v
    _C.sgd_step_multi_([p], [gi], [], 0.1, 0.0, 0.0, 0.0, False, False, False)
    np.testing.assert_allclose(p.numpy(), want - 0.1 * g, rtol=1e-14)


def test_c_adam_step_large_threaded():
    n = 300_000  # several parallel_for chunks
    rng = np.random.default_rng(8)
    p0 = rng.normal(size=n)
    grads = [rng.normal(size=n) for _ in range(3)]
    p, m, v, vmax = (_impl(p0), _impl(np.zeros(n)), _impl(np.zeros(n)), _impl(np.zeros(n)))
    st = {}
    want = p0
    steps = _steps()
    for g in grads:
        _C.adam_step_multi_([p], [_impl(g)], [m], [v], [vmax], steps, 1e-2, 0.9, 0.999, 1e-8, 0.1, True, False, True)
        want = ref_adam(want, g, st, lr=1e-2, weight_decay=0.1, amsgrad=True, decoupled=True)
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.numpy(), st["m"], rtol=1e-5, atol=1e-7)


def test_c_adadelta_step_one_tensor():
    rng = np.random.default_rng(9)
    p0, g = rng.normal(size=50), rng.normal(size=50)
    p, sq, acc = _impl(p0, np.float64), _impl(np.zeros(50), np.float64), _impl(np.zeros(50), np.float64)
    _C.adadelta_step_multi_([p], [_impl(g, np.float64)], [sq], [acc], _steps(), 1.0, 0.9, 1e-6, 0.0, False)
    np.testing.assert_allclose(p.numpy(), ref_adadelta(p0, g, {}), rtol=1e-13)


def test_c_multi_increments_steps():
    p = [_impl(np.ones(4)), _impl(np.ones(3))]
    g = [_impl(np.ones(4)), _impl(np.ones(3))]
    m = [_impl(np.zeros(4)), _impl(np.zeros(3))]
    v = [_impl(np.zeros(4)), _impl(np.zeros(3))]
    steps = [_impl(np.array(0.0)), _impl(np.array(5.0))]
    _C.adam_step_multi_(p, g, m, v, [], steps, 0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False)
    assert [float(s.item()) for s in steps] == [1.0, 6.0]


def test_c_errors():
    p, g = _impl(np.ones((2, 3))), _impl(np.ones((2, 3)))
    m, v = _impl(np.zeros((2, 3))), _impl(np.zeros((2, 3)))

    def adam(grad=g, exp_avg=m, max_sqs=(), amsgrad=False, steps=None):
        _C.adam_step_multi_([p], [grad], [exp_avg], [v], list(max_sqs), steps or _steps(), 0.1, 0.9, 0.999, 1e-8, 0,
                            amsgrad, False, False)

    def sgd(param=p, grad=g, lr=0.1):
        _C.sgd_step_multi_([param], [grad], [], lr, 0, 0, 0, False, False, False)

    with pytest.raises(RuntimeError,
                       match=r"adam_step_multi_: grad of tensor 0 has shape \[3, 2\] but its param has shape \[2, 3\]"):
        adam(grad=_impl(np.ones((3, 2))))
    with pytest.raises(RuntimeError, match="exp_avg of tensor 0 has dtype float64 but its param has dtype float32"):
        adam(exp_avg=_impl(np.zeros((2, 3)), np.float64))
    with pytest.raises(RuntimeError, match="expected 1 max_exp_avg_sqs"):
        adam(amsgrad=True)
    with pytest.raises(RuntimeError, match="state_step of tensor 0 must be a one-element"):
        adam(steps=[_impl(np.zeros(2))])
    with pytest.raises(RuntimeError, match="sgd_step_multi_: param of tensor 0 must be contiguous"):
        sgd(param=_impl(np.ones((3, 2))).transpose(0, 1))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        sgd(lr=-0.1)
    with pytest.raises(RuntimeError, match="expected 2 grads"):
        _C.sgd_step_multi_([p, m], [g], [], 0.1, 0, 0, 0, False, False, False)
    with pytest.raises(TypeError, match="floating point"):
        sgd(param=_impl(np.ones(3), np.int64), grad=_impl(np.ones(3), np.int64))
    # a non-contiguous grad is accepted (copied), the param is updated in place
    gt = _impl(np.arange(6.0).reshape(3, 2)).transpose(0, 1)
    sgd(grad=gt, lr=1.0)
    np.testing.assert_allclose(p.numpy(), 1.0 - np.arange(6.0).reshape(3, 2).T)
