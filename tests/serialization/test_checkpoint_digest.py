"""save(..., digest=True) stores a SHA-256 over everything that defines the loaded values: the
header (tensor names, dtypes, shapes, data offsets, structure and other metadata) and the data.
Every tampering with any of these is refused; digest="require" also refuses a file without one."""
import hashlib
import io
import json

import numpy as np
import pytest

import tinytorch as tt

DIGEST = "tinytorch.sha256.header+data"
OLD_DIGEST = "tinytorch.sha256"


def _state():
    return {"a": tt.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
            "b": tt.tensor(np.arange(10, 16, dtype=np.float32).reshape(2, 3)),
            "steps": tt.arange(4), "epoch": 3}


def _saved(digest: bool = True) -> bytes:
    buf = io.BytesIO()
    tt.save(_state(), buf, digest=digest)
    return buf.getvalue()


def _split(raw: bytes):
    n = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _join(header: dict, body: bytes) -> bytes:
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return len(h).to_bytes(8, "little") + h + body


def _edit(raw: bytes, fn) -> bytes:
    header, body = _split(raw)
    fn(header)
    return _join(header, body)


def _load(raw: bytes, **kw):
    return tt.load(io.BytesIO(raw), **kw)


def _swap_offsets(h):
    h["a"]["data_offsets"], h["b"]["data_offsets"] = h["b"]["data_offsets"], h["a"]["data_offsets"]


def _reshape(h):
    h["a"]["shape"] = [3, 2]


def _retype(h):
    h["a"]["dtype"] = "I32"


def _edit_structure(h):
    meta = h["__metadata__"]
    structure = json.loads(meta["tinytorch.structure"])
    d = structure["$d"]
    d["a"], d["b"] = d["b"], d["a"]
    d["epoch"] = 4
    meta["tinytorch.structure"] = json.dumps(structure)


def _add_metadata(h):
    h["__metadata__"]["note"] = "harmless?"


def _drop_digest(h):
    del h["__metadata__"][DIGEST]


_B = np.arange(10, 16, dtype=np.float32).reshape(2, 3)
# Each tampering, and what a load without a digest silently returns after it.
TAMPERINGS = {
    _swap_offsets: lambda out: np.array_equal(out["a"].numpy(), _B),
    _reshape: lambda out: tuple(out["a"].shape) == (3, 2),
    _retype: lambda out: out["a"].dtype == tt.int32,
    _edit_structure: lambda out: np.array_equal(out["a"].numpy(), _B) and out["epoch"] == 4,
    _add_metadata: lambda out: out["epoch"] == 3,
}


@pytest.mark.parametrize("tamper", list(TAMPERINGS), ids=lambda f: f.__name__.strip("_"))
def test_header_tampering_is_refused(tamper):
    raw = _saved()
    assert TAMPERINGS[tamper](_load(_edit(_edit(raw, _drop_digest), tamper)))  # silent without a digest
    with pytest.raises(RuntimeError, match=r"<BytesIO>: the file does not match the SHA-256 digest"):
        _load(_edit(raw, tamper))


def test_data_tampering_is_refused():
    raw = bytearray(_saved())
    raw[-1] ^= 0x01
    with pytest.raises(RuntimeError, match="SHA-256 digest"):
        _load(bytes(raw))


def test_untampered_file_loads_with_and_without_require():
    raw = _saved()
    for kw in ({}, {"digest": "require"}):
        out = _load(raw, **kw)
        assert out["a"].tolist() == _state()["a"].tolist() and out["b"].tolist() == _state()["b"].tolist()
        assert out["steps"].tolist() == [0, 1, 2, 3] and out["epoch"] == 3


def test_upper_case_hex_is_accepted_and_garbage_refused():
    raw = _saved()
    upper = _edit(raw, lambda h: h["__metadata__"].update({DIGEST: h["__metadata__"][DIGEST].upper()}))
    assert _load(upper, digest="require")["epoch"] == 3
    garbage = _edit(raw, lambda h: h["__metadata__"].update({DIGEST: "z" * 64}))
    with pytest.raises(RuntimeError, match=r"is not a SHA-256 digest \(64 hex digits\)"):
        _load(garbage)


def test_deleted_digest_loads_by_default_but_not_with_require():
    stripped = _edit(_saved(), _drop_digest)
    assert _load(stripped)["epoch"] == 3                               # default: unchanged behaviour
    with pytest.raises(RuntimeError, match=r"digest='require' but the file has no digest over its header"):
        _load(stripped, digest="require")
    with pytest.raises(RuntimeError, match="digest='require'"):
        _load(_saved(digest=False), digest="require")


def test_older_data_only_digest_still_checked_but_not_enough_for_require():
    def old_style(h):
        del h["__metadata__"][DIGEST]
    header, body = _split(_saved())
    old_style(header)
    header["__metadata__"][OLD_DIGEST] = hashlib.sha256(body).hexdigest()
    old = _join(header, body)
    assert _load(old)["epoch"] == 3
    flipped = old[:-1] + bytes([old[-1] ^ 1])
    with pytest.raises(RuntimeError, match="tensor data does not match the SHA-256 digest"):
        _load(flipped)
    with pytest.raises(RuntimeError, match=r"only an older data-only digest"):
        _load(old, digest="require")


def test_require_refuses_torch_checkpoints_and_torch_format_refuses_digest():
    buf = io.BytesIO()
    tt.save({"w": tt.ones(2)}, buf, format="torch")
    with pytest.raises(RuntimeError, match="PyTorch checkpoint, which carries no digest"):
        _load(buf.getvalue(), digest="require")
    with pytest.raises(ValueError, match="digest=True needs format='safetensors'"):
        tt.save({"w": tt.ones(2)}, io.BytesIO(), format="torch", digest=True)
    with pytest.raises(ValueError, match="digest must be None or 'require'"):
        _load(_saved(), digest="yes")
