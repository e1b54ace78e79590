"""tinytorch.save / tinytorch.load of numpy arrays: they come back as numpy arrays (same dtype,
shape, values, byte order), alone and inside containers, as with torch.save / torch.load; modules
and optimizers are refused with the way to save them (their state_dict())."""
from __future__ import annotations

import io
import json
import struct

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import nn

# every numpy dtype a saved array may have: the tensor dtypes and the numpy-only ones
NP_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
             "uint64", "bool", "complex64"]


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    tt.save(obj, buf, **kw)
    buf.seek(0)
    return tt.load(buf)


def sample(dtype: str, shape=(3, 4)) -> np.ndarray:
    rng = np.random.default_rng(1)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        a.flat[0], a.flat[1] = info.min, info.max   # the extremes survive
        return a
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    a.flat[0], a.flat[1], a.flat[2] = np.inf, -np.inf, np.nan
    return a


def assert_same_array(back, a: np.ndarray) -> None:
    assert type(back) is np.ndarray, type(back)
    assert back.dtype == a.dtype and back.shape == a.shape
    assert back.tobytes() == a.tobytes()   # exact bits (NaN, signed zero), in the array's byte order
    assert back.flags.writeable


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_array_roundtrips_as_array(dtype):
    a = sample(dtype)
    assert_same_array(roundtrip(a), a)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,), (2, 3, 4)])
def test_shapes(shape):
    a = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * 0.5 - 1)  # 0-d: an array
    assert_same_array(roundtrip(a), a)


def test_non_contiguous_and_big_endian_arrays():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    view = base[::2, 1::3].T          # strided, transposed
    back = roundtrip(view)
    assert back.shape == (2, 2) and back.dtype == np.float64
    np.testing.assert_array_equal(back, [[1.0, 13.0], [4.0, 16.0]])
    for dt in (">f4", ">i8", ">u2"):
        a = np.arange(6).astype(dt).reshape(2, 3)
        back = roundtrip(a)
        assert back.dtype == np.dtype(dt) and back.dtype.byteorder == ">"
        np.testing.assert_array_equal(back, [[0, 1, 2], [3, 4, 5]])


def test_nested_containers_keep_arrays_and_tensors_apart():
    w = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=np.float32)
    idx = np.array([3, 1, 2], dtype=np.int16)
    t = tt.tensor([1.0, 2.0, 3.0])
    obj = {"stats": {"mean": w, "idx": idx}, "list": [w, t, (idx, 7)], "t": t, "epoch": 3}
    back = roundtrip(obj)
    assert_same_array(back["stats"]["mean"], w)
    assert_same_array(back["stats"]["idx"], idx)
    assert_same_array(back["list"][0], w)
    assert_same_array(back["list"][2][0], idx)
    assert isinstance(back["list"][2], tuple) and back["list"][2][1] == 7
    for x in (back["t"], back["list"][1]):
        assert isinstance(x, tt.Tensor) and x.dtype is tt.float32
        np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    assert back["epoch"] == 3


def test_loaded_array_is_independent_of_the_saved_one(tmp_path):
    a = np.array([1.0, 2.0, 3.0])
    tt.save({"a": a}, tmp_path / "a.st")
    a[0] = 99.0
    back = tt.load(tmp_path / "a.st")["a"]
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, [1.0, 2.0, 3.0])
    back[1] = -1.0                    # writable, owns its data
    np.testing.assert_array_equal(tt.load(tmp_path / "a.st")["a"], [1.0, 2.0, 3.0])


def test_map_location_leaves_arrays_alone(tmp_path):
    tt.save({"a": np.arange(3, dtype=np.int64), "t": tt.ones(2)}, tmp_path / "m.st")
    seen = []

    def fn(t, loc):
        seen.append(loc)
        return t * 2
    back = tt.load(tmp_path / "m.st", map_location=fn)
    np.testing.assert_array_equal(back["a"], [0, 1, 2])
    np.testing.assert_array_equal(back["t"].numpy(), [2.0, 2.0])
    assert seen == ["cpu"]


def test_file_header_names_the_numpy_dtype(tmp_path):
    tt.save({"a": np.zeros((2, 3), dtype=np.uint16)}, tmp_path / "h.st")
    raw = open(tmp_path / "h.st", "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    head = json.loads(raw[8:8 + n])
    assert head["a"]["dtype"] == "U16" and head["a"]["shape"] == [2, 3]
    assert head["a"]["data_offsets"][1] - head["a"]["data_offsets"][0] == 12


def test_digest_covers_arrays(tmp_path):
    a = np.arange(4, dtype=np.int8)
    tt.save({"a": a}, tmp_path / "d.st", digest=True)
    assert_same_array(tt.load(tmp_path / "d.st", digest="require")["a"], a)
    raw = bytearray(open(tmp_path / "d.st", "rb").read())
    raw[-1] ^= 1
    open(tmp_path / "d.st", "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match="digest"):
        tt.load(tmp_path / "d.st")


def test_plain_safetensors_file_of_complex64_loads_as_a_tensor(tmp_path):
    # a file without tinytorch's structure loads as {name: tensor}
    hdr = json.dumps({"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}).encode()
    (tmp_path / "p.st").write_bytes(struct.pack("<Q", len(hdr)) + hdr + struct.pack("<ff", 1.5, -2.0))
    a = tt.load(tmp_path / "p.st")["a"]
    assert a.dtype is tt.complex64 and a.tolist() == [1.5 - 2j]


def test_complex_tensors_save_and_load(tmp_path):
    z = tt.tensor([[1 + 2j, -0.5j]])
    tt.save({"z": z, "t": z.t()}, tmp_path / "c.st")
    back = tt.load(tmp_path / "c.st")
    assert back["z"].dtype is tt.complex64 and back["z"].tolist() == z.tolist() and back["t"].tolist() == z.t().tolist()
    with pytest.raises(TypeError, match="can't save a complex128 tensor.*view_as_real"):
        tt.save({"z": z.to(tt.complex128)}, tmp_path / "d.st")


@pytest.mark.parametrize("arr", [np.array(["a", "b"]), np.zeros(2, dtype=object), np.zeros(2, dtype=complex),
                                 np.zeros(2, dtype=[("x", "f4")])], ids=["str", "object", "complex128", "struct"])
def test_unsupported_array_dtypes_are_refused(arr):
    with pytest.raises(TypeError, match=f"numpy array of dtype .* at 'x'.*supported dtypes are"):
        tt.save({"x": arr}, io.BytesIO())


@pytest.mark.parametrize("fmt", ["safetensors", "torch"])
def test_module_and_optimizer_are_refused_naming_state_dict(fmt):
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"type Linear at '<root>'.*save their state_dict\(\) instead: "
                                        r"tinytorch\.save\(model\.state_dict\(\), f\)"):
        tt.save(model, io.BytesIO(), format=fmt)
    with pytest.raises(TypeError, match=r"type Sequential at 'ckpt\.model'.*state_dict\(\)"):
        tt.save({"ckpt": {"model": nn.Sequential(model)}}, io.BytesIO(), format=fmt)
    opt = tt.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match=r"type SGD .*state_dict\(\)"):
        tt.save(opt, io.BytesIO(), format=fmt)
    # what the message says to do works
    buf = io.BytesIO()
    tt.save(model.state_dict(), buf, format=fmt)
    buf.seek(0)
    other = nn.Linear(2, 2)
    other.load_state_dict(tt.load(buf))
    np.testing.assert_array_equal(other.weight.detach().numpy(), model.weight.detach().numpy())
