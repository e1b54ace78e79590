"""tinytorch.serialization.add_safe_globals / safe_globals / get_safe_globals / clear_safe_globals:
the user's allow-list for PyTorch checkpoints, honoured by tinytorch.load's restricted unpickler as
torch.load(weights_only=True) honours torch's. Nothing outside the list is imported or run."""
from __future__ import annotations

import dataclasses
import enum
import os
import pickle
import zipfile

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import serialization


@dataclasses.dataclass
class Config:
    lr: float
    layers: list


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


class WithSetstate:
    def __init__(self, v):
        self.v = v

    def __getstate__(self):
        return {"packed": self.v * 2}

    def __setstate__(self, state):
        self.v = state["packed"] // 2


class Marker:
    """Its unpickling would write a file: loading without allowing it must leave no file."""

    def __reduce__(self):
        return (_touch, (os.environ["TT_MARKER"],))


def _touch(path):
    open(path, "w").close()
    return "touched"


@pytest.fixture(autouse=True)
def _clean_allow_list():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


def _write(path, obj, protocol=2):
    # a torch zip checkpoint whose data.pkl holds obj and one float32 tensor storage
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(obj, protocol=protocol))
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


def test_disallowed_global_is_named_with_how_to_allow_it(tmp_path):
    path = tmp_path / "cfg.pt"
    _write(path, {"cfg": Config(0.1, [1, 2])})
    with pytest.raises(pickle.UnpicklingError) as e:
        tt.load(path)
    msg = str(e.value)
    assert f"GLOBAL {__name__}.Config was not an allowed global by default" in msg
    assert "tinytorch.serialization.add_safe_globals([Config])" in msg
    assert "tinytorch.serialization.safe_globals([Config])" in msg


@pytest.mark.parametrize("protocol", [2, 4])
def test_safe_globals_context_manager_allows_then_forgets(tmp_path, protocol):
    path = tmp_path / "cfg.pt"
    _write(path, {"cfg": Config(0.25, [3, 4]), "mode": Mode.EVAL, "s": Slotted(1, (2.5,)),
                  "w": WithSetstate(21)}, protocol)
    allowed = [Config, Mode, Slotted, WithSetstate]
    with serialization.safe_globals(allowed):
        assert serialization.get_safe_globals() == allowed
        obj = tt.load(path)
    assert obj["cfg"] == Config(0.25, [3, 4])
    assert obj["mode"] is Mode.EVAL
    assert (obj["s"].a, obj["s"].b) == (1, (2.5,))
    assert obj["w"].v == 21
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        tt.load(path)


def test_nested_context_keeps_outer_entries(tmp_path):
    serialization.add_safe_globals([Config])
    with serialization.safe_globals([Config, Mode]):
        assert serialization.get_safe_globals() == [Config, Mode]
    assert serialization.get_safe_globals() == [Config]


def test_add_get_clear(tmp_path):
    path = tmp_path / "cfg.pt"
    _write(path, [Config(1.0, [])])
    serialization.add_safe_globals([Config])
    serialization.add_safe_globals([Config])  # once only
    assert serialization.get_safe_globals() == [Config]
    assert tt.load(path) == [Config(1.0, [])]
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        tt.load(path)


def test_tuple_entry_gives_the_name_the_file_uses(tmp_path):
    # the file names the class by another path (e.g. a torch class mapped to a tinytorch one)
    data = pickle.dumps({"cfg": Config(2.0, [5])}, protocol=2).replace(
        f"{__name__}\nConfig".encode(), b"oldpkg.configs\nConfig")
    path = tmp_path / "moved.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", data)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL oldpkg.configs.Config"):
        tt.load(path)
    with serialization.safe_globals([(Config, "oldpkg.configs.Config")]):
        assert tt.load(path)["cfg"] == Config(2.0, [5])


def test_allowed_function_is_called_and_unlisted_one_is_not(tmp_path, monkeypatch):
    marker = str(tmp_path / "ran")
    monkeypatch.setenv("TT_MARKER", marker)
    path = tmp_path / "reduce.pt"
    _write(path, {"x": Marker()})
    with pytest.raises(pickle.UnpicklingError, match="_touch"):
        tt.load(path)
    assert not os.path.exists(marker), "loading ran a function that was not allowed"
    with serialization.safe_globals([Config]):  # allowing something else allows nothing more
        with pytest.raises(pickle.UnpicklingError, match="_touch"):
            tt.load(path)
    assert not os.path.exists(marker)
    with serialization.safe_globals([_touch]):
        assert tt.load(path) == {"x": "touched"}
    assert os.path.exists(marker)


def test_tensors_and_allowed_objects_together(tmp_path):
    # a real checkpoint (tensor storages) plus a config object
    w = tt.tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    path = tmp_path / "ckpt.pt"
    tt.save({"w": w}, path, format="torch")
    with zipfile.ZipFile(path) as z:
        names = {n: z.read(n) for n in z.namelist()}
    prefix = next(n for n in names if n.endswith("data.pkl"))
    obj_pkl = pickle.dumps(Config(0.5, [1]), protocol=2)
    # splice the config into the dict: {"w": tensor} -> {"w": tensor, "cfg": Config}
    pkl = names[prefix]
    assert pkl.endswith(b"u.") or pkl.endswith(b"s.")
    body = obj_pkl[2:-1]  # drop PROTO 2 and STOP
    pkl = pkl[:-1] + b"X\x03\x00\x00\x00cfg" + body + b"s."
    names[prefix] = pkl
    with zipfile.ZipFile(path, "w") as z:
        for n, b in names.items():
            z.writestr(n, b)
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        tt.load(path)
    with serialization.safe_globals([Config]):
        out = tt.load(path)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(6.0).reshape(2, 3))
    assert out["cfg"] == Config(0.5, [1])


def test_bad_entries_raise():
    with pytest.raises(TypeError, match="list"):
        serialization.add_safe_globals(Config)
    with pytest.raises(ValueError, match="module.name"):
        serialization.add_safe_globals([(Config,)])
    with pytest.raises(TypeError, match="__qualname__"):
        serialization.add_safe_globals([3])


def test_torch_file_with_allowed_class(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(4.0), "cfg": Config(0.1, [7])}, path)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        torch.load(path, weights_only=True)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        tt.load(path)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == \
        torch.serialization.get_unsafe_globals_in_checkpoint(path) == [f"{__name__}.Config"]
    with serialization.safe_globals([Config]):
        out = tt.load(path)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(4.0, dtype=np.float32))
    assert out["cfg"] == Config(0.1, [7])


def test_get_unsafe_globals_in_checkpoint(tmp_path, monkeypatch):
    marker = str(tmp_path / "ran")
    monkeypatch.setenv("TT_MARKER", marker)
    path = tmp_path / "mixed.pt"
    for protocol in (2, 4):  # GLOBAL and STACK_GLOBAL
        _write(path, {"cfg": Config(1.0, [2]), "mode": Mode.TRAIN, "x": Marker(), "od": {"a": 1}}, protocol)
        names = serialization.get_unsafe_globals_in_checkpoint(str(path))
        assert names == sorted([f"{__name__}.Config", f"{__name__}.Mode", f"{__name__}._touch"]), names
        with serialization.safe_globals([Config, Mode]):
            assert serialization.get_unsafe_globals_in_checkpoint(str(path)) == [f"{__name__}._touch"]
    assert not os.path.exists(marker), "scanning ran the file's code"
    ckpt = tmp_path / "plain.pt"
    tt.save({"w": tt.ones(2)}, ckpt, format="torch")
    assert serialization.get_unsafe_globals_in_checkpoint(ckpt) == []
    with pytest.raises(ValueError, match="zip format"):
        serialization.get_unsafe_globals_in_checkpoint(__file__)
