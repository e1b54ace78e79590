"""Tensor core: views alias storage, contiguity, dtype promotion, numpy interop, bad input."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy


def test_views_alias_storage():
    base = tt.arange(24, dtype=tt.float32).reshape(2, 3, 4)
    views = {
        "view": base.view(6, 4), "reshape": base.reshape(4, 6), "transpose": base.transpose(0, 2),
        "permute": base.permute(2, 0, 1), "t": base[0].t() if hasattr(tt.Tensor, "__getitem__") else base.select(0, 0).t(),
        "narrow": base.narrow(2, 1, 2), "select": base.select(1, 2), "unsqueeze": base.unsqueeze(1),
        "squeeze": base.unsqueeze(0).squeeze(0), "unfold": base.unfold(2, 2, 1), "flatten": base.flatten(),
        "as_strided": base.as_strided((3, 3), (4, 1), 1), "diagonal": base.diagonal(0, 1, 2),
    }
    for name, v in views.items():
        assert v.data_ptr() >= base.data_ptr(), name
        before = to_numpy(base)
        v.add_(1)  # writes through the view
        after = to_numpy(base)
        assert not np.array_equal(before, after), f"{name}: write through view not seen by base"


def test_step_slices_and_expand_alias():
    base = tt.zeros(4, 6)
    s = tt._ops.shape.slice(base, 1, 1, None, 2)  # base[:, 1::2]
    assert s.shape == (4, 3) and s.stride() == (6, 2)
    s.fill_(7.0)
    ref = np.zeros((4, 6)); ref[:, 1::2] = 7
    np.testing.assert_array_equal(base.numpy(), ref)
    e = tt.ones(3, 1).expand(3, 5)
    assert e.stride() == (1, 0) and e.shape == (3, 5)


def test_contiguous_copies_only_when_needed():
    a = tt.ones(3, 4)
    assert a.contiguous().data_ptr() == a.data_ptr()
    b = a.t()
    assert not b.is_contiguous()
    c = b.contiguous()
    assert c.is_contiguous() and c.data_ptr() != a.data_ptr()
    np.testing.assert_array_equal(c.numpy(), np.ones((4, 3)))


def test_reshape_copies_when_view_impossible():
    a = tt.arange(6.).reshape(2, 3).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        a.view(6)
    r = a.reshape(6)
    np.testing.assert_array_equal(r.numpy(), np.arange(6.).reshape(2, 3).T.reshape(6))


@pytest.mark.parametrize("a,b,expected", [
    ("int32", "float16", "float16"), ("uint8", "int32", "int32"), ("bool", "uint8", "uint8"),
    ("float16", "bfloat16", "float32"), ("int64", "float32", "float32"), ("float32", "float64", "float64"),
])
def test_promote_types(a, b, expected):
    assert tt.promote_types(getattr(tt, a if a != "bool" else "bool"), getattr(tt, b)).name == expected


def test_result_type_with_python_scalars_and_zero_dim():
    i32 = tt.tensor([1, 2], dtype=tt.int32)
    assert (i32 + 1).dtype == tt.int32
    assert (i32 + 1.5).dtype == tt.float32
    assert (tt.tensor([1.0], dtype=tt.float16) + 1.5).dtype == tt.float16
    assert (i32 + tt.tensor(1.5, dtype=tt.float64)).dtype == tt.float64
    assert (tt.tensor([1.0], dtype=tt.float16) + tt.tensor(1.5, dtype=tt.float64)).dtype == tt.float16
    assert (tt.tensor([True]) + 1).dtype == tt.int64
    assert (i32 / 2).dtype == tt.float32


def test_numpy_round_trip_is_zero_copy():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tt.from_numpy(arr)
    t.mul_(2)
    np.testing.assert_array_equal(arr, np.arange(12).reshape(3, 4) * 2)
    back = t.numpy()
    back[0, 0] = -1
    assert arr[0, 0] == -1
    tv = tt.from_numpy(arr[:, ::2])
    assert tv.stride() == (4, 2)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int64", "int32", "uint8", "bool"])
def test_tensor_numpy_dtypes(dtype):
    arr = (np.arange(6) % 2 if dtype == "bool" else np.arange(6)).astype(dtype)
    t = tt.tensor(arr)
    assert t.dtype.name == dtype
    np.testing.assert_array_equal(t.numpy(), arr)
    assert t.tolist() == arr.tolist()


def test_bfloat16_conversion_rounds_to_nearest_even():
    t = tt.tensor([1.0, 1.00390625, 1.01171875, 3.14159, -2.5e-3], dtype=tt.bfloat16)
    got = to_numpy(t)
    np.testing.assert_array_equal(got[:3], [1.0, 1.0, 1.015625])
    assert abs(got[3] - 3.140625) < 1e-9
    with pytest.raises(TypeError, match="BFloat16|bfloat16"):
        t.numpy()


def test_half_special_values():
    vals = np.array([0.0, -0.0, 65504.0, 1e5, 6e-8, np.inf, -np.inf, np.nan], dtype=np.float32)
    got = tt.tensor(vals).half().numpy()
    np.testing.assert_array_equal(got, vals.astype(np.float16))


def test_item_tolist_repr():
    assert tt.tensor(3.5).item() == 3.5
    assert tt.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert repr(tt.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert "requires_grad=True" in repr(tt.ones(2, requires_grad=True))
    assert "dtype=tinytorch.float16" in repr(tt.ones(2, dtype=tt.float16))


# ---------------------------------------------------------------- bad input

def test_bad_broadcast_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add.*\[2, 3\].*\[4\]|\(3\).*\(4\)"):
        tt.ones(2, 3) + tt.ones(4)


def test_item_on_many_elements():
    with pytest.raises((ValueError, RuntimeError), match="2 elements"):
        tt.ones(2).item()


def test_dim_out_of_range():
    with pytest.raises(IndexError, match="Dimension out of range"):
        tt.ones(2, 3).transpose(0, 5)


def test_select_index_out_of_range():
    with pytest.raises(IndexError, match="out of bounds"):
        tt.ones(2, 3).select(1, 3)


def test_view_not_expressible():
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        tt.ones(4, 6).t().view(24)


def test_invalid_view_size():
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        tt.ones(2, 3).view(4, 2)


def test_unsupported_dtype_for_op():
    with pytest.raises(TypeError, match="bool"):
        tt.ones(3, dtype=tt.bool).neg()


def test_expand_bad_size():
    with pytest.raises(RuntimeError, match="expanded size"):
        tt.ones(2, 3).expand(4, 3)


def test_in_place_result_type_cannot_cast():
    with pytest.raises(RuntimeError, match="can't be cast"):
        tt.ones(3, dtype=tt.int64).add_(1.5)


def test_negative_numpy_strides_rejected():
    with pytest.raises(ValueError, match="negative"):
        tt.from_numpy(np.arange(4.0)[::-1])


def test_unknown_device_string():
    with pytest.raises(RuntimeError, match="device"):
        tt.ones(2, device="tpu")


def test_backend_switches_have_pytorchs_defaults():
    # A fresh interpreter: the suite's conftest turns TF32 convolutions off on GPU machines.
    import subprocess
    import sys
    code = ("import tinytorch as tt; b = tt.backends; "
            "print(b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32, isinstance(b.cudnn.is_available(), bool)); "
            "b.cudnn.benchmark = True; b.cudnn.deterministic = True; b.cudnn.allow_tf32 = False; "
            "print(b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32)")
    import os
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tt.__file__)))   # this tinytorch
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout.split()
    assert out == ["False", "True", "True", "True", "True", "False"], out


def test_deepcopy_of_leaves_and_state_dicts():
    import copy
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    x.grad = tt.tensor([0.5, 0.5])
    box = copy.deepcopy({"a": x, "b": x, "n": 3})
    c = box["a"]
    assert box["b"] is c and c.requires_grad and c.grad_fn is None
    assert c.data_ptr() != x.data_ptr() and c.grad.data_ptr() != x.grad.data_ptr()
    np.testing.assert_array_equal(c.detach().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(c.grad.numpy(), [0.5, 0.5])
    c.detach().mul_(3.0)                               # independent storage
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0])
    m = tt.nn.Linear(3, 2)
    sd = copy.deepcopy(m.state_dict())                 # best-model snapshots, as in PyTorch scripts
    with tt.no_grad():
        m.weight.add_(1.0)
    np.testing.assert_allclose((m.weight.detach() - sd["weight"]).numpy(), 1.0, rtol=1e-6)   # sd kept the old values
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2)
    import pickle                                      # tensors pickle now (tests/serialization/test_pickle.py)
    assert pickle.loads(pickle.dumps(x)).requires_grad
