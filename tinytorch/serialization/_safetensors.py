"""The safetensors file format, strictly: the dtype codes and the header parser, which checks
every rule of the format (JSON depth scanned before json recurses, no duplicate keys, offsets
that tile the data section) and names the broken one (docs/reliability.md). A tensor's exact
bytes come from ``_tensor/raw_bits.py``. Used by ``tinytorch.save`` / ``tinytorch.load``
(serialization/__init__.py)."""
from __future__ import annotations

import json
import math
import re
import struct
from typing import Any, Callable, Dict

import numpy as np

from tinytorch._core.dtype import DTYPES
from tinytorch._tensor.raw_bits import NUMPY_BITS, from_bits

_MAX_HEADER = 100_000_000  # the safetensors reference reader's limit
_ST_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
              "U16": "uint16", "U32": "uint32", "U64": "uint64",
              "F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64",
              "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "C64": "complex64"}
_TT_TO_ST = {v: k for k, v in _ST_DTYPES.items()}
# a saved numpy array's dtype name -> its safetensors code (numpy has no bfloat16 or float8)
_NP_TO_ST = {k: v for k, v in _TT_TO_ST.items() if k not in ("bfloat16", "float8_e4m3fn", "float8_e5m2")}
_BY_NAME = {d.name: d for d in DTYPES}


def _little_endian(a: np.ndarray) -> np.ndarray:
    """The array's bytes as safetensors stores them (little-endian, C order), without a copy where
    they already are: hashed and written from the same buffer."""
    return np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False)).reshape(-1).view(np.uint8)


_MAX_DEPTH = 64  # a safetensors header nests 3 deep; anything deeper is hostile
# a JSON string, its closing quote optional so an unterminated one never backtracks (linear)
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"?', re.DOTALL)


class _DuplicateKey(Exception):
    pass


def _no_dups(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _no_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_depth(js: bytes, limit: int, what: str, bad: Callable[[str], Any]) -> None:
    """Rejects JSON nested deeper than ``limit`` in one linear pass, before json can recurse."""
    skel = np.frombuffer(_JSON_STRING.sub(b"", js), dtype=np.uint8)  # strings gone: brackets are structure
    if skel.size:
        step = np.isin(skel, (0x5B, 0x7B)).astype(np.int64) - np.isin(skel, (0x5D, 0x7D)).astype(np.int64)
        depth = int(np.cumsum(step).max())
        if depth > limit:
            bad(f"{what} JSON nesting depth {depth} exceeds the limit of {limit}")


def _parse_header(hbytes: bytes, bad: Callable[[str], Any]) -> Dict[str, Any]:
    """The header as a dict, checked against the JSON rules (depth scanned before json recurses)."""
    try:
        text = hbytes.decode("utf-8")
    except UnicodeDecodeError as e:
        bad(f"header is not valid UTF-8 ({e}); the file is corrupted or not a tinytorch/safetensors file")
    _check_depth(hbytes, _MAX_DEPTH, "header", bad)
    try:
        header = json.loads(text, object_pairs_hook=_no_dups, parse_constant=_no_constant)
    except _DuplicateKey as e:
        bad(f"header JSON has a duplicate key {e.args[0]!r}")
    except (ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        bad(f"header is not valid JSON ({e}); the file is corrupted or not a tinytorch/safetensors file")
    if not isinstance(header, dict):
        bad(f"header JSON is not an object (got {type(header).__name__}); it must be a JSON object")
    return header


def _parse_tensors(data: bytes, fname: str):
    """``({name: tensor}, metadata)`` of a whole file (arrays saved from numpy become numpy arrays
    again through the file's structure, serialization/__init__.py)."""
    def bad(msg: str):
        raise RuntimeError(f"tinytorch.load: {fname}: {msg}")

    if len(data) < 8:
        bad(f"file is truncated or not a tinytorch/safetensors file ({len(data)} bytes, "
            "expected at least the 8-byte header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER:
        bad(f"header length {n} exceeds the limit of {_MAX_HEADER} bytes")
    if 8 + n > len(data):
        bad(f"header length {n} does not fit in the file ({len(data)} bytes); the file is truncated or "
            "not a tinytorch/safetensors file")
    header = _parse_header(data[8:8 + n], bad)
    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        bad("__metadata__ must map strings to strings")
    buf = memoryview(data)[8 + n:]
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            bad(f"tensor {name!r}: header entry must have dtype, shape and data_offsets")
        st = info["dtype"]
        if not isinstance(st, str) or st not in _ST_DTYPES:
            bad(f"tensor {name!r}: unsupported dtype {st!r} (supported: {', '.join(_ST_DTYPES)})")
        shape, offs = info["shape"], info["data_offsets"]
        if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
            bad(f"tensor {name!r}: bad shape {shape!r}: must be a list of non-negative ints")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(_is_int(o) for o in offs)
                or not 0 <= offs[0] <= offs[1]):
            bad(f"tensor {name!r}: bad data_offsets {offs!r}: must be two ints [begin, end] with "
                "0 <= begin <= end")
        dt = _BY_NAME[_ST_DTYPES[st]]
        expect = math.prod(shape) * dt.itemsize
        if offs[1] - offs[0] != expect:
            bad(f"tensor {name!r}: byte count {offs[1] - offs[0]} does not match dtype {st} and shape "
                f"{shape} (expected numel * itemsize = {expect})")
        entries.append((offs[0], offs[1], name, shape, dt))
    entries.sort(key=lambda e: (e[0], e[1]))
    pos, prev = 0, None
    for begin, end, name, _, _ in entries:
        if begin < pos:
            bad(f"tensor {name!r}: data_offsets [{begin}, {end}] overlap tensor {prev!r} (ends at {pos})")
        if begin > pos:
            bad(f"tensor {name!r}: data_offsets [{begin}, {end}] leave a gap in the data section: bytes "
                f"{pos}..{begin} belong to no tensor (not in the file's header)")
        pos, prev = end, name
    if pos > len(buf):
        bad(f"tensor {prev!r}: data_offsets run past the end of the data section ({pos} > {len(buf)} "
            "bytes); the file is truncated")
    if pos < len(buf):
        bad(f"data section has {len(buf) - pos} trailing bytes that belong to no tensor (not in the file's "
            "header); the tensors must cover the data section exactly")
    tensors: Dict[str, Any] = {}
    by_name = {e[2]: e for e in entries}
    for name in header:
        begin, end, _, shape, dt = by_name[name]
        raw = np.frombuffer(buf[begin:end], dtype=np.dtype(NUMPY_BITS[dt.name]).newbyteorder("<"))
        tensors[name] = from_bits(raw.reshape(shape).copy(), dt)  # copy: own, aligned, writable memory
    return tensors, metadata
