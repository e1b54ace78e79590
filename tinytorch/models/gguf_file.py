"""A GGUF reader over ``mmap`` (llama.cpp's model format, versions 2 and 3, little-endian) that
checks the whole file before it allocates anything.

Layout: ``b"GGUF"``, version (u32), tensor count (u64), metadata count (u64); the metadata
key/values (key: u64 length + UTF-8, value type u32, value); the tensor table (name, n_dims u32,
dims u64 x n_dims in ggml order (ne0 first), ggml type u32, offset u64 from the data section); then
the data section, which starts at the next multiple of ``general.alignment`` (default 32).

Every count and length is checked against the bytes left in the file before a list or array is
made (a short file claiming 2^40 elements fails at once), and the tensor table as llama.cpp's
``gguf_init_from_file`` does: at most 4 dims, each > 0, the element count within int64, a known
ggml type whose block size divides the rows, each tensor's offset the running aligned offset (in
table order), its bytes inside the file, no duplicate key or tensor name; and the file must end
at the last tensor's aligned end (its padding may be missing), so a table that describes fewer bytes
than the data section holds is refused. Every error is a ``ValueError("load_gguf: <path>: ...")``.

Metadata values: scalars as Python ``int``/``float``/``bool``/``str``; arrays of strings as lists
of ``str``; numeric arrays as read-only numpy views of the file; nested arrays as lists of those.
Tensor data are read-only numpy views of the file (no copy): F32/F16/F64/I8..I64 in their dtype
and numpy shape (rows first), every other type as uint8 rows of packed blocks, as ``gguf``'s
``GGUFReader`` gives them.
"""
from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Dict, Optional, Tuple

import numpy as np

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4                    # GGML_MAX_DIMS
MAX_ARRAY_NESTING = 16          # arrays of arrays deeper than this are refused (llama.cpp reads none)
_INT64_MAX = 2 ** 63 - 1


class ValueType(IntEnum):
    """GGUF metadata value types (``gguf.GGUFValueType``)."""
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


# scalar value type -> (struct format, numpy dtype); all little-endian
_SCALARS: Dict[int, Tuple[str, str]] = {
    ValueType.UINT8: ("<B", "<u1"), ValueType.INT8: ("<b", "<i1"), ValueType.UINT16: ("<H", "<u2"),
    ValueType.INT16: ("<h", "<i2"), ValueType.UINT32: ("<I", "<u4"), ValueType.INT32: ("<i", "<i4"),
    ValueType.FLOAT32: ("<f", "<f4"), ValueType.BOOL: ("<?", "?"), ValueType.UINT64: ("<Q", "<u8"),
    ValueType.INT64: ("<q", "<i8"), ValueType.FLOAT64: ("<d", "<f8"),
}
_STRUCTS = {t: struct.Struct(fmt) for t, (fmt, _) in _SCALARS.items()}
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")
_MIN_ELEMENT_BYTES = {ValueType.STRING: 8, ValueType.ARRAY: 12, **{t: s.size for t, s in _STRUCTS.items()}}

# ggml type code -> (name, weights per block, bytes per block), as ggml's type traits (gguf.GGML_QUANT_SIZES)
GGML_TYPES: Dict[int, Tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40), 10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110), 22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8),
    28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18),
}
# the types whose data are viewed in their own numpy dtype; the others as uint8 block rows
_TENSOR_DTYPES = {0: "<f4", 1: "<f2", 28: "<f8", 24: "<i1", 25: "<i2", 26: "<i4", 27: "<i8"}


@dataclass(frozen=True)
class GGUFTensor:
    """One tensor of the table: ``dims`` in ggml order (ne0, the contiguous one, first), ``offset``
    from the start of the file, ``data`` a read-only view of its bytes (see the module docstring)."""
    name: str
    ggml_type: int
    dims: Tuple[int, ...]
    offset: int
    nbytes: int
    data: np.ndarray

    @property
    def type_name(self) -> str:
        return GGML_TYPES[self.ggml_type][0]

    @property
    def shape(self) -> Tuple[int, ...]:
        """The logical shape in numpy order (rows first)."""
        return tuple(reversed(self.dims))

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


class GGUFFile:
    """A parsed GGUF file: ``version``, ``alignment``, ``data_offset``, ``metadata`` (key -> value),
    ``value_types`` (key -> (type,) or (ARRAY, element type)) and ``tensors`` (name -> :class:`GGUFTensor`,
    in table order). The memory map stays open while any of its arrays is alive."""

    def __init__(self, path: str, version: int, alignment: int, data_offset: int, metadata: Dict[str, Any],
                 value_types: Dict[str, Tuple[int, ...]], tensors: Dict[str, GGUFTensor]) -> None:
        self.path, self.version, self.alignment, self.data_offset = path, version, alignment, data_offset
        self.metadata, self.value_types, self.tensors = metadata, value_types, tensors

    def value(self, key: str, default: Any = None) -> Any:
        """The metadata value under ``key`` as plain Python (numeric arrays as lists), or ``default``."""
        if key not in self.metadata:
            return default
        return _plain(self.metadata[key])

    def __repr__(self) -> str:
        return (f"GGUFFile({self.path!r}, version={self.version}, {len(self.metadata)} keys, "
                f"{len(self.tensors)} tensors)")


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, list) and v and isinstance(v[0], (list, np.ndarray)):
        return [_plain(x) for x in v]
    return v


class _Reader:
    """A cursor over the mapped bytes; every read is bounds-checked against the file size."""

    def __init__(self, buf, size: int, path: str) -> None:
        self.buf, self.size, self.path, self.pos = buf, size, path, 0

    def fail(self, msg: str) -> ValueError:
        return ValueError(f"load_gguf: {self.path}: {msg}")

    def need(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise self.fail(f"{what} needs {n} bytes at offset {self.pos}, the file has {self.size - self.pos} "
                            "left (truncated or corrupt)")

    def u32(self, what: str) -> int:
        self.need(4, what)
        (v,) = _U32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return v

    def u64(self, what: str) -> int:
        self.need(8, what)
        (v,) = _U64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return v

    def string(self, what: str) -> str:
        n = self.u64(f"the length of {what}")
        self.need(n, f"{what} ({n} bytes)")
        raw = self.buf[self.pos:self.pos + n]
        self.pos += n
        try:
            return str(raw, "utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{what} is not UTF-8 ({e})") from None

    def value(self, vtype: int, key: str, depth: int = 0) -> Any:
        fmt = _STRUCTS.get(vtype)
        if fmt is not None:
            self.need(fmt.size, f"the value of {key!r}")
            (v,) = fmt.unpack_from(self.buf, self.pos)
            self.pos += fmt.size
            return v
        if vtype == ValueType.STRING:
            return self.string(f"the string value of {key!r}")
        if vtype == ValueType.ARRAY:
            return self.array(key, depth)
        raise self.fail(f"metadata key {key!r} has unknown value type {vtype}")

    def array(self, key: str, depth: int) -> Any:
        if depth >= MAX_ARRAY_NESTING:
            raise self.fail(f"metadata key {key!r}: arrays nested deeper than {MAX_ARRAY_NESTING}")
        etype = self.u32(f"the element type of array {key!r}")
        count = self.u64(f"the length of array {key!r}")
        if etype not in _MIN_ELEMENT_BYTES:
            raise self.fail(f"metadata key {key!r}: array of unknown value type {etype}")
        least = count * _MIN_ELEMENT_BYTES[etype]
        if least > self.size - self.pos:
            raise self.fail(f"metadata key {key!r}: an array of {count} {ValueType(etype).name} elements needs at "
                            f"least {least} bytes, the file has {self.size - self.pos} left (truncated or corrupt)")
        if etype in _SCALARS:       # a zero-copy view: the count is already known to fit
            arr = np.frombuffer(self.buf, dtype=_SCALARS[etype][1], count=count, offset=self.pos)
            self.pos += least
            return arr
        if etype == ValueType.STRING:
            return self.strings(count, key)
        return [self.array(key, depth + 1) for _ in range(count)]   # each carries its own element type

    def strings(self, count: int, key: str) -> list:
        # a vocabulary holds ~50k-250k strings: the Python loop only finds where each one starts,
        # the bytes are decoded in one call (_split_utf8)
        buf, pos, size, unpack = self.buf, self.pos, self.size, _U64.unpack_from
        starts = []
        append = starts.append
        try:
            for i in range(count):
                (n,) = unpack(buf, pos)
                pos += 8
                if n > size - pos:
                    raise self.fail(f"metadata key {key!r}: string {i} of {count} claims {n} bytes at offset {pos}, "
                                    f"the file has {size - pos} left (truncated or corrupt)")
                append(pos)
                pos += n
        except struct.error:
            raise self.fail(f"metadata key {key!r}: the file ends inside string {len(starts)} of {count} "
                            "(truncated or corrupt)") from None
        self.pos = pos
        return _split_utf8(self, starts, pos, key) if starts else []


def _split_utf8(r: _Reader, starts: list, end: int, key: str) -> list:
    """The strings whose bytes run from each of ``starts`` to its successor's 8-byte length field (the
    last: to ``end``), decoded in one call: each length field becomes one NUL separator, the whole
    decodes strictly (a string cut inside a character meets a NUL, so it fails too) and splits at
    the NULs. A string holding a NUL itself is decoded on its own instead."""
    first = starts[0] - 8
    st = np.array(starts, dtype=np.int64) - first                   # data starts within the region
    region = np.frombuffer(r.buf, dtype=np.uint8, count=end - first, offset=first)
    keep = np.ones(region.size, dtype=bool)
    keep[(st[:, None] - np.arange(2, 9)).ravel()] = False            # 7 of each length field's 8 bytes
    blob = region[keep]
    seps = st - 1 - 7 * np.arange(1, len(starts) + 1)               # the 8th, in the blob
    blob[seps] = 0
    try:
        if np.count_nonzero(blob == 0) == len(starts):
            return blob.tobytes().decode("utf-8").split("\x00")[1:]
        ends = starts[1:] + [end + 8]
        return [str(r.buf[a:b - 8], "utf-8") for a, b in zip(starts, ends)]
    except UnicodeDecodeError:
        for i, (a, b) in enumerate(zip(starts, starts[1:] + [end + 8])):
            try:
                str(r.buf[a:b - 8], "utf-8")
            except UnicodeDecodeError as e:
                raise r.fail(f"metadata key {key!r}: string {i} is not UTF-8 ({e.reason} at its byte "
                             f"{e.start})") from None
        raise


def _align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def read_gguf(path) -> GGUFFile:
    """Parses and checks the GGUF file at ``path`` (see the module docstring); tensor data stay in the
    memory map. Raises ``FileNotFoundError`` for a missing file, ``ValueError`` for anything else."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_gguf: no such file: {path}")
    with open(path, "rb") as f:
        magic = f.read(4)
        if magic != GGUF_MAGIC:
            raise ValueError(f"load_gguf: {path} is not a GGUF file (magic {magic!r}, expected b'GGUF')")
        size = os.fstat(f.fileno()).st_size
        if size < 24:
            raise ValueError(f"load_gguf: {path}: {size} bytes, shorter than a GGUF header (24 bytes): truncated")
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)   # the map keeps its own handle
    r = _Reader(buf, size, path)
    r.pos = 4
    version = r.u32("the version")
    if version & 0xFFFF == 0 and version != 0:
        raise r.fail(f"big-endian GGUF (version {version >> 16} byte-swapped) is not supported")
    if version not in SUPPORTED_VERSIONS:
        raise r.fail(f"GGUF version {version} is not supported (versions {', '.join(map(str, SUPPORTED_VERSIONS))})")
    n_tensors = r.u64("the tensor count")
    n_kv = r.u64("the metadata count")
    if n_kv * 13 > size - r.pos:       # a key/value takes >= 8 + 4 + 1 bytes
        raise r.fail(f"{n_kv} metadata entries need at least {n_kv * 13} bytes, the file has {size - r.pos} left "
                     "(truncated or corrupt)")
    metadata: Dict[str, Any] = {}
    value_types: Dict[str, Tuple[int, ...]] = {}
    for i in range(n_kv):
        key = r.string(f"metadata key {i}")
        if key in metadata:
            raise r.fail(f"duplicate metadata key {key!r}")
        vtype = r.u32(f"the value type of {key!r}")
        start = r.pos
        metadata[key] = r.value(vtype, key)
        value_types[key] = (vtype, _U32.unpack_from(buf, start)[0]) if vtype == ValueType.ARRAY else (vtype,)
    alignment = _alignment(r, metadata, value_types)
    tables = _tensor_table(r, n_tensors)
    data_offset = _align(r.pos, alignment) if tables else r.pos
    tensors = _tensors(r, tables, data_offset, alignment)
    return GGUFFile(path, version, alignment, data_offset, metadata, value_types, tensors)


def _alignment(r: _Reader, metadata: Dict[str, Any], value_types: Dict[str, Tuple[int, ...]]) -> int:
    if "general.alignment" not in metadata:
        return DEFAULT_ALIGNMENT
    a = metadata["general.alignment"]
    if value_types["general.alignment"] != (ValueType.UINT32,):
        raise r.fail(f"general.alignment must be a UINT32, got {ValueType(value_types['general.alignment'][0]).name}")
    if a == 0 or a & (a - 1):
        raise r.fail(f"general.alignment {a} is not a power of two")
    return a


def _tensor_table(r: _Reader, n_tensors: int) -> list:
    """(name, dims, ggml type, offset) per tensor, each checked on its own (layout: :func:`_tensors`)."""
    if n_tensors * 24 > r.size - r.pos:     # name length 8 + n_dims 4 + type 4 + offset 8, at least
        raise r.fail(f"{n_tensors} tensors need at least {n_tensors * 24} bytes of tensor table, the file has "
                     f"{r.size - r.pos} left (truncated or corrupt)")
    table, seen = [], set()
    for i in range(n_tensors):
        name = r.string(f"the name of tensor {i}")
        if name in seen:
            raise r.fail(f"duplicate tensor name {name!r}")
        seen.add(name)
        n_dims = r.u32(f"n_dims of tensor {name!r}")
        if n_dims > MAX_DIMS:
            raise r.fail(f"tensor {name!r} has {n_dims} dims, at most {MAX_DIMS} are allowed")
        r.need(8 * n_dims, f"the dims of tensor {name!r}")
        dims = struct.unpack_from(f"<{n_dims}Q", r.buf, r.pos)
        r.pos += 8 * n_dims
        count = 1
        for d in dims:
            if d == 0 or d > _INT64_MAX:
                raise r.fail(f"tensor {name!r} has dims {list(dims)}: each must be in 1..2^63-1")
            count *= d
        if count > _INT64_MAX:
            raise r.fail(f"tensor {name!r} has dims {list(dims)}, whose product overflows int64")
        gtype = r.u32(f"the ggml type of tensor {name!r}")
        if gtype not in GGML_TYPES:
            raise r.fail(f"tensor {name!r} has unknown ggml type {gtype}")
        tname, block, type_size = GGML_TYPES[gtype]
        ne0 = dims[0] if dims else 1
        if ne0 % block:
            raise r.fail(f"tensor {name!r} of type {tname} has rows of {ne0} elements, not a multiple of "
                         f"its block size {block}")
        offset = r.u64(f"the offset of tensor {name!r}")
        table.append((name, tuple(dims), gtype, offset, count // block * type_size))
    return table


def _tensors(r: _Reader, table: list, data_offset: int, alignment: int) -> Dict[str, GGUFTensor]:
    """The data views, after checking that the tensors lie back to back (each at the running aligned
    offset, as llama.cpp requires) inside the file."""
    tensors: Dict[str, GGUFTensor] = {}
    expected = 0
    for name, dims, gtype, offset, nbytes in table:
        if offset != expected:
            raise r.fail(f"tensor {name!r} has data offset {offset}, expected {expected} (each tensor follows "
                         f"the previous one, aligned to {alignment} bytes)")
        start = data_offset + offset
        if start + nbytes > r.size:
            raise r.fail(f"tensor {name!r} ({GGML_TYPES[gtype][0]}, dims {list(dims)}) needs bytes "
                         f"{start}..{start + nbytes}, past the end of the file ({r.size} bytes): truncated or corrupt")
        shape = tuple(reversed(dims))
        if gtype in _TENSOR_DTYPES:
            data = np.frombuffer(r.buf, dtype=_TENSOR_DTYPES[gtype], count=nbytes // GGML_TYPES[gtype][2],
                                 offset=start).reshape(shape)
        else:
            _, block, type_size = GGML_TYPES[gtype]
            row_shape = shape[:-1] + (shape[-1] // block * type_size,) if shape else (nbytes,)
            data = np.frombuffer(r.buf, dtype=np.uint8, count=nbytes, offset=start).reshape(row_shape)
        tensors[name] = GGUFTensor(name, gtype, dims, start, nbytes, data)
        expected = _align(offset + nbytes, alignment)
    if table and r.size > data_offset + expected:
        # writers pad each tensor to the alignment and stop there: bytes past that end mean the table
        # describes fewer bytes than the file holds (a type or dims changed, or a shifted data section)
        raise r.fail(f"the file has {r.size - data_offset - expected} bytes past the end of its last tensor "
                     f"({table[-1][0]!r}, data section {data_offset}..{data_offset + expected}, aligned to "
                     f"{alignment}); the tensor table does not describe the data (corrupt)")
    return tensors
