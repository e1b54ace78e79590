"""Reading a torch zip checkpoint is bounded by the archive: a member's claimed sizes are checked
against the file before anything is allocated, and deflated members are decompressed in chunks
straight into the storage's buffer, never past the size they claim."""
import io
import os
import platform
import struct
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest

import tinytorch as tt

_CENTRAL = b"PK\x01\x02"


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    tt.save(obj, buf, format="torch")
    return buf.getvalue()


def _repack(raw: bytes, compression: int = zipfile.ZIP_DEFLATED, replace=None, level: int = 1) -> bytes:
    """The archive ``raw`` rewritten with ``compression``; ``replace`` maps member names to new content."""
    src, out = zipfile.ZipFile(io.BytesIO(raw)), io.BytesIO()
    with zipfile.ZipFile(out, "w", compression, compresslevel=level) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, (replace or {}).get(info.filename) or src.read(info.filename))
    return out.getvalue()


def _patch_sizes(raw: bytes, suffix: str, compressed=None, uncompressed=None) -> bytes:
    """``raw`` with the central directory (and local header) sizes of the member ending in ``suffix`` replaced."""
    data, pos, hit = bytearray(raw), 0, 0
    while (pos := data.find(_CENTRAL, pos)) >= 0:
        name_len = struct.unpack_from("<H", data, pos + 28)[0]
        name = bytes(data[pos + 46:pos + 46 + name_len]).decode()
        if name.endswith(suffix):
            local = struct.unpack_from("<I", data, pos + 42)[0]
            for base, at in ((pos, 20), (local, 18)):
                if compressed is not None:
                    struct.pack_into("<I", data, base + at, compressed)
                if uncompressed is not None:
                    struct.pack_into("<I", data, base + at + 4, uncompressed)
            hit += 1
        pos += 4
    assert hit == 1, f"{suffix!r} matched {hit} members"
    return bytes(data)


def _member(raw: bytes, suffix: str) -> str:
    (name,) = [n for n in zipfile.ZipFile(io.BytesIO(raw)).namelist() if n.endswith(suffix)]
    return name


def _run(code: str) -> str:
    env = dict(os.environ)   # the tinytorch the tests run against (installed, or PYTHONPATH for a dev build)
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


# Peak RSS from /proc (VmHWM, reset to the current RSS first): getrusage's ru_maxrss carries the
# parent's peak across fork + exec, which would hide the load's own peak.
_MEASURE = """
    import re, sys, time
    import tinytorch as tt
    def kib(key):
        return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = kib("VmRSS")
    t0 = time.perf_counter()
    try:
        out = tt.load({path!r})
        err = None
    except Exception as e:
        err = f"{{type(e).__name__}}: {{e}}"
    took = time.perf_counter() - t0
    grew = kib("VmHWM") - before
    w = None if err else out["w"]
    print(repr((err, took, grew, None if w is None else (tuple(w.shape), float(w[-1])))))
"""


def _load_measured(path: str):
    if platform.system() != "Linux":
        pytest.skip("peak RSS is read from /proc/self/status")
    """(error text or None, seconds, peak RSS growth in KiB, (shape, last value) of the loaded
    ``["w"]``) of ``tinytorch.load(path)`` in a fresh process."""
    return eval(_run(_MEASURE.format(path=str(path))).strip().splitlines()[-1])


def _crafted_2gib(raw: bytes) -> bytes:
    return _patch_sizes(raw, "/data.pkl", compressed=(1 << 31) - 1, uncompressed=(1 << 31) - 1)


def test_claimed_2gib_pickle_is_refused_fast_without_allocating(tmp_path):
    raw = _torch_bytes({"w": tt.arange(4).float()})
    crafted = _crafted_2gib(raw)
    assert len(crafted) < 2048
    p = tmp_path / "crafted.pt"
    p.write_bytes(crafted)
    err, took, grew_kib, _ = _load_measured(p)
    assert took < 1.0, took
    assert grew_kib < 16 * 1024, f"peak RSS grew {grew_kib} KiB"
    assert err is not None and err.startswith("RuntimeError")
    assert "crafted.pt" in err and "data.pkl" in err and "past the end" in err, err


def test_stored_member_sizes_must_agree():
    raw = _torch_bytes({"w": tt.arange(6).float()})
    bad = _patch_sizes(raw, "/data/0", compressed=8)   # stored: 8 bytes in the file, 24 of content
    with pytest.raises(RuntimeError, match=r"data/0'.* stored uncompressed but claims 8 bytes.* 24 bytes"):
        tt.load(io.BytesIO(bad))


def test_deflated_claim_beyond_deflate_ratio_is_refused():
    raw = _repack(_torch_bytes({"w": tt.arange(6).float()}))
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(_member(raw, "/data.pkl"))
    bad = _patch_sizes(raw, "/data.pkl", uncompressed=info.compress_size * 2000)
    with pytest.raises(RuntimeError, match=r"data.pkl'.* more than deflate can produce"):
        tt.load(io.BytesIO(bad))


# kind -> (the stored bytes of a 64-float tensor -> what its deflated member holds instead, the error);
# the member's directory entry still claims the true 256 bytes
_WRONG_LENGTH_STREAMS = {
    # a stream holding more than the claim (a deflate bomb) stops at the claim
    "bomb": (lambda data: data + bytes(1 << 20), r"data/0'.* decompresses to more than the 256 bytes it claims"),
    "short": (lambda data: data[:100], r"data/0'.* decompresses to 100 bytes; it claims 256"),
}


@pytest.mark.parametrize("kind", _WRONG_LENGTH_STREAMS)
def test_deflated_member_of_another_length_than_claimed_is_refused(kind):
    stream, error = _WRONG_LENGTH_STREAMS[kind]
    w = tt.arange(64).float()
    raw = _torch_bytes({"w": w})
    name = _member(raw, "/data/0")
    bad = _patch_sizes(_repack(raw, replace={name: stream(w.numpy().tobytes())}), "/data/0", uncompressed=64 * 4)
    with pytest.raises(RuntimeError, match=error):
        tt.load(io.BytesIO(bad))


def test_truncated_and_corrupted_deflate_streams_are_refused():
    raw = _repack(_torch_bytes({"w": tt.arange(1000).float()}))
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(_member(raw, "/data/0"))
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    flipped = bytearray(raw)
    flipped[start + info.compress_size // 2] ^= 0xFF
    with pytest.raises(RuntimeError, match=r"data/0'.* (broken deflate stream|CRC-32|decompresses to)"):
        tt.load(io.BytesIO(bytes(flipped)))
    with pytest.raises(RuntimeError, match=r"(not a complete zip archive|data/0')"):
        tt.load(io.BytesIO(raw[:start + info.compress_size // 2]))


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_round_trip_stored_and_deflated_is_exact(compression):
    rng = np.random.default_rng(0)
    state = {"f32": tt.tensor(rng.standard_normal((5, 7)).astype(np.float32)),
             "f64": tt.tensor(rng.standard_normal(11)),
             "i64": tt.arange(-20, 20),
             "u8": tt.tensor(rng.integers(0, 256, 33).astype(np.uint8)),
             "empty": tt.zeros(0), "nested": [tt.ones(3, 2), (tt.tensor([True, False]),)]}
    raw = _torch_bytes(state)
    if compression == zipfile.ZIP_DEFLATED:
        raw = _repack(raw)
    kinds = {i.compress_type for i in zipfile.ZipFile(io.BytesIO(raw)).infolist()}
    assert kinds == {compression}
    out = tt.load(io.BytesIO(raw))
    for k in ("f32", "f64", "i64", "u8", "empty"):
        assert out[k].dtype == state[k].dtype and out[k].shape == state[k].shape
        assert out[k].numpy().tobytes() == state[k].numpy().tobytes(), k
    assert out["nested"][0].tolist() == [[1.0, 1.0]] * 3 and out["nested"][1][0].tolist() == [True, False]


def test_best_compressed_zeros_are_not_mistaken_for_a_lie():
    """16 MiB of zeros at level 9 deflate about 1029:1, close to deflate's 1032:1 ceiling."""
    raw = _repack(_torch_bytes({"w": tt.zeros(4 << 20)}), level=9)
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(_member(raw, "/data/0"))
    assert info.file_size / info.compress_size > 1000
    w = tt.load(io.BytesIO(raw))["w"]
    assert w.shape == (4 << 20,) and not w.numpy().any()


def test_loading_64mb_deflated_storage_peaks_at_its_size(tmp_path):
    n = 16 << 20                                                     # 16 Mi float32 = 64 MiB
    w = tt.tensor((np.arange(n, dtype=np.int64) % 251).astype(np.float32))
    p = tmp_path / "big_deflated.pt"
    p.write_bytes(_repack(_torch_bytes({"w": w})))
    del w
    err, took, grew_kib, loaded = _load_measured(p)
    assert err is None, err
    assert loaded == ((n,), float((n - 1) % 251))
    assert grew_kib <= 64 * 1024 + 12 * 1024, f"peak RSS grew {grew_kib} KiB loading a 64 MiB storage"
