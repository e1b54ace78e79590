"""Elementwise ops against float64 numpy, every float dtype, contiguous / transposed / sliced /
expanded inputs, and broadcasting. One row per op."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make, to_numpy

_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


# name -> (tinytorch call, numpy reference, input range)
UNARY = {
    "neg": (lambda x: -x, lambda x: -x, (-2, 2)),
    "abs": (tt.abs, np.abs, (-2, 2)),
    "sign": (tt.sign, np.sign, (-2, 2)),
    "exp": (tt.exp, np.exp, (-2, 2)),
    "log": (tt.log, np.log, (0.1, 3)),
    "log1p": (tt.log1p, np.log1p, (-0.5, 2)),
    "expm1": (tt.expm1, np.expm1, (-2, 2)),
    "sqrt": (tt.sqrt, np.sqrt, (0.1, 3)),
    "rsqrt": (tt.rsqrt, lambda x: 1 / np.sqrt(x), (0.2, 3)),
    "sin": (tt.sin, np.sin, (-3, 3)),
    "cos": (tt.cos, np.cos, (-3, 3)),
    "tanh": (tt.tanh, np.tanh, (-3, 3)),
    "sigmoid": (tt.sigmoid, _sigmoid, (-4, 4)),
    "relu": (tt.relu, lambda x: np.maximum(x, 0), (-2, 2)),
    "gelu": (tt.nn.functional.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-3, 3)),
    "gelu_tanh": (lambda x: tt.nn.functional.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), (-3, 3)),
    "silu": (tt.nn.functional.silu, lambda x: x * _sigmoid(x), (-3, 3)),
    "softplus": (tt.nn.functional.softplus, _softplus, (-3, 3)),
    "leaky_relu": (lambda x: tt.nn.functional.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), (-2, 2)),
    "elu": (tt.nn.functional.elu, lambda x: np.where(x > 0, x, np.expm1(x)), (-2, 2)),
    "mish": (tt.nn.functional.mish, lambda x: x * np.tanh(_softplus(x)), (-3, 3)),
    "hardswish": (tt.nn.functional.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, (-4, 4)),
    "erf": (tt.erf, _erf, (-2, 2)),
    "reciprocal": (tt.reciprocal, lambda x: 1 / x, (0.3, 3)),
    "square": (tt.square, np.square, (-2, 2)),
    "clamp": (lambda x: tt.clamp(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7), (-2, 2)),
    "clamp_min": (lambda x: x.clamp(min=0.1), lambda x: np.maximum(x, 0.1), (-2, 2)),
    "pow_scalar": (lambda x: x ** 3, lambda x: x ** 3, (-2, 2)),
    "pow_frac": (lambda x: x ** 0.5, np.sqrt, (0.1, 3)),
    "rpow": (lambda x: 2.0 ** x, lambda x: 2.0 ** x, (-2, 2)),
    "floor": (tt.floor, np.floor, (-3, 3)),
    "round": (tt.round, np.round, (-3, 3)),
    "scalar_arith": (lambda x: (x * 2 - 1) / 3 + 0.5, lambda x: (x * 2 - 1) / 3 + 0.5, (-2, 2)),
}

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype, layout):
    fn, ref, (lo, hi) = UNARY[name]
    x, xr = make((5, 7), dtype, layout, lo, hi, seed=hash(name) % 1000)
    y = fn(x)
    assert y.dtype.name == dtype and tuple(y.shape) == (5, 7)
    rtol, atol = TOL[dtype]
    # the reference sees the rounded inputs; half types also round the output once
    assert_close(y, ref(xr), dtype, tol=(rtol, atol * max(1.0, np.abs(ref(xr)).max())), what=name)


BINARY = {
    "add": (lambda a, b: a + b, np.add, (-2, 2)),
    "add_alpha": (lambda a, b: tt.add(a, b, alpha=-0.5), lambda a, b: a - 0.5 * b, (-2, 2)),
    "sub": (lambda a, b: a - b, np.subtract, (-2, 2)),
    "mul": (lambda a, b: a * b, np.multiply, (-2, 2)),
    "div": (lambda a, b: a / b, np.divide, (0.5, 2)),
    "pow": (lambda a, b: a ** b, np.power, (0.5, 2)),
    "maximum": (tt.maximum, np.maximum, (-2, 2)),
    "minimum": (tt.minimum, np.minimum, (-2, 2)),
    "remainder": (lambda a, b: a % b, np.mod, (0.5, 3)),
    "atan2": (tt.atan2, np.arctan2, (-2, 2)),
}

SHAPES = [((4, 5), (4, 5)), ((4, 5), (5,)), ((4, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((), (3, 2))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(name, dtype, shapes):
    fn, ref, (lo, hi) = BINARY[name]
    a, ar = make(shapes[0], dtype, "contiguous", lo, hi, seed=1)
    b, br = make(shapes[1], dtype, "transposed" if len(shapes[1]) == 2 else "contiguous", lo, hi, seed=2)
    y = fn(a, b)
    expected = ref(ar, br)
    assert tuple(y.shape) == expected.shape and y.dtype.name == dtype
    rtol, atol = TOL[dtype]
    assert_close(y, expected, dtype, tol=(rtol, atol * max(1.0, np.abs(expected).max())), what=name)


@pytest.mark.parametrize("op,ref", [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                                    ("gt", np.greater), ("ge", np.greater_equal)])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int64", "int32"])
def test_comparisons(op, ref, dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 3, (6, 4)).astype(np.float64)
    b = rng.integers(-3, 3, (4,)).astype(np.float64)
    y = getattr(tt, op)(tt.tensor(a, dtype=getattr(tt, dtype)), tt.tensor(b, dtype=getattr(tt, dtype)))
    assert y.dtype == tt.bool
    np.testing.assert_array_equal(y.numpy(), ref(a, b))


def test_logical_ops_and_where():
    a = tt.tensor([True, False, True, False])
    b = tt.tensor([True, True, False, False])
    np.testing.assert_array_equal((a.logical_and(b)).numpy(), [True, False, False, False])
    np.testing.assert_array_equal((a.logical_or(b)).numpy(), [True, True, True, False])
    np.testing.assert_array_equal((a.logical_xor(b)).numpy(), [False, True, True, False])
    np.testing.assert_array_equal((tt.logical_not(a)).numpy(), [False, True, False, True])
    x = tt.tensor([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(tt.where(a, x, -x).numpy(), [1, -2, 3, -4])
    np.testing.assert_array_equal(tt.where(a, x, 0.0).numpy(), [1, 0, 3, 0])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_arithmetic(dtype):
    a = np.array([7, 9, 12, 5], dtype=dtype)
    b = np.array([2, 4, 5, 3], dtype=dtype)
    ta, tb = tt.tensor(a), tt.tensor(b)
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    np.testing.assert_array_equal((ta * tb).numpy(), a * b)
    np.testing.assert_array_equal((ta // tb).numpy(), a // b)
    np.testing.assert_array_equal((ta % tb).numpy(), a % b)
    assert (ta / tb).dtype == tt.float32
    np.testing.assert_allclose((ta / tb).numpy(), a / b, rtol=1e-6)


def test_python_remainder_and_floor_divide_signs():
    a = tt.tensor([-7.0, 7.0, -7.0, 7.0])
    b = tt.tensor([2.0, -2.0, -2.0, 2.0])
    np.testing.assert_array_equal((a % b).numpy(), np.mod([-7, 7, -7, 7], [2, -2, -2, 2]))
    np.testing.assert_array_equal((a // b).numpy(), np.floor_divide([-7, 7, -7, 7], [2, -2, -2, 2]))
    ai = tt.tensor([-7, 7, -7, 7])
    bi = tt.tensor([2, -2, -2, 2])
    np.testing.assert_array_equal((ai % bi).numpy(), np.mod([-7, 7, -7, 7], [2, -2, -2, 2]))


def test_clamp_with_tensor_bounds():
    x, xr = make((3, 4), "float32", "transposed")
    lo, lor = make((4,), "float32", seed=5, low=-1, high=0)
    hi, hir = make((3, 1), "float32", seed=6, low=0, high=1)
    assert_close(tt.clamp(x, lo, hi), np.minimum(np.maximum(xr, lor), hir))
    assert_close(x.clamp(max=hi), np.minimum(xr, hir))


def test_nan_propagation():
    x = tt.tensor([float("nan"), 1.0])
    assert np.isnan(tt.maximum(x, tt.tensor([0.0, 0.0])).numpy()[0])
    assert np.isnan(x.clamp(0, 0.5).numpy()[0])
    np.testing.assert_array_equal(tt.isnan(x).numpy(), [True, False])


def test_in_place_ops_write_through_views():
    base = tt.zeros(3, 4)
    col = base.select(1, 2)
    col.add_(tt.tensor([1.0, 2.0, 3.0]))
    col.mul_(2)
    ref = np.zeros((3, 4)); ref[:, 2] = [2, 4, 6]
    np.testing.assert_array_equal(base.numpy(), ref)
    base.t().sub_(1)
    np.testing.assert_array_equal(base.numpy(), ref - 1)
    v0 = base._version
    base.relu_()
    assert base._version > v0


def test_mixed_dtype_binary_promotes():
    a = tt.tensor([1.0, 2.0], dtype=tt.float16)
    b = tt.tensor([1.0, 2.0], dtype=tt.bfloat16)
    assert (a + b).dtype == tt.float32
    c = tt.tensor([1, 2], dtype=tt.int32) * tt.tensor([0.5, 0.5], dtype=tt.float64)
    assert c.dtype == tt.float64
    np.testing.assert_array_equal(c.numpy(), [0.5, 1.0])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
def test_logical_not_in_place_writes_zeros_and_ones_in_the_tensor_dtype(dtype):
    x = tt.tensor([0, 2, -1, 0], dtype=getattr(tt, dtype))
    assert x.logical_not_() is x and x.dtype == getattr(tt, dtype)
    np.testing.assert_array_equal(x.float().numpy(), np.logical_not([0, 2, -1, 0]).astype(np.float32))
