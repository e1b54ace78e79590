"""float8_e4m3fn and float8_e5m2 as storage types, as PyTorch's: casts to and from every dtype
(round to nearest even; e4m3fn saturates at 448, e5m2 overflows to infinity), copies, fills,
indexing, shape ops and safetensors; arithmetic raises NotImplementedError. Every conversion is
checked against PyTorch's own (tests/fixtures/float8_table.json, made by make_float8_table.py)."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import tinytorch as tt

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
TABLE = json.load(open(os.path.join(FIXTURES, "float8_table.json")))
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
NAMES = ["float8_e4m3fn", "float8_e5m2"]


def _floats(values):
    return np.array([math.nan if v is None else float(v) for v in values], np.float32)


def _bytes(t):
    """A float8 tensor's bytes (a uint8 view of it)."""
    return t.cpu().contiguous().view(tt.uint8).numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_casts_match_torch(name, device):
    dtype = getattr(tt, name)
    every = tt.arange(256, dtype=tt.int64).to(tt.uint8).to(device).view(dtype)
    np.testing.assert_array_equal(every.float().cpu().numpy(), _floats(TABLE[name]["values"]))
    x = tt.tensor(_floats(TABLE["inputs"]), device=device)
    np.testing.assert_array_equal(_bytes(x.to(dtype)), np.array(TABLE[name]["bytes"], np.uint8))
    # through the other dtypes: float64, float16, bfloat16 inputs round once, as from float32
    for src in (tt.float64, tt.float16, tt.bfloat16, tt.int32, tt.int8):
        y = x.nan_to_num(0.0, 4.0e4, -4.0e4).clamp(-100, 100).to(src)
        np.testing.assert_array_equal(_bytes(y.to(dtype)), _bytes(y.float().to(dtype)), err_msg=str(src))
    z = every.to(tt.float16).to(dtype)       # every float8 value is a float16 value: exact round trip
    finite = ~every.float().isnan()
    np.testing.assert_array_equal(_bytes(z)[finite.cpu().numpy()], np.arange(256, dtype=np.uint8)[finite.cpu().numpy()])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_storage_but_no_arithmetic(name, device):
    dtype = getattr(tt, name)
    x = tt.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -448.0]], device=device).to(dtype)
    assert x.dtype is dtype and dtype.is_floating_point and dtype.itemsize == 1
    np.testing.assert_array_equal(tt.cat([x, x]).float().cpu().numpy(), np.tile(x.float().cpu().numpy(), (2, 1)))
    np.testing.assert_array_equal(x.t().contiguous().float().cpu().numpy(), x.float().cpu().numpy().T)
    np.testing.assert_array_equal(x[:, tt.tensor([2, 0], device=device)].float().cpu().numpy(),
                                  x.float().cpu().numpy()[:, [2, 0]])
    assert x[1, 1].item() == 0.25 and x.tolist()[0] == [1.0, -2.0, 0.5]
    assert tt.full((2,), 3.0, dtype=dtype, device=device).float().tolist() == [3.0, 3.0]
    assert repr(tt.tensor([1.0, 2.0]).to(dtype)) == f"tensor([1., 2.], dtype=tinytorch.{name})"
    with pytest.raises(NotImplementedError, match=f"not implemented for {name}.*storage types"):
        x + x
    with pytest.raises(NotImplementedError, match=f"not implemented for {name}"):
        x * 2.0
    with pytest.raises(NotImplementedError, match=f"not implemented for {name}"):
        x.exp()
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        x + tt.ones(3, device=device)
    with pytest.raises(TypeError, match="Got unsupported ScalarType Float8"):
        np.asarray(x.cpu())


@pytest.mark.parametrize("name", NAMES)
def test_finfo_and_files(name, tmp_path):
    dtype = getattr(tt, name)
    f = tt.finfo(dtype)
    assert (f.bits, f.max, f.eps, f.tiny) == {"float8_e4m3fn": (8, 448.0, 0.125, 2.0 ** -6),
                                              "float8_e5m2": (8, 57344.0, 0.25, 2.0 ** -14)}[name]
    every = tt.arange(256, dtype=tt.int64).to(tt.uint8).view(dtype)
    tt.save({"x": every}, tmp_path / "x.st")
    back = tt.load(tmp_path / "x.st")["x"]
    assert back.dtype is dtype
    np.testing.assert_array_equal(_bytes(back), np.arange(256, dtype=np.uint8))
    with pytest.raises(TypeError, match=f"can't save a {name} tensor"):
        tt.save({"x": every}, tmp_path / "x.pt", format="torch")


def test_a_torch_checkpoint_of_storage_dtypes_loads():
    d = tt.load(os.path.join(FIXTURES, "torch_checkpoints", "storage_dtypes.pt"))
    assert {k: v.dtype for k, v in d.items()} == {"i16": tt.int16, "u32": tt.uint32, "e4m3": tt.float8_e4m3fn,
                                                  "e5m2": tt.float8_e5m2}
    assert d["i16"].tolist() == [-3, 5] and d["u32"].tolist() == [1, 70000]
    assert d["e4m3"].float().tolist() == [1.0, -2.5, 448.0, 0.001953125]
    assert d["e5m2"].float().tolist() == [3.0, 57344.0]
