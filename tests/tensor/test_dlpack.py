"""DLPack both ways (zero-copy, every dtype, strided views, capsule lifetime and misuse) and
load_state_dict from foreign tensors. torch checks run in a torch interpreter where one exists."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.utils.dlpack import from_dlpack, to_dlpack

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__)))  # the tinytorch under test


def _torch_python():
    for exe in (os.environ.get("TINYTORCH_TORCH_PYTHON"), "/tmp/tv/bin/python"):
        if exe and os.path.exists(exe):
            return exe
    return None


def _array(dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 50).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "offset"])
def test_numpy_to_tinytorch_zero_copy(dtype, layout):
    base = _array(dtype, (4, 6))
    a = {"contiguous": base, "transposed": base.T, "sliced": base[:, ::2], "offset": base[1:, 2:]}[layout]
    t = tt.from_dlpack(a)
    assert t.dtype.name == dtype and tuple(t.shape) == a.shape
    assert t.stride() == tuple(s // a.itemsize for s in a.strides)
    np.testing.assert_array_equal(t.numpy(), a)
    t[0, 0] = 1  # shared memory, both directions
    assert a[0, 0] == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_tinytorch_to_numpy_zero_copy(dtype):
    t = tt.from_numpy(_array(dtype, (5, 4))).t()[1:]  # a strided view with an offset
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == tuple(t.shape)
    np.testing.assert_array_equal(a, t.numpy())
    assert a.ctypes.data == t.data_ptr()
    a[0, 0] = 0
    assert t[0, 0].item() == 0


def test_capsule_keeps_storage_alive_and_bfloat16_roundtrip():
    t = tt.tensor([1.5, -2.0, 3.25]).bfloat16()
    ref = weakref.ref(t)
    cap = t.__dlpack__()
    del t
    gc.collect()
    assert ref() is None  # the tensor object is gone; its storage lives in the capsule
    back = tt.from_dlpack(cap)
    assert back.dtype is tt.bfloat16
    np.testing.assert_array_equal(back.float().numpy(), [1.5, -2.0, 3.25])
    # a capsule never consumed frees its storage with the capsule (no leak, no crash)
    for _ in range(3):
        tt.ones(1000).__dlpack__()
    gc.collect()


def test_versioned_capsule_and_protocol_arguments():
    t = tt.arange(6.0)
    assert t.__dlpack_device__() == (1, 0)
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    assert tt.from_dlpack(cap).data_ptr() == t.data_ptr()
    assert "dltensor" in repr(to_dlpack(t))
    copied = tt.from_dlpack(t.__dlpack__(copy=True))
    assert copied.data_ptr() != t.data_ptr() and copied.tolist() == t.tolist()
    with pytest.raises(TypeError, match="stream must be"):
        t.__dlpack__(stream="0")
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


def test_capsule_consumed_twice_and_bad_inputs_fail_clearly():
    cap = tt.ones(3).__dlpack__()
    tt.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="already consumed"):
        tt.from_dlpack(cap)
    cap = tt.ones(3).__dlpack__(max_version=(1, 0))
    from_dlpack(cap)
    with pytest.raises(RuntimeError, match="already consumed"):
        from_dlpack(cap)
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        tt.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="expected an object with __dlpack__"):
        tt.from_dlpack([1, 2])
    for dtype in (np.complex64, np.complex128):     # complex tensors travel both ways
        z = tt.from_dlpack(np.array([1 + 2j, -3j], dtype))
        assert z.dtype.name == np.dtype(dtype).name and z.tolist() == [1 + 2j, -3j]
        np.testing.assert_array_equal(np.from_dlpack(z), [1 + 2j, -3j])
    with pytest.raises(TypeError, match="read-only"):
        tt.from_dlpack(np.frombuffer(b"\x00" * 8, np.float32))
    # a refused capsule stays usable by its producer
    a = np.frombuffer(np.ones(3, np.float32).tobytes(), np.float32)
    cap = a.__dlpack__(max_version=(1, 0))
    with pytest.raises(TypeError):
        tt.from_dlpack(cap)
    del cap
    gc.collect()
    assert a.sum() == 3


def test_load_state_dict_takes_numpy_and_array_likes():
    m = nn.Linear(3, 2)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.array([0.5, -0.5], np.float32)
    m.load_state_dict({"weight": w, "bias": ArrayLike()})
    np.testing.assert_array_equal(m.weight.detach().numpy(), w)
    np.testing.assert_array_equal(m.bias.detach().numpy(), [0.5, -0.5])
    with pytest.raises(TypeError, match="load_state_dict: 'bias': expected a tensor"):
        m.load_state_dict({"weight": w, "bias": "nope"})


def _run_torch(script: str) -> str:
    exe = _torch_python()
    if exe is None:
        pytest.skip("no torch interpreter")
    res = subprocess.run([exe, "-c", f"import sys; sys.path.insert(0, {ROOT!r})\n" + script],
                         capture_output=True, text=True, cwd=ROOT)
    if "No module named 'tinytorch" in res.stderr or "undefined symbol" in res.stderr:
        pytest.skip("the torch interpreter can't import this tinytorch build")
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_torch_dlpack_both_ways_zero_copy():
    out = _run_torch("""
import torch, tinytorch as tt, numpy as np
for dt in [torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
           torch.float64]:
    a = (torch.arange(24).reshape(4, 6) % 5).to(dt).t()[1:]
    x = tt.from_dlpack(a)
    assert x.data_ptr() == a.data_ptr() and x.stride() == a.stride() and str(x.dtype)[10:] == str(a.dtype)[6:]
    assert x.float().tolist() == a.float().tolist()
    b = torch.from_dlpack(x)
    assert b.data_ptr() == x.data_ptr() and b.stride() == x.stride() and b.dtype == a.dtype
    y = tt.arange(12.0).reshape(3, 4)[:, 1:].to(getattr(tt, str(dt)[6:]))
    c = torch.from_dlpack(y)
    assert c.data_ptr() == y.data_ptr() and c.float().tolist() == y.float().tolist()
t = torch.zeros(3)
x = tt.from_dlpack(t); x[1] = 7
assert t[1].item() == 7
m = tt.nn.Linear(3, 2)
lin = torch.nn.Linear(3, 2)
m.load_state_dict(lin.state_dict())  # torch tensors, Parameters that require grad included
m.load_state_dict({k: v for k, v in lin.named_parameters()})
assert np.array_equal(m.weight.detach().numpy(), lin.weight.detach().numpy())
print("ok")
""")
    assert out.strip() == "ok"
