"""PyTorch checkpoints: tinytorch.load reads torch.save's zip and legacy formats through the
allow-list unpickler (tests/fixtures/torch_checkpoints/, written by make_checkpoints.py with torch),
refuses pickles that would run code (with nothing run), and tinytorch.save(format="torch") writes
files torch.load(weights_only=True) accepts (checked with a torch interpreter where one exists)."""
from __future__ import annotations

import collections
import importlib.util
import io
import os
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.serialization import _torch_unpickler

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "fixtures", "torch_checkpoints")
_spec = importlib.util.spec_from_file_location("make_checkpoints", os.path.join(DATA, "make_checkpoints.py"))
make_checkpoints = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_checkpoints)
EXPECTED = make_checkpoints.expected_arrays()


def _torch_python():
    """An interpreter with torch (TINYTORCH_TORCH_PYTHON, or the reference venv), or None."""
    for exe in (os.environ.get("TINYTORCH_TORCH_PYTHON"), "/tmp/tv/bin/python"):
        if exe and os.path.exists(exe):
            return exe
    try:
        import torch  # noqa: F401
        return sys.executable
    except ImportError:
        return None


def _np(t: tt.Tensor) -> np.ndarray:
    return t.detach().float().numpy() if t.dtype is tt.bfloat16 else t.detach().numpy()


def _shares(a: tt.Tensor, b: tt.Tensor) -> bool:
    return a._impl.storage_ptr == b._impl.storage_ptr


@pytest.mark.parametrize("name", ["zip_format.pt", "legacy_format.pt"])
def test_reads_torch_checkpoint_values_dtypes_and_structure(name):
    obj = tt.load(os.path.join(DATA, name))
    m, e = obj["model"], EXPECTED
    np.testing.assert_array_equal(_np(m["w"]), e["w"])
    np.testing.assert_array_equal(_np(m["wt"]), e["w"].T)
    np.testing.assert_array_equal(_np(m["sl"]), e["w"][1:3, ::2])
    np.testing.assert_array_equal(_np(m["row"]), e["w"][2])
    for k in ("h", "d", "i", "i32", "u8", "b", "s"):
        assert m[k].dtype.name == e[k].dtype.name.replace("bool", "bool"), k
        np.testing.assert_array_equal(_np(m[k]), e[k], err_msg=k)
    assert m["bf"].dtype is tt.bfloat16
    np.testing.assert_array_equal(_np(m["bf"]), e["bf"])
    assert m["e"].shape == (0, 3)
    assert m["rg"].requires_grad and m["rg"].is_leaf and not m["w"].requires_grad
    assert isinstance(m["p"], nn.Parameter) and m["p"].requires_grad
    np.testing.assert_array_equal(_np(m["p"]), e["p"])
    # geometry and storage sharing as PyTorch saved it
    assert m["wt"].stride() == (1, 6) and m["sl"].stride() == (6, 2) and m["sl"].storage_offset() == 6
    assert _shares(m["w"], m["wt"]) and _shares(m["w"], m["sl"]) and _shares(m["w"], m["row"])
    m["w"][2, 0] = 100.0
    assert m["row"][0].item() == 100.0 and m["wt"][0, 2].item() == 100.0
    # a module state dict keeps its type and _metadata; the rest of the structure is plain Python
    assert type(obj["state"]) is collections.OrderedDict and list(obj["state"]) == ["fc.weight", "fc.bias"]
    assert obj["state"]._metadata["fc"] == {"version": 1}
    np.testing.assert_array_equal(_np(obj["state"]["fc.weight"]), e["lin_w"])
    assert obj["optimizer"]["param_groups"] == [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0]}]
    assert obj["optimizer"]["state"][0]["step"].item() == 3.0
    assert (obj["epoch"], obj["name"], obj["big"], obj["neg"], obj["none"], obj["flag"]) == \
        (7, "ckpt", 2 ** 70, -5, None, True)
    assert obj["tup"] == (1, 2.5) and obj["blob"] == b"\x00\xffab" and obj["cplx"] == 1 + 2j
    assert obj["set"] == {1, 2} and obj["dtype"] is tt.float16
    assert tuple(obj["size"]) == (2, 3) and str(obj["device"]) == "cpu"


def test_load_state_dict_from_torch_checkpoint():
    state = tt.load(os.path.join(DATA, "zip_format.pt"))["state"]
    model = nn.ModuleDict({"fc": nn.Linear(3, 2)})
    model.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    ref = x.astype(np.float64) @ EXPECTED["lin_w"].T.astype(np.float64) + EXPECTED["lin_b"]
    np.testing.assert_allclose(model["fc"](tt.tensor(x)).detach().numpy(), ref, rtol=1e-5, atol=1e-6)


def test_map_location_moves_each_storage_once_and_keeps_views():
    seen = []

    def fn(storage, location):
        seen.append((tuple(storage.shape), location))
        return storage.clone()

    obj = tt.load(os.path.join(DATA, "zip_format.pt"), map_location=fn)
    m = obj["model"]
    with zipfile.ZipFile(os.path.join(DATA, "zip_format.pt")) as z:
        records = [n for n in z.namelist() if "/data/" in n]
    assert len(seen) == len(records) and all(loc == "cpu" for _, loc in seen)  # once per storage
    assert _shares(m["w"], m["wt"]) and m["wt"].stride() == (1, 6)
    assert isinstance(m["p"], nn.Parameter) and m["rg"].requires_grad
    np.testing.assert_array_equal(_np(m["sl"]), EXPECTED["w"][1:3, ::2])
    assert tt.load(os.path.join(DATA, "zip_format.pt"), map_location="cpu")["epoch"] == 7


def _rewrite_zip(src: str, dst, edit) -> None:
    """Copies a zip checkpoint member by member, ``edit(name, data) -> data or None (drop)``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info))
            if data is not None:
                zout.writestr(info.filename, data)


def test_big_endian_checkpoint_is_byteswapped(tmp_path):
    """A file saved on a big-endian machine: byteorder 'big', every storage's elements swapped."""
    src = os.path.join(DATA, "zip_format.pt")
    with zipfile.ZipFile(src) as z:
        pkl = z.read("zip_format/data.pkl")
    loaded = tt.load(src)
    itemsize = {}  # storage key -> element size, from the little-endian load

    class Probe(_torch_unpickler.RestrictedUnpickler):
        pass
    probe = Probe(io.BytesIO(pkl), lambda k, dt, n, loc: itemsize.setdefault(k, dt.itemsize) and tt.empty(n, dtype=dt),
                  "probe")
    probe.load()

    def edit(name, data):
        if name.endswith("/byteorder"):
            return b"big"
        key = name.rsplit("/", 1)[-1]
        if "/data/" in name and itemsize.get(key, 1) > 1:
            return np.frombuffer(data, np.dtype(f"u{itemsize[key]}")).byteswap().tobytes()
        return data
    dst = tmp_path / "big.pt"
    _rewrite_zip(src, dst, edit)
    big = tt.load(dst)
    for k in ("w", "h", "d", "i", "i32", "bf", "u8", "b", "s"):
        np.testing.assert_array_equal(_np(big["model"][k]), _np(loaded["model"][k]), err_msg=k)


@pytest.mark.parametrize("case, match", [
    ("truncated", "truncated or corrupted"),
    ("missing_record", "storage record .* is missing"),
    ("short_record", "holds 8 bytes; its tensor needs"),
    ("no_data_pkl", "not a PyTorch checkpoint"),
    ("truncated_pickle", "malformed or truncated pickle data"),
    ("bad_byteorder", "byteorder record"),
])
def test_corrupt_checkpoints_fail_clearly(tmp_path, case, match):
    src = os.path.join(DATA, "zip_format.pt")
    dst = tmp_path / f"{case}.pt"
    raw = open(src, "rb").read()
    if case == "truncated":
        dst.write_bytes(raw[: len(raw) // 2])
    elif case == "missing_record":
        _rewrite_zip(src, dst, lambda n, d: None if n.endswith("/data/0") else d)
    elif case == "short_record":
        _rewrite_zip(src, dst, lambda n, d: d[:8] if n.endswith("/data/0") else d)
    elif case == "no_data_pkl":
        _rewrite_zip(src, dst, lambda n, d: None if n.endswith("data.pkl") else d)
    elif case == "truncated_pickle":
        _rewrite_zip(src, dst, lambda n, d: d[: len(d) // 2] if n.endswith("data.pkl") else d)
    elif case == "bad_byteorder":
        _rewrite_zip(src, dst, lambda n, d: b"middle" if n.endswith("byteorder") else d)
    with pytest.raises((RuntimeError, pickle.UnpicklingError), match=match):
        tt.load(dst)


def test_a_pickled_module_is_refused():
    had_torch = "torch" in sys.modules
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.linear.Linear was not an allowed global"):
        tt.load(os.path.join(DATA, "full_module.pt"))
    assert ("torch" in sys.modules) == had_torch  # nothing named by the file was imported


# ----------------------------------------------------------------------------- hostile pickles
class _Run:
    """Pickles as a call of ``fn(*args)``: what a malicious checkpoint does."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class EvilDict(collections.OrderedDict):
    """A subclass of an allowed type: its global (this module) must be refused as well."""

    def __setitem__(self, k, v):  # pragma: no cover - must never run
        open(os.environ["TT_MARKER"], "w").close()
        super().__setitem__(k, v)


def _evil_dict() -> EvilDict:
    d = EvilDict()
    collections.OrderedDict.__setitem__(d, "a", 1)  # not through EvilDict.__setitem__
    return d


def _payloads(marker: str):
    import builtins
    cmd = f"touch {marker}"
    code = f"open({marker!r}, 'w').close()"
    return {
        "os.system": _Run(os.system, cmd),
        "eval": _Run(eval, code),
        "builtins.exec": _Run(builtins.exec, code),
        "subprocess": _Run(subprocess.call, ["touch", marker]),
        "subclass": _evil_dict(),
        "nested": {"model": collections.OrderedDict(w=[1, 2, {"deep": (3, _Run(os.system, cmd))}])},
        "import": _Run(__import__, "os"),
    }


def _zip_with_pickle(path, pkl: bytes) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


@pytest.mark.parametrize("protocol", [0, 2, 4])
@pytest.mark.parametrize("payload", ["os.system", "eval", "builtins.exec", "subprocess", "subclass", "nested",
                                     "import"])
@pytest.mark.parametrize("container", ["zip", "legacy"])
def test_code_running_pickles_are_refused_with_nothing_run(tmp_path, monkeypatch, protocol, payload, container):
    marker = str(tmp_path / "ran")
    monkeypatch.setenv("TT_MARKER", marker)
    pkl = pickle.dumps(_payloads(marker)[payload], protocol=protocol)
    assert not os.path.exists(marker)
    path = tmp_path / "evil.pt"
    if container == "zip":
        _zip_with_pickle(path, pkl)
    else:
        header = b"".join(pickle.dumps(x, protocol=2) for x in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}))
        path.write_bytes(header + pkl + pickle.dumps([], protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="not allowed|GLOBAL"):
        tt.load(path)
    assert not os.path.exists(marker), "loading ran the file's code"


@pytest.mark.parametrize("ops, match", [
    # BUILD on a tensor-like object, NEWOBJ of a non-allowed class, INST, REDUCE of a non-function
    (b"\x80\x02}X\x01\x00\x00\x00aK\x01sK\x01b.", "BUILD"),
    (b"\x80\x02(c__builtin__\nobject\no.", "GLOBAL builtins.object"),
    (b"\x80\x02X\x01\x00\x00\x00a)R.", "REDUCE would call 'a'"),
    (b"\x80\x02ccollections\nOrderedDict\n)\x81K\x01b.", "BUILD"),
    (b"\x80\x02\x82\x01.", "EXT1"),
    (b"\x80\x02(X\x07\x00\x00\x00storageccollections\nOrderedDict\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ.",
     "storage type must be a torch storage class"),
    (b"\x80\x02(X\x06\x00\x00\x00moduleK\x01K\x02K\x03K\x04tQ.", "persistent id of kind 'module'"),
    (b"\x80\x02K\x01(K\x02e.", "APPENDS to a int"),
])
def test_checked_opcodes(tmp_path, ops, match):
    path = tmp_path / "ops.pt"
    _zip_with_pickle(path, ops)
    with pytest.raises(pickle.UnpicklingError, match=match):
        tt.load(path)


def test_plain_pickle_file_is_not_unpickled(tmp_path):
    path = tmp_path / "plain.pkl"
    path.write_bytes(pickle.dumps({"a": 1}, protocol=4))
    with pytest.raises(RuntimeError, match="plain pickle file"):
        tt.load(path)


def test_out_of_bounds_view_is_refused(tmp_path):
    # a tensor of 4 elements at offset 2 over a storage of 4
    pkl = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
           b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x02K\x04\x85K\x01\x85\x89ccollections\nOrderedDict\n)Rt"
           b"R.")
    path = tmp_path / "oob.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
    with pytest.raises(pickle.UnpicklingError, match="reads past the end of storage"):
        tt.load(path)


# ----------------------------------------------------------------------------- writing
def _sample():
    rng = np.random.default_rng(5)
    base = tt.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    model = nn.Linear(3, 2)
    return {
        "model": collections.OrderedDict(w=base, wt=base.t(), sl=base[1:3, ::2], p=nn.Parameter(tt.ones(3)),
                                         bf=tt.tensor([0.5, -2.0]).bfloat16(), h=tt.tensor([1.5]).half(),
                                         i=tt.arange(5), b=tt.tensor([True, False]), e=tt.empty(0, 3),
                                         arr=np.arange(6.0).reshape(2, 3)),
        "state": model.state_dict(), "epoch": 3, "lr": 1e-3, "tup": (1, None), "big": -(2 ** 80), "blob": b"\x01x",
        "set": {3}, "c": 2 - 1j, "dtype": tt.bfloat16, "size": tt.Size([1, 2]),
    }


def test_save_torch_format_roundtrip(tmp_path):
    obj = _sample()
    path = tmp_path / "ck.pt"
    tt.save(obj, path, format="torch")
    back = tt.load(path)
    m, src = back["model"], obj["model"]
    for k in ("w", "wt", "sl", "bf", "h", "i", "b"):
        assert m[k].dtype is src[k].dtype and m[k].stride() == src[k].stride(), k
        np.testing.assert_array_equal(_np(m[k]), _np(src[k]), err_msg=k)
    assert _shares(m["w"], m["wt"]) and _shares(m["w"], m["sl"]) and m["sl"].storage_offset() == 6
    assert isinstance(m["p"], nn.Parameter) and m["e"].shape == (0, 3)
    np.testing.assert_array_equal(m["arr"].numpy(), np.arange(6.0).reshape(2, 3))
    assert list(back["state"]) == ["weight", "bias"]
    for k in ("epoch", "lr", "tup", "big", "blob", "set", "c"):
        assert back[k] == obj[k], k
    assert back["dtype"] is tt.bfloat16 and tuple(back["size"]) == (1, 2)
    buf = io.BytesIO()
    tt.save(obj, buf, format="torch")
    buf.seek(0)
    assert tt.load(buf)["epoch"] == 3


def test_save_torch_format_refuses_objects_and_cycles(tmp_path):
    with pytest.raises(TypeError, match="can't save object of type Linear"):
        tt.save({"m": nn.Linear(2, 2)}, tmp_path / "m.pt", format="torch")
    cyc = []
    cyc.append(cyc)
    with pytest.raises(ValueError, match="reference cycle"):
        tt.save(cyc, tmp_path / "c.pt", format="torch")
    with pytest.raises(ValueError, match="format must be"):
        tt.save({}, tmp_path / "x.pt", format="pickle")


def test_torch_load_weights_only_reads_tinytorch_file(tmp_path):
    exe = _torch_python()
    if exe is None:
        pytest.skip("no torch interpreter")
    obj = _sample()
    path = tmp_path / "for_torch.pt"
    tt.save(obj, path, format="torch")
    script = f"""
import torch, numpy as np
o = torch.load({str(path)!r}, weights_only=True)
m = o["model"]
assert m["w"].untyped_storage().data_ptr() == m["wt"].untyped_storage().data_ptr()
assert m["sl"].stride() == (6, 2) and m["sl"].storage_offset() == 6
assert type(m["p"]) is torch.nn.Parameter and m["bf"].dtype == torch.bfloat16 and m["e"].shape == (0, 3)
assert m["arr"].dtype == torch.float64 and list(o["state"]) == ["weight", "bias"]
assert o["big"] == -(2 ** 80) and o["blob"] == b"\\x01x" and o["set"] == {{3}} and o["c"] == 2 - 1j
assert o["dtype"] == torch.bfloat16 and o["size"] == torch.Size([1, 2])
np.save({str(tmp_path / 'w.npy')!r}, m["sl"].numpy())
np.save({str(tmp_path / 'bf.npy')!r}, m["bf"].float().numpy())
"""
    res = subprocess.run([exe, "-c", script], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "w.npy"), _np(obj["model"]["sl"]))
    np.testing.assert_array_equal(np.load(tmp_path / "bf.npy"), _np(obj["model"]["bf"]))


def test_default_format_saves_numpy_arrays_and_plain_values(tmp_path):
    obj = {"arr": np.arange(6, dtype=np.int32).reshape(2, 3), "blob": b"\x00\xff", "c": 1.5 - 2j, "s": {1, 2},
           "f": frozenset({"a"}), "np_scalar": np.float32(0.5), "t": tt.ones(2)}
    tt.save(obj, tmp_path / "plain.safetensors")
    back = tt.load(tmp_path / "plain.safetensors")
    assert isinstance(back["arr"], np.ndarray) and back["arr"].dtype == np.int32   # as torch: an array
    np.testing.assert_array_equal(back["arr"], obj["arr"])
    assert back["blob"] == b"\x00\xff" and back["c"] == 1.5 - 2j and back["s"] == {1, 2}
    assert back["f"] == frozenset({"a"}) and back["np_scalar"] == 0.5
    with pytest.raises(TypeError, match="can't save object of type Linear .* save their state_dict"):
        tt.save({"m": nn.Linear(2, 2)}, tmp_path / "m.safetensors")


def test_cuda_saved_checkpoint_maps_to_cpu(tmp_path):
    """A checkpoint whose storages were saved from 'cuda:0' (the location strings rewritten)."""
    src = os.path.join(DATA, "zip_format.pt")
    cpu_str, cuda_str = b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"
    dst = tmp_path / "cuda.pt"
    _rewrite_zip(src, dst, lambda n, d: d.replace(cpu_str, cuda_str) if n.endswith("data.pkl") else d)
    for ml in ("cpu", {"cuda:0": "cpu"}, tt.device("cpu")):
        m = tt.load(dst, map_location=ml)["model"]
        assert m["wt"].is_cpu and _shares(m["w"], m["wt"]) and m["wt"].stride() == (1, 6)
        np.testing.assert_array_equal(_np(m["sl"]), EXPECTED["w"][1:3, ::2])
    if not tt.cuda.is_available():
        with pytest.raises(RuntimeError, match="can't restore a tensor onto 'cuda:0'.*map_location='cpu'"):
            tt.load(dst)
    else:
        m = tt.load(dst)["model"]
        assert m["w"].is_cuda and _shares(m["w"], m["wt"]) and isinstance(m["p"], nn.Parameter)


def test_legacy_storage_larger_than_file_is_refused_before_allocating(tmp_path):
    header = b"".join(pickle.dumps(x, protocol=2) for x in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}))
    body = (b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
            b"\x8a\x06\x00\x00\x00\x00\x00\x01NtQ.")  # 2**40 floats
    path = tmp_path / "huge.pt"
    path.write_bytes(header + body + pickle.dumps(["0"], protocol=2))
    with pytest.raises(RuntimeError, match="claims 1099511627776 x float32"):
        tt.load(path)
