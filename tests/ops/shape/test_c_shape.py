"""tinytorch._C joining/shape ops and factories against numpy references."""
import numpy as np
import pytest

from tinytorch import _C

from support.c_helpers import BF16, BOOL, F16, F32, F64, FLOATS, I32, I64, U8, from_array, random_array, to_np

ALL = FLOATS + [I32, I64, U8, BOOL]
rng = np.random.default_rng(1)
CPU = _C.Device("cpu")
make = from_array


def rand(shape, code):
    return random_array(rng, shape, code)


@pytest.mark.parametrize("code", ALL)
def test_cat_stack(code):
    a, an = rand((2, 3, 4), code)
    b, bn = rand((2, 5, 4), code)
    c, cn = rand((4, 2, 3), code)  # will be permuted to (2, 3|?) -- non-contiguous input
    cp = c.permute([1, 0, 2])      # (2, 4, 3)
    cpn = cn.transpose(1, 0, 2)
    got = to_np(_C.cat([a, b], 1))
    np.testing.assert_array_equal(got, np.concatenate([an, bn], 1))
    got = to_np(_C.cat([a.transpose(1, 2), cp], -1))
    np.testing.assert_array_equal(got, np.concatenate([an.transpose(0, 2, 1), cpn], -1))
    s, sn = rand((2, 3, 4), code)
    for dim in (0, 2, 3, -1):
        got = to_np(_C.stack([a, s], dim))
        np.testing.assert_array_equal(got, np.stack([an, sn], dim))


def test_cat_promotes_and_skips_legacy_empty():
    a = _C.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    b = _C.from_numpy(np.full((1, 3), 0.5, np.float32))
    e = _C.from_numpy(np.zeros((0,), np.float64))
    out = _C.cat([a, e, b], 0)
    assert out.dtype_code == F64
    np.testing.assert_array_equal(out.numpy(), np.concatenate([np.arange(6).reshape(2, 3), [[0.5] * 3]]))
    h = _C.from_numpy(np.ones((2, 3), np.float16))
    assert _C.cat([h, a], 0).dtype_code == F16


@pytest.mark.parametrize("code", ALL)
def test_flip_roll_repeat(code):
    x, xn = rand((3, 4, 5), code)
    for dims in ([0], [1, 2], [-1, 0], [0, 1, 2]):
        np.testing.assert_array_equal(to_np(_C.flip(x, dims)), np.flip(xn, dims))
    xt = x.transpose(0, 2)
    np.testing.assert_array_equal(to_np(_C.flip(xt, [0])), np.flip(xn.transpose(2, 1, 0), 0))
    np.testing.assert_array_equal(to_np(_C.roll(x, [2, -7], [1, 2])), np.roll(xn, (2, -7), (1, 2)))
    np.testing.assert_array_equal(to_np(_C.roll(x, [4])), np.roll(xn, 4))
    np.testing.assert_array_equal(to_np(_C.roll(xt, [1], [0])), np.roll(xn.transpose(2, 1, 0), 1, 0))
    np.testing.assert_array_equal(to_np(_C.repeat(x, [2, 1, 3])), np.tile(xn, (2, 1, 3)))
    np.testing.assert_array_equal(to_np(_C.repeat(xt, [2, 1, 1, 2])), np.tile(xn.transpose(2, 1, 0), (2, 1, 1, 2)))


@pytest.mark.parametrize("code", ALL)
def test_tril_triu(code):
    x, xn = rand((2, 4, 6), code)
    for k in (-2, 0, 1, 7):
        np.testing.assert_array_equal(to_np(_C.tril(x, k)), np.tril(xn, k))
        np.testing.assert_array_equal(to_np(_C.triu(x, k)), np.triu(xn, k))
    xt = x.transpose(1, 2)
    np.testing.assert_array_equal(to_np(_C.triu(xt, -1)), np.triu(xn.transpose(0, 2, 1), -1))


def test_one_hot():
    ind = rng.integers(0, 5, (3, 4))
    t = _C.from_numpy(ind)
    got = _C.one_hot(t, -1).numpy()
    np.testing.assert_array_equal(got, np.eye(ind.max() + 1, dtype=np.int64)[ind])
    got = _C.one_hot(t.transpose(0, 1), 7).numpy()
    np.testing.assert_array_equal(got, np.eye(7, dtype=np.int64)[ind.T])


@pytest.mark.parametrize("code", [F32, F64, F16, BF16, I64, I32, U8])
def test_factories(code):
    got = to_np(_C.arange(0, 10, 3, code, CPU))
    np.testing.assert_array_equal(got, np.arange(0, 10, 3))
    got = to_np(_C.arange(5, -3, -2, code, CPU)) if code != U8 else None
    if got is not None:
        np.testing.assert_array_equal(got, np.arange(5, -3, -2))
    if code in FLOATS:
        got = to_np(_C.arange(0.0, 1.0, 0.1, code, CPU))
        tol = {F16: 1e-3, BF16: 4e-3}.get(code, 1e-7)
        np.testing.assert_allclose(got, np.arange(0.0, 1.0, 0.1), rtol=tol, atol=tol)
        got = to_np(_C.linspace(-1.0, 2.0, 7, code, CPU))
        np.testing.assert_allclose(got, np.linspace(-1.0, 2.0, 7), rtol=tol, atol=tol)
        assert to_np(_C.linspace(3.0, 4.0, 1, code, CPU)).tolist() == [3.0]
    np.testing.assert_array_equal(to_np(_C.eye(3, 5, code, CPU)), np.eye(3, 5))
    np.testing.assert_array_equal(to_np(_C.eye(4, None, code, CPU)), np.eye(4))
    big = _C.arange(2**53 + 1, 2**53 + 4, 1, I64, CPU).numpy()
    np.testing.assert_array_equal(big, np.arange(2**53 + 1, 2**53 + 4))


def test_errors():
    a = _C.from_numpy(np.zeros((2, 3), np.float32))
    b = _C.from_numpy(np.zeros((2, 4), np.float32))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0.*tensor number 1"):
        _C.cat([a, b], 0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        _C.cat([a, _C.from_numpy(np.zeros((2, 3, 1), np.float32))], 0)
    with pytest.raises(ValueError, match="non-empty"):
        _C.cat([], 0)
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        _C.cat([_C.from_numpy(np.zeros((), np.float32))], 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        _C.cat([a, a], 2)
    with pytest.raises(RuntimeError, match="equal size"):
        _C.stack([a, b], 0)
    with pytest.raises(RuntimeError, match="multiple times"):
        _C.flip(a, [0, -2])
    with pytest.raises(RuntimeError, match="must align"):
        _C.roll(a, [1, 2], [0])
    with pytest.raises(RuntimeError, match="can not be smaller"):
        _C.repeat(a, [2])
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        _C.tril(_C.from_numpy(np.zeros(3, np.float32)), 0)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        _C.one_hot(_C.from_numpy(np.array([0, 5])), 3)
    with pytest.raises(RuntimeError, match="int64"):
        _C.one_hot(_C.from_numpy(np.array([0, 1], np.int32)), 3)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        _C.arange(0, 1, 0, F32, CPU)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        _C.arange(0, 1, -1, F32, CPU)
    with pytest.raises(RuntimeError, match="non-negative"):
        _C.linspace(0, 1, -1, F32, CPU)
    with pytest.raises(TypeError, match="invalid dtype"):
        _C.eye(2, 2, 42, CPU)
