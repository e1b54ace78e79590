"""``tinytorch.save(obj, f, format="torch")``: a checkpoint in PyTorch's zip format.

The pickle is written opcode by opcode (protocol 2, as ``torch.save``), naming only globals on
the allow-list of ``torch.load(weights_only=True)``: ``torch._utils._rebuild_tensor_v2``,
``_rebuild_parameter``, the storage classes, ``collections.OrderedDict``, ``torch.Size``,
``torch.device``, the dtypes, ``set``/``complex`` and ``_codecs.encode`` (bytes). Each storage is
written once, whole, as ``archive/data/<key>`` (64-byte aligned, little-endian), so tensors that
share memory in tinytorch share a storage in PyTorch. Writing needs no torch.
"""
from __future__ import annotations

import collections
import io
import os
import struct
import zipfile
from typing import Any, BinaryIO, Dict, List, Tuple

import numpy as np

from tinytorch.serialization import _torch_unpickler
from tinytorch.serialization._errors import unsaveable
from tinytorch._tensor.creation import tensor as _tensor_from_data
from tinytorch._core.dtype import dtype as _dtype_cls, device as _device
from tinytorch._ops import shape as S
from tinytorch._core.size import Size
from tinytorch.serialization._torch_pickle_globals import _STORAGE_DTYPES
from tinytorch._tensor.tensor import Tensor

_STORAGE_CLASS = {dt: name for name, dt in _STORAGE_DTYPES.items()
                  if dt in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
                            "complex64", "complex128")}
_ALIGN = 64
_MAX_DEPTH = 1000


class _PickleWriter:
    """Emits a protocol-2 pickle of containers, scalars and tensors; collects the storages."""

    def __init__(self, to_raw) -> None:
        self.out = bytearray(b"\x80\x02")
        self.to_raw = to_raw
        self.storages: Dict[Any, Tuple[str, Tensor]] = {}  # storage identity -> (key, flat tensor)
        self.records: List[Tuple[str, bytes]] = []
        self._active: set = set()

    # -------------------------------------------------------------- opcodes
    def global_(self, module: str, name: str) -> None:
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def int_(self, v: int) -> None:
        if 0 <= v < 256:
            self.out += b"K" + bytes([v])
        elif -(1 << 31) <= v < (1 << 31):
            self.out += b"J" + struct.pack("<i", v)
        else:
            enc = _encode_long(v)
            self.out += b"\x8a" + bytes([len(enc)]) + enc if len(enc) < 256 else \
                b"\x8b" + struct.pack("<i", len(enc)) + enc

    def str_(self, v: str) -> None:
        b = v.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(b)) + b

    def tuple_(self, items, where) -> None:
        if not items:
            self.out += b")"
            return
        self.out += b"("
        for i, v in enumerate(items):
            self.save(v, where + [i])
        self.out += b"t"

    def reduce(self, module: str, name: str, args: tuple, where) -> None:
        self.global_(module, name)
        self.tuple_(args, where)
        self.out += b"R"

    def empty_ordered_dict(self) -> None:
        self.global_("collections", "OrderedDict")
        self.out += b")R"

    # -------------------------------------------------------------- objects
    def save(self, obj: Any, where: list) -> None:
        if len(where) > _MAX_DEPTH:
            raise ValueError(f"tinytorch.save: object nested deeper than {_MAX_DEPTH} levels")
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
        elif type(obj) is int or isinstance(obj, np.integer):
            self.int_(int(obj))
        elif isinstance(obj, (float, np.floating)) and not isinstance(obj, np.ndarray):
            self.out += b"G" + struct.pack(">d", float(obj))
        elif isinstance(obj, np.bool_):
            self.save(bool(obj), where)
        elif isinstance(obj, str):
            self.str_(obj)
        elif isinstance(obj, Tensor):
            self.tensor(obj, where)
        elif isinstance(obj, np.ndarray):
            self.tensor(_tensor_from_data(obj), where)
        elif isinstance(obj, (bytes, bytearray)):
            if isinstance(obj, bytearray):
                self.reduce("__builtin__", "bytearray", (bytes(obj),), where)
            else:
                self.reduce("_codecs", "encode", (obj.decode("latin1"), "latin1"), where)
        elif isinstance(obj, (complex, np.complexfloating)):
            self.reduce("__builtin__", "complex", (float(obj.real), float(obj.imag)), where)
        elif isinstance(obj, _dtype_cls):
            self.global_("torch", obj.name)
        elif isinstance(obj, _device):
            self.reduce("torch", "device", (str(obj),), where)
        elif isinstance(obj, Size):
            self.global_("torch", "Size")
            self.out += b"("
            self.tuple_(tuple(obj), where)
            self.out += b"tR"
        else:
            self.container(obj, where)

    def container(self, obj: Any, where: list) -> None:
        if id(obj) in self._active:
            raise ValueError(f"tinytorch.save: object at {_where(where)} contains itself (a reference cycle)")
        self._active.add(id(obj))
        try:
            if isinstance(obj, dict):
                if type(obj) is dict:
                    self.out += b"}"
                elif isinstance(obj, collections.OrderedDict):
                    self.empty_ordered_dict()
                else:
                    raise TypeError(f"tinytorch.save: can't save a {type(obj).__name__} (a dict subclass) at "
                                    f"{_where(where)} in torch format")
                if obj:
                    self.out += b"("
                    for k, v in obj.items():
                        self.save(k, where + ["<key>"])
                        self.save(v, where + [k])
                    self.out += b"u"
            elif type(obj) is list:
                self.out += b"]"
                if obj:
                    self.out += b"("
                    for i, v in enumerate(obj):
                        self.save(v, where + [i])
                    self.out += b"e"
            elif type(obj) is tuple:
                self.tuple_(obj, where)
            elif type(obj) in (set, frozenset):
                self.global_("__builtin__", type(obj).__name__)
                self.out += b"]"
                if obj:
                    self.out += b"("
                    for v in obj:
                        self.save(v, where + ["<item>"])
                    self.out += b"e"
                self.out += b"\x85R"
            elif callable(getattr(obj, "state_dict", None)):   # a module or an optimizer
                raise unsaveable(obj, ".".join(str(p) for p in where) or "<root>", " in torch format")
            else:
                raise TypeError(f"tinytorch.save: can't save object of type {type(obj).__name__} at {_where(where)} "
                                "in torch format: only tensors, numpy arrays, dict/OrderedDict/list/tuple/set "
                                "containers, int, float, complex, str, bytes, bool, None, dtypes and devices are "
                                "supported (objects would need code to rebuild)")
        finally:
            self._active.discard(id(obj))

    def tensor(self, t: Tensor, where: list) -> None:
        if t.dtype.name not in _STORAGE_CLASS:
            raise TypeError(f"tinytorch.save: can't save a {t.dtype.name} tensor at {_where(where)}")
        is_param = _torch_unpickler._parameter_cls is not None and isinstance(t, _torch_unpickler._parameter_cls)
        if is_param:
            self.global_("torch._utils", "_rebuild_parameter")
            self.out += b"("
        impl = t._impl
        itemsize = impl.itemsize
        ident = (impl.device_str, impl.storage_ptr, impl.storage_nbytes, impl.dtype_code)
        if impl.storage_ptr == 0 or impl.storage_nbytes == 0:
            ident = ("empty", id(t))
        if ident not in self.storages:
            numel = impl.storage_nbytes // itemsize
            flat = S.as_strided(t.detach(), (numel,), (1,), 0)  # the whole storage
            key = str(len(self.storages))
            self.storages[ident] = (key, flat)
            self.records.append((key, self.to_raw(flat).tobytes()))
        key, flat = self.storages[ident]
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("  # args tuple, then the persistent id tuple
        self.str_("storage")
        self.global_("torch", _STORAGE_CLASS[t.dtype.name])
        self.str_(key)
        self.str_(str(t.device))
        self.int_(flat._impl.numel)
        self.out += b"tQ"
        self.int_(impl.storage_offset)
        self.tuple_(tuple(impl.shape), where)
        self.tuple_(tuple(impl.stride()), where)
        self.out += b"\x88" if (t.requires_grad and not is_param) else b"\x89"
        self.empty_ordered_dict()
        self.out += b"tR"
        if is_param:
            self.out += b"\x88" if t.requires_grad else b"\x89"
            self.empty_ordered_dict()
            self.out += b"tR"


def _encode_long(v: int) -> bytes:
    n = (v.bit_length() >> 3) + 1
    return v.to_bytes(n, "little", signed=True)


def _where(path: list) -> str:
    return repr(".".join(str(p) for p in path) or "<root>")


def save_torch(obj: Any, f: Any, to_raw) -> None:
    """Writes ``obj`` to ``f`` (path or binary file object) in PyTorch's zip checkpoint format."""
    w = _PickleWriter(to_raw)
    w.save(obj, [])
    w.out += b"."
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        prefix = stem if stem and stem.isidentifier() else "archive"
        with open(f, "wb") as fh:
            _write_zip(fh, prefix, w)
    else:
        buf = io.BytesIO()
        _write_zip(buf, "archive", w)
        f.write(buf.getvalue())
        if hasattr(f, "flush"):
            f.flush()


def _write_zip(fh: BinaryIO, prefix: str, w: _PickleWriter) -> None:
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        def add(name: str, data: bytes, align: bool = False) -> None:
            info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            if align:  # pad the local header's extra field so the data starts _ALIGN-aligned (as torch, for mmap)
                start = zf.start_dir + 30 + len(info.filename.encode("utf-8")) + 4
                pad = -start % _ALIGN
                info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            zf.writestr(info, data)

        add("data.pkl", bytes(w.out))
        add(".format_version", b"1")
        add(".storage_alignment", str(_ALIGN).encode())
        add("byteorder", b"little")
        for key, raw in w.records:
            add(f"data/{key}", raw, align=True)
        add("version", b"3\n")


__all__ = ["save_torch"]
