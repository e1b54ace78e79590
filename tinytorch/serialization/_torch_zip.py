"""Reading PyTorch checkpoints: the zip format of ``torch.save`` (default since PyTorch 1.6) and
the legacy pickle stream (``_use_new_zipfile_serialization=False``), without running their code.

Zip layout (``<prefix>`` is any single top-level folder, ``archive`` or the file's stem)::

    <prefix>/data.pkl          the pickled structure (read by _torch_unpickler.RestrictedUnpickler)
    <prefix>/data/<key>        each storage's raw bytes, numel * itemsize, in <prefix>/byteorder
    <prefix>/byteorder         "little" or "big" (absent in old files: little)
    <prefix>/version, .format_version, .storage_alignment, .data/serialization_id  (not needed)

Legacy layout: five pickles back to back (magic number, protocol version, system info, the
structure, the list of storage keys), then each storage as an int64 element count and its bytes,
little-endian. The pre-1.0 tar format is refused.

Tensors are built on the CPU first, as views of one flat tensor per storage (so shared storages
stay shared), then placed where they were saved or where ``map_location`` says, one move per
storage.
"""
from __future__ import annotations

import ctypes
import io
import os
import pickletools
import struct
import zipfile
import zlib
from typing import Any, Callable, Dict

import numpy as np

from tinytorch._tensor.creation import empty
from tinytorch._ops import shape as S
from tinytorch.serialization import _torch_unpickler
from tinytorch.serialization._map_location import place
from tinytorch.serialization._safe_globals import user_allowed_globals
from tinytorch.serialization._torch_unpickler import (
    LoadedStorage, RestrictedUnpickler, UnpicklingError, normalize_bool_bytes,
)
from tinytorch._tensor.tensor import Tensor

ZIP_MAGIC = b"PK\x03\x04"
LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL_VERSION = 1001
_LEGACY_START = b"\x80\x02\x8a\x0a"  # PROTO 2, LONG1 of 10 bytes: the magic number


def is_zip(head: bytes) -> bool:
    return head[:4] == ZIP_MAGIC


def is_legacy(head: bytes) -> bool:
    return head[:4] == _LEGACY_START


def is_tar(head: bytes) -> bool:
    return head[257:262] == b"ustar"


def _buffer(t: Tensor) -> memoryview:
    """A writable byte view of a CPU tensor's memory."""
    n = t._impl.numel * t._impl.itemsize
    return memoryview((ctypes.c_char * n).from_address(t._impl.data_ptr)).cast("B") if n else memoryview(bytearray())


def _byteswap(t: Tensor) -> None:
    size = t._impl.itemsize
    if size > 1 and t._impl.numel:
        np.frombuffer(_buffer(t), dtype=np.dtype(f"u{size}")).byteswap(inplace=True)


# ----------------------------------------------------------------------------- zip
def _zip_prefix(zf: zipfile.ZipFile, fname: str) -> str:
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        if any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
            raise RuntimeError(f"tinytorch.load: {fname} is a TorchScript archive (torch.jit.save); tinytorch reads "
                               "torch.save checkpoints only")
        shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
        raise RuntimeError(f"tinytorch.load: {fname}: zip archive is not a PyTorch checkpoint: expected exactly one "
                           f"'<folder>/data.pkl' member, found {len(pkl)} (members: {shown or 'none'})")
    return pkl[0][: -len("data.pkl")]


def load_zip(f: Any, fname: str, map_location: Any) -> Any:
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as e:
        # NotImplementedError: a damaged "version needed to extract" ("zip file version 6.4")
        raise RuntimeError(f"tinytorch.load: {fname}: not a complete zip archive ({e}); the PyTorch checkpoint is "
                           "truncated or corrupted") from None
    with zf:
        size = _archive_size(zf, fname)
        prefix = _zip_prefix(zf, fname)
        order = "little"
        if prefix + "byteorder" in zf.NameToInfo:
            order = _read_member(zf, prefix + "byteorder", fname, limit=16).decode("ascii", "replace").strip()
            if order not in ("little", "big"):
                raise RuntimeError(f"tinytorch.load: {fname}: byteorder record says {order!r}; expected "
                                   "'little' or 'big'")

        def storage(key: str, dtype, numel: int, location: str) -> Tensor:
            name = f"{prefix}data/{key}"
            info = zf.NameToInfo.get(name)
            if info is None:
                raise RuntimeError(f"tinytorch.load: {fname}: storage record {name!r} is missing from the archive")
            nbytes = numel * dtype.itemsize
            if info.file_size != nbytes:
                raise RuntimeError(f"tinytorch.load: {fname}: storage record {name!r} holds {info.file_size} bytes; "
                                   f"its tensor needs {numel} x {dtype.name} = {nbytes} bytes")
            start = _checked_member(zf, info, fname, size)  # before allocating: the claim must fit the file
            flat = empty(numel, dtype=dtype)
            _read_into(zf, info, start, _buffer(flat), fname)
            if order == "big":
                _byteswap(flat)
            normalize_bool_bytes(flat)
            return flat

        data = _read_member(zf, prefix + "data.pkl", fname)
        unpickler = RestrictedUnpickler(io.BytesIO(data), storage, fname)
        obj = _unpickle(unpickler, f"{fname} ({prefix}data.pkl)")
    return _place(obj, unpickler, map_location, fname)


# Deflate's ceiling is 1032:1 (a 258-byte match in about 2 bits); a member claiming more than that
# from its compressed size is lying, and is refused before its buffer is allocated.
_DEFLATE_MAX_RATIO = 1032
_CHUNK = 1 << 20  # compressed bytes read, and decompressed bytes produced, per step
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., file name length, extra field length


def _archive_size(zf: zipfile.ZipFile, fname: str) -> int:
    try:
        fp = zf.fp
        pos = fp.tell()
        end = fp.seek(0, os.SEEK_END)
        fp.seek(pos)
        return end
    except (OSError, ValueError, AttributeError) as e:
        raise RuntimeError(f"tinytorch.load: {fname}: can't measure the archive ({e})") from None


def _checked_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, fname: str, size: int) -> int:
    """The offset of ``info``'s data, after checking its claimed sizes against the archive's real
    ``size``: nothing is allocated for a member whose claims the file can't back."""
    name = info.filename

    def bad(msg: str):
        raise RuntimeError(f"tinytorch.load: {fname}: record {name!r} {msg}; the checkpoint is corrupted or "
                           "crafted")

    if info.flag_bits & 0x1:
        bad("is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        bad(f"uses zip compression method {info.compress_type} (only stored and deflated are read)")
    if not 0 <= info.header_offset <= size - _LOCAL_HEADER.size:
        bad(f"has its local header at offset {info.header_offset}, outside the {size}-byte archive")
    try:
        zf.fp.seek(info.header_offset)
        head = zf.fp.read(_LOCAL_HEADER.size)
    except (OSError, ValueError) as e:
        bad(f"can't be read ({e})")
    if len(head) != _LOCAL_HEADER.size or head[:4] != ZIP_MAGIC:
        bad(f"has no local file header at offset {info.header_offset}")
    _, name_len, extra_len = _LOCAL_HEADER.unpack(head)
    start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
    if start + info.compress_size > size:
        bad(f"claims {info.compress_size} stored bytes at offset {start}, past the end of the {size}-byte archive")
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        bad(f"is stored uncompressed but claims {info.compress_size} bytes in the archive and {info.file_size} "
            "bytes of content")
    if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > info.compress_size * _DEFLATE_MAX_RATIO:
        bad(f"claims {info.file_size} bytes decompressed from {info.compress_size} deflated bytes, more than "
            f"deflate can produce ({_DEFLATE_MAX_RATIO}:1)")
    return start


def _read_member(zf: zipfile.ZipFile, name: str, fname: str, limit: int = 1 << 31) -> bytes:
    info = zf.NameToInfo[name]
    if info.file_size > limit:
        raise RuntimeError(f"tinytorch.load: {fname}: record {name!r} is implausibly large ({info.file_size} bytes)")
    start = _checked_member(zf, info, fname, _archive_size(zf, fname))
    buf = bytearray(info.file_size)
    _read_into(zf, info, start, memoryview(buf), fname)
    return bytes(buf)


def _read_into(zf: zipfile.ZipFile, info: zipfile.ZipInfo, start: int, out: memoryview, fname: str) -> None:
    """Fills ``out`` (exactly the member's claimed size) with the member's content, straight from
    the archive: stored bytes are read into it, deflated ones decompressed into it in chunks of at
    most ``_CHUNK`` bytes, so the peak is ``out`` plus a few MiB. A stream that yields more or less
    than ``len(out)``, or whose CRC-32 differs from the directory's, is refused."""
    name, n = info.filename, len(out)

    def bad(msg: str):
        raise RuntimeError(f"tinytorch.load: {fname}: record {name!r} {msg}; the checkpoint is truncated or "
                           "corrupted")

    fp, crc, pos = zf.fp, 0, 0
    try:
        fp.seek(start)
        if info.compress_type == zipfile.ZIP_STORED:
            while pos < n:
                got = fp.readinto(out[pos:min(n, pos + _CHUNK)])
                if not got:
                    bad(f"ends after {pos} of its {n} bytes")
                crc = zlib.crc32(out[pos:pos + got], crc)
                pos += got
        else:
            d, left = zlib.decompressobj(-zlib.MAX_WBITS), info.compress_size
            while not d.eof:
                if d.unconsumed_tail:
                    chunk = d.unconsumed_tail
                elif left:
                    chunk = fp.read(min(_CHUNK, left))
                    if not chunk:
                        bad(f"ends after {info.compress_size - left} of its {info.compress_size} deflated bytes")
                    left -= len(chunk)
                else:
                    bad(f"has a deflate stream that stops before its end marker ({pos} of {n} bytes decompressed)")
                room = min(n - pos, _CHUNK)
                piece = d.decompress(chunk, room or 1)  # max_length 0 would mean unlimited: ask for 1 past the end
                if len(piece) > room:
                    bad(f"decompresses to more than the {n} bytes it claims")
                out[pos:pos + len(piece)] = piece
                crc = zlib.crc32(piece, crc)
                pos += len(piece)
            if pos != n:
                bad(f"decompresses to {pos} bytes; it claims {n}")
    except zlib.error as e:
        bad(f"has a broken deflate stream ({e})")
    except (OSError, ValueError) as e:
        bad(f"can't be read ({e})")
    if crc != info.CRC:
        bad(f"fails its CRC-32 check (0x{crc:08x}, the archive says 0x{info.CRC:08x})")


def _unpickle(unpickler: RestrictedUnpickler, what: str) -> Any:
    try:
        return unpickler.load()
    except UnpicklingError as e:
        if str(e).startswith("tinytorch.load:"):
            raise
        # pickle's own messages ("Memo value not found ...") and the stand-ins' name neither the file
        raise UnpicklingError(f"tinytorch.load: {what}: malformed pickle data ({e})") from None
    except RuntimeError as e:
        if str(e).startswith("tinytorch.load:"):
            raise
        raise RuntimeError(f"tinytorch.load: {what}: {e}") from None     # e.g. torch.device("cpx")
    except EOFError:
        raise UnpicklingError(f"tinytorch.load: {what}: malformed or truncated pickle data (ends before STOP)") \
            from None
    except (KeyError, IndexError, ValueError, TypeError, struct.error, AttributeError, UnicodeDecodeError) as e:
        raise UnpicklingError(f"tinytorch.load: {what}: malformed or truncated pickle data ({type(e).__name__}: {e})") \
            from None


# ----------------------------------------------------------------------------- legacy
def load_legacy(data: bytes, fname: str, map_location: Any) -> Any:
    stream = io.BytesIO(data)

    def no_storage(*_):
        raise UnpicklingError(f"tinytorch.load: {fname}: a storage in the legacy header")

    header = [_unpickle(RestrictedUnpickler(stream, no_storage, fname), fname) for _ in range(3)]
    if header[0] != LEGACY_MAGIC_NUMBER or header[1] != LEGACY_PROTOCOL_VERSION:
        raise RuntimeError(f"tinytorch.load: {fname}: invalid magic number / protocol version in the legacy "
                           "PyTorch format; the file is corrupted")
    created = []

    def storage(key: str, dtype, numel: int, location: str) -> Tensor:
        if numel * dtype.itemsize > len(data):  # before allocating: the bytes must be in the file
            raise RuntimeError(f"tinytorch.load: {fname}: storage {key!r} claims {numel} x {dtype.name}, more than "
                               f"the file's {len(data)} bytes; the file is truncated or corrupted")
        created.append(key)
        return empty(numel, dtype=dtype)

    unpickler = RestrictedUnpickler(stream, storage, fname)
    obj = _unpickle(unpickler, fname)
    keys = _unpickle(RestrictedUnpickler(stream, no_storage, fname), fname)
    if not isinstance(keys, list) or sorted(map(str, keys)) != sorted(created):
        raise RuntimeError(f"tinytorch.load: {fname}: the legacy storage key list does not match the storages the "
                           "structure uses; the file is corrupted")
    for key in keys:
        st = unpickler.storages[str(key)]
        head = stream.read(8)
        if len(head) != 8:
            raise RuntimeError(f"tinytorch.load: {fname}: truncated before storage {key!r}")
        (numel,) = struct.unpack("<q", head)
        if numel != st.numel:
            raise RuntimeError(f"tinytorch.load: {fname}: storage {key!r} has {numel} elements in the data section, "
                               f"{st.numel} in the structure")
        out = _buffer(st.flat)
        if stream.readinto(out) != len(out):
            raise RuntimeError(f"tinytorch.load: {fname}: storage {key!r} is truncated")
        normalize_bool_bytes(st.flat)
    unpickler.refill_retyped()
    return _place(obj, unpickler, map_location, fname)


# ----------------------------------------------------------------------------- placement
def _place(obj: Any, unpickler: RestrictedUnpickler, map_location: Any, fname: str) -> Any:
    storages = list(unpickler.storages.values())
    if map_location is None and all(st.location == "cpu" for st in storages):
        return obj
    moved: Dict[int, Tensor] = {}

    def place_tensor(t: Tensor) -> Tensor:
        entry = unpickler.tensor_storage.get(id(t))
        if entry is None:
            return t
        st: LoadedStorage = entry[1]
        if id(st) not in moved:
            try:
                moved[id(st)] = place(st.flat, st.location, map_location, fname, storage=True)
            except (RuntimeError, ValueError) as e:
                if fname in str(e):
                    raise
                # a location the file names ("cpt", "cuda:x") that is no device
                raise RuntimeError(f"tinytorch.load: {fname}: storage {st.key!r} saved at location {st.location!r}: "
                                   f"{e}") from None
        flat = moved[id(st)]
        if flat is st.flat:
            return t
        out = S.as_strided(flat.detach(), tuple(t.shape), t.stride(),
                           flat.storage_offset() + t.storage_offset() - st.flat.storage_offset())
        param_cls = _torch_unpickler._parameter_cls
        if param_cls is not None and isinstance(t, param_cls):
            return param_cls(out, t.requires_grad)
        return out.requires_grad_(True) if t.requires_grad else out

    try:
        return _map_tensors(obj, place_tensor, {})
    except RecursionError:
        raise RuntimeError(f"tinytorch.load: {fname}: the checkpoint's structure is nested too deeply to place its "
                           "tensors; load it with map_location='cpu'") from None


def _map_tensors(obj: Any, fn: Callable[[Tensor], Tensor], memo: Dict[int, Any]) -> Any:
    """``obj`` with every tensor replaced by ``fn(tensor)``, containers rebuilt (shared ones once)."""
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, Tensor):
        out: Any = fn(obj)
    elif isinstance(obj, dict):
        out = type(obj)()
        if type(obj) is not dict:
            out.__dict__.update(obj.__dict__)  # an OrderedDict's _metadata
        for k, v in obj.items():
            out[k] = _map_tensors(v, fn, memo)
    elif isinstance(obj, list):
        out = [_map_tensors(v, fn, memo) for v in obj]
    elif isinstance(obj, tuple) and type(obj) is tuple:
        out = tuple(_map_tensors(v, fn, memo) for v in obj)
    elif isinstance(obj, (set, frozenset)):
        out = type(obj)(_map_tensors(v, fn, memo) for v in obj)
    else:
        return obj
    memo[id(obj)] = out
    return out


__all__ = ["is_zip", "is_legacy", "is_tar", "load_zip", "load_legacy"]


def unsafe_globals(f: Any) -> list:
    """``serialization.get_unsafe_globals_in_checkpoint``: the ``module.name`` of every global a
    torch zip checkpoint's pickle names that neither the built-in allow-list nor the user's
    (``add_safe_globals``) admits. The pickle is only scanned (``pickletools.genops``), never run."""
    fname = _file_name_of(f)
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise ValueError(f"get_unsafe_globals_in_checkpoint: {fname}: expected a checkpoint in torch.save's zip "
                         f"format ({e})") from None
    with zf:
        data = _read_member(zf, _zip_prefix(zf, fname) + "data.pkl", fname)
    allowed = set(RestrictedUnpickler(io.BytesIO(b""), lambda *a: None, fname)._allowed) | set(user_allowed_globals())
    found, strings, memo, top = [], [], {}, None   # top: the string on top of the stack, if it is one
    rename = {"__builtin__": "builtins", "copy_reg": "copyreg"}
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name in ("GLOBAL", "INST"):
                module, name = arg.split(" ", 1)
                found.append(f"{rename.get(module, module)}.{name}")
                top = None
            elif op.name == "STACK_GLOBAL":
                if len(strings) >= 2:
                    found.append(f"{rename.get(strings[-2], strings[-2])}.{strings[-1]}")
                top = None
            elif isinstance(arg, str) and ("UNICODE" in op.name or op.name.endswith("STRING")):
                strings.append(arg)
                top = arg
            elif op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = top
            elif op.name == "MEMOIZE":
                memo[len(memo)] = top
            elif op.name in ("GET", "BINGET", "LONG_BINGET"):
                top = memo.get(arg)
                if top is not None:
                    strings.append(top)
            else:
                top = None
    except (ValueError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"get_unsafe_globals_in_checkpoint: {fname}: malformed pickle ({e})") from None
    return sorted({g for g in found if g not in allowed})


def _file_name_of(f: Any) -> str:
    return str(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")
