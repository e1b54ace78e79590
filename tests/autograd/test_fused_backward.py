"""Fused backward kernels are optimisations of their op's formula: a plain backward runs the
fused kernel, a recorded one (create_graph=True) runs the formula written with tensor ops; both
must give the same gradients. (The elementwise rows are checked by test_op_table.py; norms,
activations and cross_entropy also by test_double_backward.py.)"""
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, GRAD_TOL, assert_close, make, to_numpy

F = tt.nn.functional


def _linear(bias, batch):
    def case(dtype):
        x = make(batch + (5,), dtype, "transposed" if len(batch) == 1 else "contiguous", seed=1, requires_grad=True)[0]
        w = make((3, 5), dtype, "contiguous", seed=2, requires_grad=True)[0]
        b = make((3,), dtype, "contiguous", seed=3, requires_grad=True)[0] if bias else None
        inputs = [t for t in (x, w, b) if t is not None]
        return (lambda: F.linear(x, w, b)), inputs
    return case


def _reduce_op(fn, dim):
    def case(dtype):
        x = make((4, 6), dtype, "transposed", seed=4, requires_grad=True)[0]
        return (lambda: fn(x, dim)), [x]
    return case


CASES = {
    "linear": _linear(True, (4,)),
    "linear_no_bias": _linear(False, (4,)),
    "linear_batched": _linear(True, (2, 3)),
    "softmax_dim1": _reduce_op(F.softmax, 1),
    "softmax_dim0": _reduce_op(F.softmax, 0),
    "log_softmax_dim1": _reduce_op(F.log_softmax, 1),
    "log_softmax_dim0": _reduce_op(F.log_softmax, 0),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_backward_equals_formula(name, dtype):
    forward, inputs = CASES[name](dtype)
    out = forward()
    g = make(tuple(out.shape), dtype, "contiguous", seed=9, requires_grad=True)[0]
    fused = tt.autograd.grad(forward(), inputs, g.detach())
    formula = tt.autograd.grad(forward(), inputs, g, create_graph=True)
    for i, (a, b) in enumerate(zip(fused, formula)):
        assert a.grad_fn is None and b.grad_fn is not None     # the two paths really differ
        rtol, atol = GRAD_TOL[dtype]
        assert_close(a, to_numpy(b), dtype, tol=(rtol, atol), what=f"{name} input {i}")
