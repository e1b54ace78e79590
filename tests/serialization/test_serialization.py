"""tinytorch.save / tinytorch.load: safetensors layout, exact round trips, corrupted files."""
from __future__ import annotations

import collections
import io
import json
import math
import struct

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.serialization import load, save

ALL_DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool"]


def bits(t):
    """The tensor's exact element bits as a numpy array (bfloat16 as uint16)."""
    from tinytorch._tensor.raw_bits import to_bits
    return to_bits(t)


def sample(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return tt.from_numpy(rng.integers(0, 2, shape).astype(bool))
    if dtype in ("uint8", "int32", "int64"):
        return tt.from_numpy(rng.integers(0, 200, shape).astype(dtype))
    vals = rng.standard_normal(shape) * 100
    vals.flat[0], vals.flat[1], vals.flat[2] = np.inf, -np.inf, np.nan
    return tt.tensor(vals, dtype=getattr(tt, dtype))


def header(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw, n


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_every_dtype_bit_exact(tmp_path, dtype):
    t = sample(dtype)
    p = tmp_path / "t.tt"
    save(t, p)
    u = load(p)
    assert u.dtype is t.dtype and tuple(u.shape) == tuple(t.shape)
    np.testing.assert_array_equal(bits(u), bits(t))
    h, raw, n = header(p)
    st = {"float32": "F32", "float16": "F16", "bfloat16": "BF16", "float64": "F64", "int64": "I64",
          "int32": "I32", "uint8": "U8", "bool": "BOOL"}[dtype]
    (name,) = [k for k in h if k != "__metadata__"]
    assert h[name]["dtype"] == st and h[name]["shape"] == [3, 4]
    b, e = h[name]["data_offsets"]
    assert raw[8 + n + b:8 + n + e] == bits(t).astype(bits(t).dtype.newbyteorder("<")).tobytes()


def test_bfloat16_nan_payload_and_scalars(tmp_path):
    from tinytorch._tensor.raw_bits import from_bits
    odd = from_bits(np.array([0x7FC1, 0xFF81, 0x0001, 0x8000], np.uint16), tt.bfloat16)
    for t in (odd, tt.tensor(3.5), tt.tensor(7), tt.zeros(0, 3)):
        buf = io.BytesIO()
        save(t, buf)
        buf.seek(0)
        u = load(buf)
        assert u.dtype is t.dtype and tuple(u.shape) == tuple(t.shape)
        np.testing.assert_array_equal(bits(u), bits(t))


def test_non_contiguous_saved_contiguous(tmp_path):
    base = tt.arange(12, dtype=tt.float32).view(3, 4)
    for t in (base.transpose(0, 1), base.narrow(1, 1, 2), base.bfloat16().transpose(0, 1)):
        save({"x": t}, tmp_path / "nc")
        u = load(tmp_path / "nc")["x"]
        assert u.float().tolist() == t.float().tolist()


def test_full_checkpoint_nested_structure(tmp_path):
    model = collections.OrderedDict([("fc.weight", sample("float32")), ("fc.bias", sample("bfloat16", (4,)))])
    ckpt = {
        "model": model,
        "optimizer": {"state": {0: {"step": 3, "exp_avg": sample("float32")}, 1: {"momentum_buffer": None}},
                      "param_groups": [{"lr": 0.01, "betas": (0.9, 0.999), "params": [0, 1], "nesterov": False,
                                        "weight_decay": 0.0, "eps": 1e-8}]},
        "scheduler": {"last_epoch": 4, "best": math.inf, "worse": -math.inf, "nan": math.nan,
                      "milestones": {30: 1, 80: 2}, "_last_lr": [0.01]},
        "epoch": 7, "name": "run $1", "big": 2**70, "tuple": (1, "a", (None, True)), "list": [sample("int64")],
        "tensor_in_tuple": (sample("uint8"),),
    }
    p = tmp_path / "ckpt.tt"
    save(ckpt, p)
    out = load(p, map_location="cpu", weights_only=True)
    assert isinstance(out["model"], collections.OrderedDict) and list(out["model"]) == ["fc.weight", "fc.bias"]
    for k in model:
        np.testing.assert_array_equal(bits(out["model"][k]), bits(model[k]))
    st = out["optimizer"]["state"]
    assert set(st) == {0, 1} and st[0]["step"] == 3 and st[1] == {"momentum_buffer": None}
    pg = out["optimizer"]["param_groups"][0]
    assert pg["betas"] == (0.9, 0.999) and pg["params"] == [0, 1] and pg["nesterov"] is False and pg["eps"] == 1e-8
    sc = out["scheduler"]
    assert sc["best"] == math.inf and sc["worse"] == -math.inf and math.isnan(sc["nan"])
    assert sc["milestones"] == {30: 1, 80: 2}
    assert out["epoch"] == 7 and out["name"] == "run $1" and out["big"] == 2**70
    assert out["tuple"] == (1, "a", (None, True))
    assert out["list"][0].tolist() == ckpt["list"][0].tolist()
    assert isinstance(out["tensor_in_tuple"], tuple) and out["tensor_in_tuple"][0].dtype is tt.uint8
    h, _, _ = header(p)
    assert "model.fc.weight" in h and "optimizer.state.0.exp_avg" in h  # readable names for other tools
    assert h["__metadata__"]["format"] == "tinytorch"


def test_requires_grad_sharing_and_name_collisions(tmp_path):
    w = sample("float32").requires_grad_(True)
    shared = {"a.b": w, "a": {"b": w}}  # two paths that join to the same name; the same tensor twice
    save(shared, tmp_path / "s")
    out = load(tmp_path / "s")
    assert out["a.b"].requires_grad and out["a"]["b"].requires_grad
    np.testing.assert_array_equal(bits(out["a.b"]), bits(w))
    np.testing.assert_array_equal(bits(out["a"]["b"]), bits(w))


def test_map_location_forms(tmp_path):
    save({"x": sample("float32")}, tmp_path / "m")
    seen = []

    def fn(t, loc):
        seen.append(loc)
        return t * 2
    np.testing.assert_array_equal(load(tmp_path / "m", map_location=fn)["x"].numpy(), sample("float32").numpy() * 2)
    assert seen == ["cpu"]
    assert load(tmp_path / "m", map_location={"cuda:0": "cpu"})["x"].dtype is tt.float32
    assert load(tmp_path / "m", map_location=tt.device("cpu"))["x"].dtype is tt.float32


def test_plain_safetensors_file_loads_as_flat_dict(tmp_path):
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    hdr = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}).encode()
    (tmp_path / "plain.safetensors").write_bytes(struct.pack("<Q", len(hdr)) + hdr + a.tobytes())
    out = load(tmp_path / "plain.safetensors")
    assert list(out) == ["w"] and out["w"].tolist() == a.tolist()


def test_unsupported_objects_rejected(tmp_path):
    with pytest.raises(TypeError, match="object.*'x'"):   # sets are saved now (test_torch_checkpoint.py)
        save({"x": object()}, tmp_path / "bad")


def corrupt_cases(raw, n, h):
    name = [k for k in h if k != "__metadata__"][0]

    def with_header(mod):
        h2 = json.loads(json.dumps(h))
        mod(h2)
        b = json.dumps(h2).encode()
        return struct.pack("<Q", len(b)) + b + raw[8 + n:]

    return {
        "empty": (b"", "truncated"),
        "short": (raw[:5], "truncated"),
        "huge header length": (struct.pack("<Q", 1 << 40) + raw[8:], "header length"),
        "header past end": (struct.pack("<Q", len(raw)) + raw[8:], "header length"),
        "bad json": (raw[:8] + b"{" * n + raw[8 + n:], "JSON"),
        "truncated data": (raw[:-3], "past the end"),
        "unknown dtype": (with_header(lambda d: d[name].update(dtype="F8_E8M0")), "unsupported dtype"),
        "shape mismatch": (with_header(lambda d: d[name].update(shape=[5, 5])), "expected"),
        "bad offsets": (with_header(lambda d: d[name].update(data_offsets=[8, 4])), "data_offsets"),
        "missing tensor": (with_header(lambda d: d.pop(name)), "not in the file"),
        "bad metadata": (with_header(lambda d: d["__metadata__"].update({"tinytorch.structure": "{"})), "JSON"),
        "not an object": (struct.pack("<Q", 2) + b"[]", "not an object"),
    }


def test_corrupted_files_raise_clear_errors(tmp_path):
    p = tmp_path / "good.tt"
    save({"w": sample("float32"), "e": 1}, p)
    h, raw, n = header(p)
    for what, (data, msg) in corrupt_cases(raw, n, h).items():
        q = tmp_path / "bad.tt"
        q.write_bytes(data)
        with pytest.raises(RuntimeError) as ei:
            load(q)
        assert "bad.tt" in str(ei.value) and msg in str(ei.value), (what, str(ei.value))


def test_exported_at_top_level():
    if not hasattr(tt, "save"):
        pytest.skip("tinytorch.save not exported yet")
    assert tt.save is save and tt.load is load
