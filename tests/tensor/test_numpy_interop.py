"""numpy meets tensors: binary ops with arrays and numpy scalars on either side (the result is a
tensor with PyTorch's dtype), numpy ufuncs on tensors, __array__ errors as PyTorch's."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make, to_numpy

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.lt, operator.ge]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_tensor_op_ndarray_both_sides(dtype, op, layout):
    t, ref = make((3, 4), dtype, layout, low=0.5, high=2.0)
    rng = np.random.default_rng(1)
    arr32 = rng.uniform(0.5, 2.0, (4,)).astype(np.float32)  # broadcast along dim 0
    for out, expect in ((op(t, arr32), op(ref, arr32.astype(np.float64))),
                        (op(arr32, t), op(arr32.astype(np.float64), ref))):
        assert isinstance(out, tt.Tensor)
        if out.dtype is not tt.bool:
            # torch's promotion: a float32 array is a float32 tensor operand
            assert out.dtype is tt.promote_types(getattr(tt, dtype), tt.float32)
            assert_close(out, expect, dtype=out.dtype.name if out.dtype.itemsize < 4 or dtype == "float32"
                         else dtype)
        else:
            np.testing.assert_array_equal(to_numpy(out), expect)


def test_float64_array_promotes_and_numpy_scalars_are_wrapped_numbers():
    t = tt.ones(3)
    assert (t + np.ones(3)).dtype is tt.float64  # a float64 array is a float64 tensor, as in torch
    assert (np.ones((2, 1)) - t).shape == (2, 3)
    assert (t * np.float32(2)).dtype is tt.float32 and (t + np.int64(2)).dtype is tt.float32
    assert (np.float64(2) * t).dtype is tt.float32
    assert (tt.ones(3).half() * np.float64(2)).dtype is tt.float16
    assert (tt.arange(3) + np.int32(1)).dtype is tt.int64
    assert (tt.ones(2) + np.array([1, 2], np.int64)).dtype is tt.float32
    ro = np.ones(3)
    ro.flags.writeable = False
    assert (t + ro).tolist() == [2.0, 2.0, 2.0]  # read-only arrays are copied, not borrowed
    assert (t + np.ones(6)[::-2]).tolist() == [2.0, 2.0, 2.0]  # negative strides too


def test_gradient_flows_through_numpy_operands():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    (x * np.array([3.0, 4.0], np.float32) + np.float32(1)).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_numpy_ufuncs_on_tensors():
    t, ref = make((2, 3), "float32", "transposed", low=0.5, high=2.0)
    for fn in (np.add, np.multiply, np.maximum):
        out = fn(np.ones((2, 3)), t)
        assert isinstance(out, tt.Tensor)
        assert_close(out, fn(np.ones((2, 3)), ref), dtype="float32")
    e = np.exp(t)
    assert isinstance(e, tt.Tensor) and e.dtype is tt.float32
    assert_close(e, np.exp(ref), dtype="float32")
    h = np.hypot(t, t)  # computed by numpy, returned as a tensor
    assert isinstance(h, tt.Tensor)
    assert_close(h, np.hypot(ref, ref), dtype="float32")
    acc = np.zeros((2, 3), np.float32)
    acc += t  # in place on the array: numpy's result
    assert type(acc) is np.ndarray
    np.testing.assert_allclose(acc, ref, **dict(zip(("rtol", "atol"), TOL["float32"])))


def test_array_conversion_errors_as_pytorch():
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        np.asarray(tt.ones(2).bfloat16())
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.asarray(tt.ones(2, requires_grad=True))
    t = tt.arange(4.0)
    a = np.asarray(t)
    assert a.ctypes.data == t.data_ptr()  # shares memory, as tensor.numpy()
    assert np.asarray(t, dtype=np.int64).dtype == np.int64
    assert np.array(t, copy=True).ctypes.data != t.data_ptr()


@pytest.mark.parametrize("np_dtype", [">f4", ">f8", ">i4", ">i8", ">f2"])
def test_non_native_byte_order(np_dtype):
    # from_numpy shares memory: reinterpreting big-endian bytes gave [0, 4.6e-41, ...]; it refuses (torch
    # raises too), and the copying constructors convert the values
    a = np.arange(5, dtype=np_dtype)
    with pytest.raises(ValueError, match="byte order"):
        tt.from_numpy(a)
    for make_tensor in (tt.tensor, tt.as_tensor):
        np.testing.assert_array_equal(make_tensor(a).numpy(), np.arange(5))
