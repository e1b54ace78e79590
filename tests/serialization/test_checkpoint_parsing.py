"""Strict safetensors header parsing in ``tinytorch.load``: every broken rule is a RuntimeError naming it."""
import json
import struct

import pytest

import tinytorch
from tinytorch import load, save


def craft(path, header, data=b"", raw_header=None):
    hb = raw_header if raw_header is not None else json.dumps(header).encode("utf-8")
    path.write_bytes(struct.pack("<Q", len(hb)) + hb + data)
    return path


def expect_error(path, *fragments):
    with pytest.raises(RuntimeError) as ei:
        load(path)
    msg = str(ei.value)
    assert path.name in msg, msg
    for frag in fragments:
        assert frag in msg, msg


F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


def test_valid_crafted_file_loads(tmp_path):
    p = craft(tmp_path / "ok.st", {"a": F32, "b": {"dtype": "U8", "shape": [0], "data_offsets": [8, 8]},
                                   "__metadata__": {"k": "v"}}, struct.pack("<2f", 1.0, 2.0))
    out = load(p)
    assert out["a"].tolist() == [1.0, 2.0] and out["b"].shape == (0,)


def test_header_length_must_fit(tmp_path):
    p = tmp_path / "f.st"
    p.write_bytes(struct.pack("<Q", 1000) + b"{}")
    expect_error(p, "does not fit in the file")


def test_header_size_bounded(tmp_path):
    p = tmp_path / "f.st"
    p.write_bytes(struct.pack("<Q", 200_000_000) + b"{}")
    expect_error(p, "exceeds the limit")


def test_header_must_be_utf8_json(tmp_path):
    expect_error(craft(tmp_path / "a.st", None, raw_header=b"\xff\xfe"), "UTF-8")
    expect_error(craft(tmp_path / "b.st", None, raw_header=b"{not json"), "not valid JSON")
    expect_error(craft(tmp_path / "c.st", None, raw_header=b'{"a": NaN}'), "not valid JSON")


def test_header_must_be_object(tmp_path):
    expect_error(craft(tmp_path / "f.st", [1, 2]), "not an object")


def test_deep_nesting_is_runtime_error_not_recursion(tmp_path):
    p = craft(tmp_path / "f.st", None, raw_header=b"[" * 100_000)
    expect_error(p, "nesting depth")
    p = craft(tmp_path / "g.st", None, raw_header=b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    expect_error(p, "nesting depth")


def test_brackets_inside_strings_do_not_count(tmp_path):
    p = craft(tmp_path / "f.st", {"a": F32, "__metadata__": {"x": "[" * 1000 + '\\"' + "{" * 1000}},
              struct.pack("<2f", 1.0, 2.0))
    assert load(p)["a"].tolist() == [1.0, 2.0]


def test_deep_structure_metadata(tmp_path):
    s = "[" * 100_000
    p = craft(tmp_path / "f.st", {"__metadata__": {"tinytorch.structure": s}})
    expect_error(p, "nesting depth")


def test_duplicate_keys(tmp_path):
    hb = b'{"a": ' + json.dumps(F32).encode() + b', "a": ' + json.dumps(F32).encode() + b"}"
    expect_error(craft(tmp_path / "f.st", None, struct.pack("<2f", 1, 2), raw_header=hb), "duplicate key")


def test_entry_missing_fields(tmp_path):
    expect_error(craft(tmp_path / "f.st", {"a": {"dtype": "F32", "shape": [2]}}), "must have dtype")
    expect_error(craft(tmp_path / "g.st", {"a": 3}), "must have dtype")


@pytest.mark.parametrize("dtype", ["F8_E8M0", "f32", 5, None])
def test_unknown_dtype(tmp_path, dtype):
    expect_error(craft(tmp_path / "f.st", {"a": dict(F32, dtype=dtype)}, bytes(8)), "unsupported dtype")


@pytest.mark.parametrize("shape", [[-1], [True, 2], [2.0], "2", [[2]], None])
def test_bad_shape(tmp_path, shape):
    expect_error(craft(tmp_path / "f.st", {"a": dict(F32, shape=shape)}, bytes(8)), "bad shape")


@pytest.mark.parametrize("offs", [[8, 0], [0], [0, 8, 8], [False, 8], [0.0, 8], [-8, 0], "0-8"])
def test_bad_data_offsets(tmp_path, offs):
    expect_error(craft(tmp_path / "f.st", {"a": dict(F32, data_offsets=offs)}, bytes(8)), "bad data_offsets")


def test_byte_count_must_match(tmp_path):
    expect_error(craft(tmp_path / "f.st", {"a": dict(F32, shape=[3])}, bytes(8)), "numel * itemsize")


def test_overlap(tmp_path):
    h = {"a": F32, "b": dict(F32, data_offsets=[4, 12])}
    expect_error(craft(tmp_path / "f.st", h, bytes(12)), "overlap")


def test_gap(tmp_path):
    h = {"a": F32, "b": dict(F32, data_offsets=[12, 20])}
    expect_error(craft(tmp_path / "f.st", h, bytes(20)), "gap")


def test_first_range_must_begin_at_zero(tmp_path):
    expect_error(craft(tmp_path / "f.st", {"a": dict(F32, data_offsets=[4, 12])}, bytes(12)), "gap")


def test_trailing_bytes(tmp_path):
    expect_error(craft(tmp_path / "f.st", {"a": F32}, bytes(9)), "trailing bytes")
    expect_error(craft(tmp_path / "g.st", {}, bytes(1)), "trailing bytes")


def test_data_past_end(tmp_path):
    expect_error(craft(tmp_path / "f.st", {"a": F32}, bytes(7)), "past the end")


@pytest.mark.parametrize("meta", [[], "x", {"k": 1}, {"k": None}, {"k": ["v"]}])
def test_metadata_maps_strings_to_strings(tmp_path, meta):
    expect_error(craft(tmp_path / "f.st", {"__metadata__": meta}), "__metadata__")


def test_truncation_at_every_offset(tmp_path):
    p = tmp_path / "good.st"
    save({"w": tinytorch.arange(6, dtype=tinytorch.float32).reshape(2, 3), "n": 3,
          "b": tinytorch.tensor([1, 2], dtype=tinytorch.int64)}, p)
    raw = p.read_bytes()
    assert load(p)["n"] == 3
    q = tmp_path / "trunc.st"
    for i in range(len(raw)):
        q.write_bytes(raw[:i])
        with pytest.raises(RuntimeError) as ei:
            load(q)
        assert "trunc.st" in str(ei.value)


def test_digest_detects_any_changed_data_byte(tmp_path):
    """save(..., digest=True) stores a SHA-256 of the data section; load verifies it: every single
    bit flip in the data is refused, while a file without a digest loads the changed values."""
    import numpy as np
    tt = tinytorch
    state = {"w": tt.tensor(np.arange(12.0).reshape(3, 4)), "i": tt.arange(5)}
    p = tmp_path / "d.safetensors"
    tt.save(state, str(p), digest=True)
    data = p.read_bytes()
    begin = 8 + int.from_bytes(data[:8], "little")
    assert tt.load(str(p))["w"].tolist() == state["w"].tolist()
    for at in range(begin, len(data), 7):
        bad = bytearray(data)
        bad[at] ^= 0x10
        p.write_bytes(bytes(bad))
        with pytest.raises(RuntimeError, match="SHA-256 digest"):
            tt.load(str(p))
    plain = tmp_path / "plain.safetensors"
    tt.save(state, str(plain))
    raw = bytearray(plain.read_bytes())
    raw[-1] ^= 0x01
    plain.write_bytes(bytes(raw))
    assert tt.load(str(plain))["i"].tolist() != state["i"].tolist()    # no digest: nothing to check
