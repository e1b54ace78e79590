"""tinytorch.testing: assert_close passes and fails where torch.testing.assert_close does, with
its messages (the expected texts are PyTorch's, from its documentation and its message format),
and make_tensor draws in the documented ranges."""
import collections
import warnings

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.testing
from tinytorch.testing import assert_close, make_tensor

# dtype -> PyTorch's default (rtol, atol)
DEFAULTS = {tt.float16: (1e-3, 1e-5), tt.bfloat16: (1.6e-2, 1e-5), tt.float32: (1.3e-6, 1e-5),
            tt.float64: (1e-7, 1e-7)}


def _message(fn) -> str:
    with pytest.raises(AssertionError) as info:
        fn()
    return str(info.value)


def test_tensor_mismatch_message_is_torchs():
    expected = tt.tensor([1.0, 2.0, 3.0])
    actual = tt.tensor([1.0, 4.0, 5.0])
    msg = _message(lambda: assert_close(actual, expected, msg=lambda m: f"Header\n\n{m}\n\nFooter"))
    assert msg == ("Header\n\nTensor-likes are not close!\n\n"
                   "Mismatched elements: 2 / 3 (66.7%)\n"
                   "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 1.0 at index (1,) (up to 1.3e-06 allowed)\n\nFooter")
    assert _message(lambda: assert_close(actual, expected, msg="Argh, the tensors are not close!")) == \
        "Argh, the tensors are not close!"


def test_scalar_messages_are_torchs():
    msg = _message(lambda: assert_close(1e-9, 1e-10, rtol=0, atol=0))
    assert msg == ("Scalars are not equal!\n\nExpected 1e-10 but got 1e-09.\n"
                   "Absolute difference: 9.000000000000001e-10\nRelative difference: 9.0")
    nan = tt.tensor(float("nan"))
    assert _message(lambda: assert_close(nan, nan.clone())) == (
        "Scalars are not close!\n\nExpected nan but got nan.\n"
        "Absolute difference: nan (up to 1e-05 allowed)\nRelative difference: nan (up to 1.3e-06 allowed)")
    assert_close(nan, nan.clone(), equal_nan=True)


def test_index_of_greatest_difference_in_2d():
    expected = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=tt.float64)
    actual = expected.clone()
    actual[1, 2] = 6.5      # absolute 0.5, relative 0.0833
    actual[0, 0] = 1.25     # absolute 0.25, relative 0.25
    msg = _message(lambda: assert_close(actual, expected))
    assert "Mismatched elements: 2 / 6 (33.3%)" in msg
    assert "Greatest absolute difference: 0.5 at index (1, 2) (up to 1e-07 allowed)" in msg
    assert "Greatest relative difference: 0.25 at index (0, 0) (up to 1e-07 allowed)" in msg


# dtype -> a value next to 1.0 within the default tolerance (atol + rtol there), and one outside it;
# powers of two, so each dtype holds them exactly
EDGES = {tt.float16: (1 + 2**-10, 1 + 2**-9), tt.bfloat16: (1 + 2**-6, 1 + 3 * 2**-7),
         tt.float32: (1 + 2**-17, 1 + 2**-16), tt.float64: (1 + 2**-24, 1 + 2**-22)}


@pytest.mark.parametrize("dtype", list(DEFAULTS), ids=str)
def test_default_tolerances_per_dtype(dtype):
    rtol, atol = DEFAULTS[dtype]
    inside, outside = EDGES[dtype]
    one = tt.ones(3, dtype=dtype)
    assert abs(inside - 1) <= atol + rtol < abs(outside - 1)
    assert_close(tt.tensor([1.0, inside, 1.0], dtype=dtype), one)
    msg = _message(lambda: assert_close(tt.tensor([1.0, outside, 1.0], dtype=dtype), one))
    assert f"Mismatched elements: 1 / 3 (33.3%)\nGreatest absolute difference: {outside - 1} at index (1,) " \
           f"(up to {atol} allowed)" in msg
    assert f"(up to {rtol} allowed)" in msg


def test_float32_tolerance_edges():
    x = tt.tensor([1000.0], dtype=tt.float32)
    # allowed: 1e-5 + 1.3e-6 * 1000 = 1.31e-3; float32 spacing at 1000 is 6.1e-5
    assert_close(x + 1e-3, x)
    msg = _message(lambda: assert_close(x + 2e-3, x))
    assert "Tensor-likes are not close!" in msg and "Mismatched elements: 1 / 1 (100.0%)" in msg


def test_integers_compare_exactly():
    a = tt.tensor([1, 2, 3])
    assert_close(a, a.clone())
    msg = _message(lambda: assert_close(tt.tensor([1, 2, 4]), a))
    assert msg == ("Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                   "Greatest absolute difference: 1 at index (2,)\n"
                   "Greatest relative difference: 0.3333333432674408 at index (2,)")
    assert_close(tt.tensor([1, 2, 4]), a, rtol=0, atol=1)   # explicit tolerances apply to integers too
    b = tt.tensor([True, False])
    assert_close(b, b.clone())
    assert "not equal" in _message(lambda: assert_close(tt.tensor([True, True]), b))


def test_non_finite_values():
    inf = float("inf")
    assert_close(tt.tensor([inf, -inf, 1.0]), tt.tensor([inf, -inf, 1.0]))
    assert "Mismatched elements: 1 / 2" in _message(lambda: assert_close(tt.tensor([inf, 1.0]),
                                                                       tt.tensor([-inf, 1.0])))
    assert "Mismatched elements: 1 / 2" in _message(lambda: assert_close(tt.tensor([1e30, 1.0]),
                                                                       tt.tensor([inf, 1.0])))


def test_attribute_checks():
    f32, f64 = tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.0], dtype=tt.float64)
    assert _message(lambda: assert_close(f32, f64)) == \
        f"The values for attribute 'dtype' do not match: {tt.float32} != {tt.float64}."
    assert_close(f32, f64, check_dtype=False)       # promoted to float64, float32's tolerances
    assert _message(lambda: assert_close(f32, tt.tensor([1.0, 2.0, 3.0]))) == \
        f"The values for attribute 'shape' do not match: {tt.Size([2])} != {tt.Size([3])}."
    a = tt.ones(2, 3)
    transposed = tt.ones(3, 2).t()
    assert_close(a, transposed)
    assert _message(lambda: assert_close(a, transposed, check_stride=True)) == \
        "The values for attribute 'stride()' do not match: (3, 1) != (1, 2)."


def test_tolerance_arguments_come_in_pairs():
    x = tt.tensor([1.0])
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, "
                                         "but got no atol."):
        assert_close(x, x, rtol=1e-3)
    with pytest.raises(ValueError, match="but got no rtol"):
        assert_close(x, x, atol=1e-3)
    assert_close(tt.tensor([1.0]), tt.tensor([1.1]), rtol=0.0, atol=0.2)


def test_type_relations():
    x = tt.tensor([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        assert_close(x, 1.0)
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(x.numpy(), x)
    p = tt.nn.Parameter(x.clone())
    assert_close(p, x)
    with pytest.raises(TypeError, match="Parameter"):
        assert_close(p, x, allow_subclasses=False)


def test_python_scalars_and_numpy():
    import math
    assert_close(2.0 / math.sqrt(2.0), math.sqrt(2.0))
    assert _message(lambda: assert_close(1.0, 1)) == "The (d)types do not match: <class 'float'> != <class 'int'>."
    assert_close(1.0, 1, check_dtype=False)
    assert _message(lambda: assert_close(True, False)) == "Booleans mismatch: True is not False"
    assert _message(lambda: assert_close(None, 1)) == "None mismatch: None is not 1"
    assert_close(None, None)
    expected = np.array([1e0, 1e-1, 1e-2])
    assert_close(np.arccos(np.cos(expected)), expected)
    assert "Tensor-likes are not close!" in _message(lambda: assert_close(expected + 1e-3, expected))


def test_sequences_and_mappings():
    expected = [tt.tensor([1.0]), 2.0, np.array(3.0)]
    assert_close(tuple(expected), expected)
    assert_close(tt.Size([2, 3]), (2, 3))
    msg = _message(lambda: assert_close([tt.tensor([1.0]), 2.0], [tt.tensor([1.0]), 2.5]))
    assert msg.startswith("Scalars are not close!\n\nExpected 2.5 but got 2.0.")
    assert msg.endswith("The failure occurred for item [1]")
    assert _message(lambda: assert_close([1, 2], [1, 2, 3])) == "The length of the sequences mismatch: 2 != 3"
    foo = tt.tensor(1.0)
    assert_close({"baz": 3.0, "foo": foo}, collections.OrderedDict([("foo", foo), ("baz", 3.0)]))
    assert _message(lambda: assert_close({"a": 1, "b": 2}, {"a": 1, "c": 2})) == (
        "The keys of the mappings do not match:\nMissing keys in the actual mapping: ['c']\n"
        "Additional keys in the actual mapping: ['b']")
    msg = _message(lambda: assert_close({"w": [tt.tensor([1.0, 2.0])]}, {"w": [tt.tensor([1.0, 3.0])]}))
    assert msg.endswith("The failure occurred for item ['w'][0]")
    assert _message(lambda: assert_close({"w": tt.tensor([1.0])}, {"w": tt.tensor([2.0])}, msg="custom")) == "custom"


def test_requires_grad_inputs_compare_values():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    assert_close(x * 1.0, x.detach())


def test_assert_allclose_is_deprecated_and_loose():
    with pytest.warns(FutureWarning, match="assert_close"):
        tinytorch.testing.assert_allclose(tt.tensor([1.0]), tt.tensor([1.00005]))   # rtol 1e-4 for float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(AssertionError):
            tinytorch.testing.assert_allclose(tt.tensor([1.0]), tt.tensor([1.001]))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16, tt.bfloat16], ids=str)
def test_make_tensor_floating(dtype):
    t = make_tensor(40, 50, dtype=dtype, device="cpu")
    assert t.shape == (40, 50) and t.dtype == dtype and t.device.type == "cpu"
    v = t.double().numpy()
    assert v.min() >= -9 and v.max() <= 9 and v.std() > 3     # uniform on [-9, 9): std 5.2
    t = make_tensor((1000,), dtype=dtype, device="cpu", low=2, high=3)
    v = t.double().numpy()
    assert v.min() >= 2 and v.max() <= 3
    g = make_tensor(3, dtype=dtype, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf


@pytest.mark.parametrize("dtype, lo, hi", [(tt.int64, -9, 9), (tt.int32, -9, 9), (tt.uint8, 0, 9)], ids=str)
def test_make_tensor_integers(dtype, lo, hi):
    v = make_tensor(2000, dtype=dtype, device="cpu").numpy()
    assert v.min() == lo and v.max() == hi          # [-9, 10) clamped to the dtype: every value is drawn
    v = make_tensor(500, dtype=dtype, device="cpu", low=3, high=5).numpy()
    assert set(np.unique(v)) == {3, 4}
    assert (make_tensor(2000, dtype=dtype, device="cpu", exclude_zero=True).numpy() != 0).all()
    with pytest.raises(ValueError, match="requires_grad must be False for integral dtype"):
        make_tensor(3, dtype=dtype, device="cpu", requires_grad=True)


def test_make_tensor_options():
    b = make_tensor(500, dtype=tt.bool, device="cpu").numpy()
    assert set(np.unique(b)) == {False, True}
    nc = make_tensor(4, 6, dtype=tt.float32, device="cpu", noncontiguous=True)
    assert nc.shape == (4, 6) and not nc.is_contiguous()
    f = make_tensor(5000, dtype=tt.float16, device="cpu", low=-1e-3, high=1e-3, exclude_zero=True)
    assert (f.numpy() != 0).all()
    with pytest.raises(ValueError, match="`low` must be less than `high`"):
        make_tensor(3, dtype=tt.float32, device="cpu", low=2, high=1)
    with pytest.raises(ValueError, match="only supports"):
        make_tensor(3, dtype=tt.uint8, device="cpu", low=-20, high=-10)
