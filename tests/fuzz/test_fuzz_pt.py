"""PyTorch checkpoint (.pt) fuzzing: torch.save's zip and legacy files (the fixtures PyTorch wrote,
tests/fixtures/torch_checkpoints/, and a deflated copy of the zip one) truncated at each offset and
with bits flipped; the zip directory's sizes, offsets, CRCs and methods made to lie (a 2 GiB claim in
a small file); deflate bombs; the pickle itself damaged inside a valid zip; and crafted tensor
geometry (sizes, strides and offsets past the storage, stride-0 views of 2^40 elements, element
counts past int64, storages claiming more than the file). Each file is loaded by tinytorch.load in a
child interpreter under a 1 GiB address-space cap and a 20 s deadline (tests/fuzz/gguf_cases.py's
child). A case must load exactly what it should (the undamaged checkpoint's tensors: dtype, shape,
stride, offset, storage bytes, last element; or the geometry it crafts) or raise a RuntimeError/
ValueError/UnpicklingError naming the file; the zip format's CRC-32s mean a damaged zip never loads
different data. The legacy format has no checksum: a flipped byte may load a different value.

CI tier: a bounded corpus (cuts at every 11th offset and every one of the first and last 160 bytes,
400 flips per file, every directory lie, geometry and deflate case, 600 damaged pickles). The long
tier (`pytest -m fuzz tests/fuzz/test_fuzz_pt.py`) cuts at every offset, flips every bit of the zip,
legacy and tinytorch-written files (8,000 random ones of the deflated copy) and damages 12,000
pickles."""
import hashlib
import io
import os
import struct
import zipfile
import zlib

import numpy as np
import pytest

import tinytorch as tt
from fuzz import gguf_cases as G

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures", "torch_checkpoints")
_CENTRAL, _LOCAL, _END = b"PK\x01\x02", b"PK\x03\x04", b"PK\x05\x06"


# ---------------------------------------------------------------------------------- zip plumbing
def _repack(raw: bytes, compression=zipfile.ZIP_DEFLATED, replace=None) -> bytes:
    """The archive rewritten member by member (``replace``: name -> new content), CRCs recomputed."""
    src, out = zipfile.ZipFile(io.BytesIO(raw)), io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as dst:
        for info in src.infolist():
            data = (replace or {}).get(info.filename)
            dst.writestr(info.filename, src.read(info.filename) if data is None else data)
    return out.getvalue()


def _central_entries(raw: bytes) -> list:
    """(offset of the central directory entry, its local header offset, member name) per member."""
    out, pos = [], 0
    while (pos := raw.find(_CENTRAL, pos)) >= 0:
        name_len = struct.unpack_from("<H", raw, pos + 28)[0]
        out.append((pos, struct.unpack_from("<I", raw, pos + 42)[0], raw[pos + 46:pos + 46 + name_len].decode()))
        pos += 4
    return out


def _patch(raw: bytes, at: int, fmt: str, value) -> bytes:
    b = bytearray(raw)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


def directory_lies(raw: bytes, label: str) -> list:
    """(label, bytes, expect): each central directory field of each member made to lie, one at a
    time (and the same field in the local header), and the end record's counts and offsets. A lie
    about a member the loader reads must be refused; one about a member it never opens (version,
    .format_version, ...) or an empty one may go unnoticed, as may the end record's (zipfile
    recovers the directory from the record's position; the CRCs guard every byte read)."""
    out = []
    size = len(raw)
    for cd, local, name in _central_entries(raw):
        read = name.endswith("/data.pkl") or "/data/" in name or name.endswith("/byteorder")
        expect = G.REFUSE if read else G.REFUSE_OR_SAME
        csize, usize = struct.unpack_from("<II", raw, cd + 20)
        for field, at, local_at, values in (
                ("compressed size", 20, 18, [2 ** 31, 2 ** 31 - 1, 2 ** 32 - 1, 0, csize + 1, max(csize - 1, 0), size]),
                ("size", 24, 22, [2 ** 31, 2 ** 31 - 1, 2 ** 32 - 1, 0, usize + 1, max(usize - 1, 0)]),
                ("CRC-32", 16, 14, [0, 0xFFFFFFFF]),
                ("method", 10, 8, [8, 12, 14, 99]),
                ("flags", 8, 6, [1]),
                ("local header offset", 42, None, [2 ** 32 - 1, size, max(local - 1, 0), local + 1, 0 if local else 30])):
            for v in values:
                if (field == "size" and v == usize) or (field == "compressed size" and v == csize) or \
                        (field == "local header offset" and v == local):
                    continue
                if field in ("size", "compressed size") and usize == 0 and v == 0:
                    continue
                bad = _patch(raw, cd + at, "<I" if field not in ("method", "flags") else "<H", v)
                if local_at is not None:
                    bad = _patch(bad, local + local_at, "<I" if field not in ("method", "flags") else "<H", v)
                this = expect
                if usize == 0 and (field == "local header offset" or (field == "CRC-32" and v == 0)):
                    this = G.REFUSE_OR_SAME     # an empty member: any local header yields its 0 bytes
                out.append((f"{label}: {name}: {field}={v}", bad, this))
        out.append((f"{label}: {name}: name length 0xFFFF", _patch(raw, cd + 28, "<H", 0xFFFF), expect))
    end = raw.rfind(_END)
    n = struct.unpack_from("<H", raw, end + 10)[0]
    for field, at, fmt, values in (("entries", 10, "<H", [n + 1, n - 1, 0, 0xFFFF]), ("entries on disk", 8, "<H", [n + 1]),
                                   ("directory size", 12, "<I", [2 ** 32 - 1, 0, 1]),
                                   ("directory offset", 16, "<I", [2 ** 32 - 1, 0, size])):
        for v in values:
            # zipfile finds the directory from the end record's own position and reads entries until
            # the directory ends: these lies are recovered from or refused, and the CRCs guard the data
            out.append((f"{label}: end record {field}={v}", _patch(raw, end + at, fmt, v), G.REFUSE_OR_SAME))
    out.append((f"{label}: end record comment length=0xFFFF", _patch(raw, end + 20, "<H", 0xFFFF), G.REFUSE_OR_SAME))
    return out


# ------------------------------------------------------------------------------ crafted pickles
class _Pickle:
    """A protocol-2 pickle of {name: tensor record} as torch.save writes it, with any geometry."""

    def __init__(self) -> None:
        self.out = bytearray(b"\x80\x02}(")

    def global_(self, module, name):
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def obj(self, v):
        if isinstance(v, bool):
            self.out += b"\x88" if v else b"\x89"
        elif isinstance(v, int):
            enc = v.to_bytes((v.bit_length() >> 3) + 1, "little", signed=True)
            self.out += b"\x8a" + bytes([len(enc)]) + enc
        elif isinstance(v, float):
            self.out += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            b = v.encode()
            self.out += b"X" + struct.pack("<I", len(b)) + b
        elif isinstance(v, tuple):
            self.out += b"("
            for x in v:
                self.obj(x)
            self.out += b"t"
        elif v is None:
            self.out += b"N"
        else:
            raise TypeError(v)

    def tensor(self, name, key, storage_class, numel, offset, size, stride, dtype=None):
        self.obj(name)
        self.global_("torch._utils", "_rebuild_tensor_v2" if dtype is None else "_rebuild_tensor_v3")
        self.out += b"(("
        self.obj("storage")
        self.global_("torch", storage_class)
        self.obj(key)
        self.obj("cpu")
        self.obj(numel)
        self.out += b"tQ"
        self.obj(offset)
        self.obj(size)
        self.obj(stride)
        self.obj(False)
        self.global_("collections", "OrderedDict")
        self.out += b")R"
        if dtype is not None:
            self.global_("torch", dtype)
        self.out += b"tR"

    def bytes(self) -> bytes:
        return bytes(self.out + b"u.")


def _zip(pkl: bytes, storages: dict, prefix="archive") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{prefix}/data.pkl", pkl)
        z.writestr(f"{prefix}/byteorder", b"little")
        for key, raw in storages.items():
            z.writestr(f"{prefix}/data/{key}", raw)
        z.writestr(f"{prefix}/version", b"3\n")
    return out.getvalue()


_F32 = np.arange(12, dtype=np.float32)


def _want(name, storage: np.ndarray, dtype, size, stride, offset) -> list:
    """The digest (gguf_cases._pt_digest) of {name: that view}: what the crafted file must load as."""
    numel = int(np.prod(size, dtype=object)) if size else 1
    last = None
    if numel:
        last = repr(float(storage[offset + sum((n - 1) * s for n, s in zip(size, stride))]))
        if storage.dtype.kind in "iu":
            last = repr(int(storage[offset + sum((n - 1) * s for n, s in zip(size, stride))]))
    return [[f"/{name!r}", dtype, list(size), list(stride), offset if numel else 0,
             hashlib.sha256(storage.tobytes()).hexdigest(), last, False, "Tensor"]]


def geometry_cases() -> list:
    """(label, bytes, expect[, want]) for crafted tensor geometry over one storage of 12 float32."""
    out = []
    raw = {"0": _F32.tobytes()}

    def one(label, offset, size, stride, expect, numel=12, storage_class="FloatStorage", storages=None, dtype=None):
        p = _Pickle()
        p.tensor("w", "0", storage_class, numel, offset, size, stride, dtype)
        want = _want("w", _F32, "float32", size, stride, offset) if expect != G.REFUSE else None
        out.append((f"geometry: {label}", _zip(p.bytes(), storages or raw), expect, want))

    one("3x4", 0, (3, 4), (4, 1), G.SAME)
    one("transposed", 0, (4, 3), (1, 4), G.SAME)
    one("stride 5", 0, (3,), (5,), G.SAME)
    one("offset 11, 1 element", 11, (1,), (1,), G.SAME)
    one("offset 12 (past the storage)", 12, (1,), (1,), G.REFUSE)
    one("offset 11, 2 elements", 11, (2,), (1,), G.REFUSE)
    one("13 elements", 0, (13,), (1,), G.REFUSE)
    one("stride 6 x 3 (reads element 12)", 0, (3,), (6,), G.REFUSE)
    one("negative offset", -1, (2,), (1,), G.REFUSE)
    one("negative size", 0, (-1,), (1,), G.REFUSE)
    one("negative stride", 4, (3,), (-1,), G.REFUSE)
    one("size/stride lengths differ", 0, (3, 4), (1,), G.REFUSE)
    one("offset 2^62", 2 ** 62, (1,), (1,), G.REFUSE)
    one("stride 2^62", 0, (2,), (2 ** 62,), G.REFUSE)
    one("stride-0 view of 2^40 elements", 3, (2 ** 40,), (0,), G.SAME)
    one("stride-0 view of 2^31 x 2^31", 5, (2 ** 31, 2 ** 31), (0, 0), G.SAME)
    one("stride-0 view of 2^40 x 2^40 (numel past int64)", 0, (2 ** 40, 2 ** 40), (0, 0), G.REFUSE)
    one("size 2^63", 0, (2 ** 63,), (0,), G.REFUSE)
    one("size 2^64 + 1", 0, (2 ** 64 + 1,), (0,), G.REFUSE)
    one("stride 2^63, 1 element", 0, (1,), (2 ** 63,), G.REFUSE)
    one("offset 2^64", 2 ** 64, (1,), (1,), G.REFUSE)
    one("empty at offset 2^70", 2 ** 70, (0,), (1,), G.REFUSE_OR_SAME)
    one("empty 0 x 2^62", 0, (0, 2 ** 62), (1, 1), G.REFUSE_OR_SAME)
    one("65 dims", 0, (1,) * 65, (1,) * 65, G.REFUSE_OR_SAME)
    one("storage claims 2^60 elements", 0, (3,), (1,), G.REFUSE, numel=2 ** 60)
    one("storage claims 13 elements (48 bytes)", 0, (3,), (1,), G.REFUSE, numel=13)
    one("storage claims -1 elements", 0, (3,), (1,), G.REFUSE, numel=-1)
    one("storage claims 2^64 elements", 0, (3,), (1,), G.REFUSE, numel=2 ** 64)
    one("storage record missing", 0, (3,), (1,), G.REFUSE, storages={"1": _F32.tobytes()})
    one("unknown storage class", 0, (3,), (1,), G.REFUSE, storage_class="EvilStorage")
    one("untyped 48 bytes as float32 (v3)", 0, (12,), (1,), G.SAME, numel=48, storage_class="UntypedStorage",
        dtype="float32")
    one("untyped 10 bytes as float32 (v3)", 0, (2,), (1,), G.REFUSE, numel=10, storage_class="UntypedStorage",
        storages={"0": _F32.tobytes()[:10]}, dtype="float32")
    one("v3 dtype not a dtype", 0, (2,), (1,), G.REFUSE, numel=48, storage_class="UntypedStorage", dtype="Size")
    # one storage, two dtypes
    p = _Pickle()
    p.tensor("a", "0", "FloatStorage", 12, 0, (3,), (1,))
    p.tensor("b", "0", "LongStorage", 6, 0, (3,), (1,))
    out.append(("geometry: one storage as float32 and int64", _zip(p.bytes(), raw), G.REFUSE, None))
    # two views of one storage share it
    p = _Pickle()
    p.tensor("a", "0", "FloatStorage", 12, 0, (2, 3), (3, 1))
    p.tensor("b", "0", "FloatStorage", 12, 6, (6,), (1,))
    want = _want("a", _F32, "float32", (2, 3), (3, 1), 0) + _want("b", _F32, "float32", (6,), (1,), 6)
    out.append(("geometry: two views of one storage", _zip(p.bytes(), raw), G.SAME, want))
    return out


def deflate_cases(base: bytes) -> list:
    """Deflated members whose streams hold more or less than they claim, claims past deflate's
    1032:1 ratio, and a real 4 MiB storage of zeros in about 4 KiB (it loads, its memory bounded by
    its claim)."""
    out = []
    zf = zipfile.ZipFile(io.BytesIO(base))
    name = next(n for n in zf.namelist() if n.endswith("/data/0"))
    first = zf.read(name)
    deflated = _repack(base)
    cd = {n: c for c, _, n in _central_entries(deflated)}

    def claim(raw, member, usize):
        entries = {n: (c, loc) for c, loc, n in _central_entries(raw)}
        c, loc = entries[member]
        return _patch(_patch(raw, c + 24, "<I", usize), loc + 22, "<I", usize)

    bomb = _repack(base, replace={name: first + bytes(1 << 22)})
    out.append(("deflate: stream 4 MiB longer than its claim", claim(bomb, name, len(first)), G.REFUSE))
    short = _repack(base, replace={name: first[:len(first) // 2]})
    out.append(("deflate: stream shorter than its claim", claim(short, name, len(first)), G.REFUSE))
    csize = struct.unpack_from("<I", deflated, cd[name] + 20)[0]
    for usize in (csize * 1033, 2 ** 31, 2 ** 32 - 1):
        out.append((f"deflate: claims {usize} bytes from {csize}", claim(deflated, name, usize), G.REFUSE))
    pkl = next(n for n in zf.namelist() if n.endswith("/data.pkl"))
    out.append(("deflate: data.pkl claims 2 GiB", claim(deflated, pkl, 2 ** 31 - 1), G.REFUSE))
    # a small file whose one storage is 4 MiB of zeros: loads, within its claim
    zeros = np.zeros(1 << 20, np.float32)
    p = _Pickle()
    p.tensor("w", "0", "FloatStorage", zeros.size, 0, (zeros.size,), (1,))
    big = _repack(_zip(p.bytes(), {"0": zeros.tobytes()}))
    out.append(("deflate: 4 MiB of zeros in a small file", big, G.SAME,
                _want("w", zeros, "float32", (zeros.size,), (1,), 0)))
    return out


def pickle_damage(base: bytes, rng, n: int) -> list:
    """The checkpoint's data.pkl flipped, cut, or with bytes inserted or deleted, rewrapped in a
    valid zip (CRCs recomputed), so the restricted unpickler itself meets the damage: it may load
    something else (the pickle says so), never crash, hang or raise another type."""
    zf = zipfile.ZipFile(io.BytesIO(base))
    name = next(m for m in zf.namelist() if m.endswith("/data.pkl"))
    pkl = zf.read(name)
    out = []
    for k in range(n):
        kind = int(rng.integers(0, 4))
        at = int(rng.integers(0, len(pkl)))
        if kind == 0:
            b = bytearray(pkl)
            b[at] ^= 1 << int(rng.integers(0, 8))
            new = bytes(b)
        elif kind == 1:
            new = pkl[:at]
        elif kind == 2:
            new = pkl[:at] + bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8)) + pkl[at:]
        else:
            new = pkl[:at] + pkl[at + int(rng.integers(1, 9)):]
        out.append((f"pickle: {['flip', 'cut', 'insert', 'delete'][kind]}@{at}", _repack(base, zipfile.ZIP_STORED,
                                                                                        {name: new}), G.ANY))
    return out


# ------------------------------------------------------------------------------------- the tiers
def _bases():
    zip_raw = open(os.path.join(FIXTURES, "zip_format.pt"), "rb").read()
    legacy_raw = open(os.path.join(FIXTURES, "legacy_format.pt"), "rb").read()
    small = io.BytesIO()
    tt.save({"w": tt.arange(12).float().reshape(3, 4), "i": tt.arange(5)}, small, format="torch")
    return {"zip": zip_raw, "legacy": legacy_raw, "deflated": _repack(zip_raw), "small": small.getvalue()}


def _digest(raw: bytes) -> list:
    return G._pt_digest(tt.load(io.BytesIO(raw)))


def _mutations(bases: dict, rng, step: int, dense: int, flips: int, every_bit=()) -> list:
    """Truncations (every ``step``-th offset, every one in the first and last ``dense`` bytes) and
    ``flips`` random bit flips of each base (every bit of those in ``every_bit``): refused (a zip: or loaded unchanged, when the flip is in
    a field the reader ignores); a legacy file has no checksum, so a flip may change what it loads."""
    items = []
    for label, raw in bases.items():
        want = _digest(raw)
        cuts = sorted(set(range(0, len(raw), step)) | set(range(dense)) | set(range(len(raw) - dense, len(raw))))
        items += [(f"{label}: cut@{n}", raw[:n], G.REFUSE) for n in cuts if 0 <= n < len(raw)]
        spots = [(p, b) for p in range(len(raw)) for b in range(8)] if label in every_bit else \
            zip(rng.integers(0, len(raw), flips), rng.integers(0, 8, flips))
        for pos, bit in spots:
            b = bytearray(raw)
            b[int(pos)] ^= 1 << int(bit)
            items.append((f"{label}: flip@{pos}.{bit}", bytes(b), G.ANY if label == "legacy" else G.REFUSE_OR_SAME,
                          want))
    return items


def _crafted(bases: dict, rng, n_pickles: int) -> list:
    items = geometry_cases() + deflate_cases(bases["zip"])
    for label in ("zip", "small"):
        want = _digest(bases[label])
        items += [c + (want,) for c in directory_lies(bases[label], label)]
    small = bases["small"]
    items.append(("small: 2 GiB data.pkl claim in a ~1 KiB file",
                  _patch_member_sizes(small, "/data.pkl", 2 ** 31 - 1), G.REFUSE))
    items += pickle_damage(bases["zip"], rng, n_pickles)
    return items


def _patch_member_sizes(raw: bytes, suffix: str, value: int) -> bytes:
    for cd, local, name in _central_entries(raw):
        if name.endswith(suffix):
            for base, at in ((cd, 20), (local, 18)):
                raw = _patch(_patch(raw, base + at, "<I", value), base + at + 4, "<I", value)
    return raw


def _run(tmp_path, items):
    counts, bad, peak = G.run_file_cases(tmp_path, "pt", items, {})
    report = G.report(counts, bad, peak, limit=60)
    print(report)
    assert sum(counts.values()) == len(items), report
    assert not bad, report
    assert counts["refused"] > len(items) // 3, report
    assert peak[0] < G.PEAK_BOUND_KIB, report
    return report


def test_crafted_geometry_digests_match_honest_files():
    """The fuzzer's expected digests: the honest crafted files load as _want says, in this process."""
    for label, raw, expect, *want in geometry_cases():
        if expect == G.SAME:
            assert G._pt_digest(tt.load(io.BytesIO(raw))) == want[0], label


def test_pt_fuzz_ci_tier(tmp_path):
    rng = np.random.default_rng(20261202)
    bases = _bases()
    items = _mutations(bases, rng, step=11, dense=160, flips=400) + _crafted(bases, rng, 600)
    _run(tmp_path, items)


@pytest.mark.fuzz
def test_pt_fuzz_long_tier(tmp_path):
    rng = np.random.default_rng(7)
    bases = _bases()
    items = _mutations(bases, rng, step=1, dense=0, flips=0, every_bit=("zip", "legacy", "small")) + \
        _mutations({"deflated": bases["deflated"]}, rng, step=1, dense=0, flips=8000)[len(bases["deflated"]):] + \
        _crafted(bases, rng, 12000)
    report = _run(tmp_path, items)
    if os.environ.get("TINYTORCH_FUZZ_REPORT"):
        with open(os.environ["TINYTORCH_FUZZ_REPORT"], "w") as f:
            f.write(report + "\n")


# ------------------------------------------------------------------------ the defects the fuzzer found
def _load_fails(tmp_path, data: bytes, match: str):
    import pickle
    path = tmp_path / "crafted.pt"
    path.write_bytes(data)
    with pytest.raises(pickle.UnpicklingError, match=match) as e:
        tt.load(str(path))
    assert "crafted.pt" in str(e.value)


def test_element_count_past_int64_is_refused_naming_the_file(tmp_path):
    """A stride-0 view of 2^40 x 2^40 elements passed the storage-bounds check and failed in
    as_strided with a RuntimeError that named no file."""
    (raw,) = [c[1] for c in geometry_cases() if "numel past int64" in c[0]]
    _load_fails(tmp_path, raw, r"size \(1099511627776, 1099511627776\) has \d+ elements, more than int64 can count")
    (raw,) = [c[1] for c in geometry_cases() if c[0].endswith("size 2^63")]
    _load_fails(tmp_path, raw, r"size=\(9223372036854775808,\) stride=\(0,\) offset=0: each must fit in int64")


def test_pickle_errors_name_the_file(tmp_path):
    """pickle's own messages ("Memo value not found at index 7") and the stand-ins' ("tensor size must be
    a tuple of ints") came out without the file's name."""
    _load_fails(tmp_path, _zip(b"\x80\x02h\x07.", {}), r"crafted\.pt \(archive/data\.pkl\): malformed pickle data "
                                                      r"\(Memo value not found at index 7\)")
    p = _Pickle()
    p.tensor("w", "0", "FloatStorage", 12, 0, (3,), (1,))
    pkl = p.bytes().replace(b"(\x8a\x01\x03t(\x8a\x01\x01t", b"\x8a\x01\x03(\x8a\x01\x01t", 1)  # size (3,) -> 3
    assert pkl != p.bytes()
    _load_fails(tmp_path, _zip(pkl, {"0": _F32.tobytes()}), r"crafted\.pt.*tensor size must be a tuple of ints, got 3")


def test_bytearray8_length_is_checked_before_allocating(tmp_path):
    """pickle's BYTEARRAY8 allocated the length it read (a flipped byte of a legacy checkpoint
    asked for ~2^60 bytes: MemoryError, or a huge zeroed buffer) before finding the data short."""
    _load_fails(tmp_path, _zip(b"\x80\x05\x96" + struct.pack("<Q", 2 ** 40) + b"ab.", {}),
                r"BYTEARRAY8 claims 1099511627776 bytes, the pickle has 3 left")
    assert tt.load(io.BytesIO(_zip(b"\x80\x05\x96" + struct.pack("<Q", 2) + b"ab.", {}))) == bytearray(b"ab")
    _load_fails(tmp_path, _zip(b"\x80\x05\x96" + struct.pack("<Q", 2 ** 64 - 1) + b"ab.", {}),
                r"BYTEARRAY8 claims 18446744073709551615 bytes")     # read(n) raised OverflowError


def test_zip_needing_a_newer_version_is_refused_naming_the_file(tmp_path):
    """A flipped "version needed to extract" made zipfile raise NotImplementedError("zip file
    version 6.4") with no file name."""
    raw = open(os.path.join(FIXTURES, "zip_format.pt"), "rb").read()
    cd = _central_entries(raw)[0][0]
    path = tmp_path / "newer.pt"
    path.write_bytes(_patch(raw, cd + 6, "<H", 64))
    with pytest.raises(RuntimeError, match=r"newer\.pt: not a complete zip archive \(zip file version 6\.4\)"):
        tt.load(str(path))


def test_damaged_device_strings_are_refused_naming_the_file(tmp_path):
    """A storage location or a torch.device of "cpx" raised the device parser's RuntimeError, which
    named no file."""
    raw = open(os.path.join(FIXTURES, "legacy_format.pt"), "rb").read()
    cpu, device = b"X\x03\x00\x00\x00cpu", raw.index(b"device\n")
    spots = [i for i in range(len(raw)) if raw.startswith(cpu, i)]
    storages = [i for i in spots if not device < i < device + 16]        # the persistent ids' locations
    assert storages and len(storages) < len(spots)      # (the pickle memoizes "cpu": one spot for all)
    damaged = bytearray(raw)
    for i in storages:
        damaged[i + 7] = ord("x")
    path = tmp_path / "location.pt"
    path.write_bytes(bytes(damaged))
    with pytest.raises(RuntimeError, match=r"location\.pt: storage '\d+' saved at location 'cpx'"):
        tt.load(str(path))
    path.write_bytes(raw.replace(cpu, b"X\x03\x00\x00\x00cpx"))
    with pytest.raises(RuntimeError, match=r"tinytorch\.load: .*location\.pt: Expected one of cpu, cuda, meta device"):
        tt.load(str(path))
