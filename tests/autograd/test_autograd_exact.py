"""Exact gradients where the table's finite differences can't look: ties of max/min/amax/amin,
kinks of relu/abs/clamp, zeros in prod and pow, degenerate reductions (PyTorch's conventions),
dtype casts and setitem. The table of every differentiable op is in test_autograd_ops.py."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy


# ------------------------------------------------------------------ exact values at non-smooth points

def _g(fn, *vals):
    xs = [tt.tensor(v, dtype=tt.float64, requires_grad=True) for v in vals]
    out = fn(*xs)
    out.backward(tt.ones_like(out))
    return [to_numpy(x.grad) for x in xs]


def test_maximum_minimum_ties_split_evenly():
    ga, gb = _g(tt.maximum, [1.0, 2.0, 3.0, -1.0], [1.0, 0.0, 3.0, 5.0])
    np.testing.assert_array_equal(ga, [0.5, 1.0, 0.5, 0.0])
    np.testing.assert_array_equal(gb, [0.5, 0.0, 0.5, 1.0])
    ga, gb = _g(tt.minimum, [1.0, 2.0, 3.0, -1.0], [1.0, 0.0, 3.0, 5.0])
    np.testing.assert_array_equal(ga, [0.5, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gb, [0.5, 1.0, 0.5, 0.0])
    # broadcast tie: the scalar-like input collects the halves
    ga, gb = _g(tt.maximum, [[2.0, 2.0], [1.0, 3.0]], [2.0])
    np.testing.assert_array_equal(ga, [[0.5, 0.5], [0.0, 1.0]])
    np.testing.assert_array_equal(gb, [2.0])


def test_amax_amin_max_all_ties_split_evenly():
    x = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
    np.testing.assert_allclose(_g(lambda t: t.amax(1), x)[0], [[0, 0.5, 0.5], [0.5, 0.5, 0]])
    np.testing.assert_allclose(_g(lambda t: t.amin(0), x)[0], [[1, 0, 0], [0, 1, 1]])
    np.testing.assert_allclose(_g(lambda t: t.amin(0), [[1.0, 1.0], [1.0, 0.0]])[0], [[0.5, 0], [0.5, 1]])
    np.testing.assert_allclose(_g(tt.max, x)[0], [[0, 0.5, 0.5], [0, 0, 0]])
    np.testing.assert_allclose(_g(tt.min, [[0.0, 3.0], [0.0, 0.0]])[0], [[1 / 3, 0], [1 / 3, 1 / 3]])


def test_max_min_with_dim_ties_send_grad_to_returned_index():
    x = tt.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], dtype=tt.float64, requires_grad=True)
    v, i = tt.max(x, 1)
    np.testing.assert_array_equal(i.numpy(), [1, 0])
    v.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[0, 1, 0], [1, 0, 0]])
    x.grad = None
    v, i = tt.min(x, 0, keepdim=True)
    (v * tt.tensor([[1.0, 2.0, 3.0]], dtype=tt.float64)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[1, 0, 0], [0, 2, 3]])


def test_relu_abs_clamp_at_kinks_match_pytorch():
    # PyTorch conventions: relu'(0) = 0, abs'(0) = 0 (sign), clamp passes the gradient at the bounds
    np.testing.assert_array_equal(_g(tt.relu, [-1.0, 0.0, 2.0])[0], [0, 0, 1])
    np.testing.assert_array_equal(_g(tt.abs, [-1.0, 0.0, 2.0])[0], [-1, 0, 1])
    np.testing.assert_array_equal(_g(lambda t: t.clamp(0.0, 1.0), [-1.0, 0.0, 0.5, 1.0, 2.0])[0], [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(_g(lambda t: t ** 2.0, [0.0, 1.0])[0], [0, 2])
    np.testing.assert_array_equal(_g(lambda t: t.sqrt(), [4.0])[0], [0.25])


def test_prod_gradient_with_zeros_exact():
    x = [[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]]
    np.testing.assert_array_equal(_g(lambda t: t.prod(1), x)[0], [[0, 6, 0], [0, 0, 0], [8, 4, 2]])
    np.testing.assert_array_equal(_g(lambda t: t.prod(), [[2.0, 0.0], [3.0, 4.0]])[0], [[0, 24], [0, 0]])


def test_pow_tensor_exponent_at_zero_base():
    # d/db 0**b = 0 for b >= 0 (as PyTorch); d/da a**b at a = 0 follows b * a**(b-1)
    ga, gb = _g(tt.pow, [0.0, 0.0, 2.0], [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(gb, [0.0, 0.0, 8.0 * math.log(2.0)])
    np.testing.assert_array_equal(ga, [0.0, 0.0, 12.0])


def test_reductions_at_degenerate_points_match_pytorch():
    # std / norm of a constant or zero input: gradient 0 (PyTorch masks the 0/0)
    np.testing.assert_array_equal(_g(lambda t: t.std(), [2.0, 2.0, 2.0])[0], [0, 0, 0])
    np.testing.assert_array_equal(_g(lambda t: t.std(1).sum(), [[1.0, 1.0], [1.0, 3.0]])[0], [[0, 0], [-1 / 2 ** 0.5, 1 / 2 ** 0.5]])
    np.testing.assert_array_equal(_g(lambda t: t.var(), [2.0, 2.0])[0], [0, 0])
    np.testing.assert_array_equal(_g(lambda t: t.norm(), [0.0, 0.0])[0], [0, 0])
    np.testing.assert_array_equal(_g(lambda t: t.norm(3), [0.0, 0.0])[0], [0, 0])
    np.testing.assert_array_equal(_g(lambda t: t.norm(1), [0.0, -2.0])[0], [0, -1])
    np.testing.assert_allclose(_g(lambda t: t.norm(float("inf")), [-2.0, 2.0, 1.0])[0], [-0.5, 0.5, 0])


# ------------------------------------------------------------------ casts and setitem

@pytest.mark.parametrize("src,dst", [("float32", "float64"), ("float64", "float32"), ("float16", "float32"),
                                     ("bfloat16", "float32"), ("float32", "float16")])
def test_cast_gradient_is_cast_back(src, dst):
    x = tt.tensor([0.5, -1.0, 2.0], dtype=getattr(tt, src), requires_grad=True)
    y = x.to(getattr(tt, dst))
    assert y.dtype.name == dst and y.grad_fn.name() == "ToCopyBackward0"
    (y * tt.tensor([1.0, 2.0, 3.0], dtype=getattr(tt, dst))).sum().backward()
    assert x.grad.dtype.name == src
    np.testing.assert_array_equal(to_numpy(x.grad), [1.0, 2.0, 3.0])


def test_cast_to_int_is_not_differentiable():
    x = tt.tensor([0.5, 1.5], requires_grad=True)
    assert not x.long().requires_grad
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad


def test_setitem_gradient_values():
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    v = tt.tensor([10.0, 20.0], requires_grad=True)
    y = x * 1.0
    y[:, 1] = v
    (y * tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 3], [4, 0, 6]])   # overwritten part: zero
    np.testing.assert_array_equal(v.grad.numpy(), [2, 5])
