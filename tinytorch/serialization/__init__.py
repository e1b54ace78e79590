"""``tinytorch.save`` / ``tinytorch.load``: checkpoints in the safetensors layout (this file: the
saved object's structure, the files; the format's bytes and its strict header parser are in
``_safetensors.py``), and PyTorch's checkpoint formats (``format="torch"``; reading:
``_torch_zip.py`` with the allow-list unpickler ``_torch_unpickler.py``, writing: ``_torch_save.py``;
see docs/interop.md).

File layout (https://huggingface.co/docs/safetensors, readable by any safetensors reader)::

    8 bytes        little-endian uint64 N: the header length
    N bytes        UTF-8 JSON header: {name: {"dtype": "F32", "shape": [...], "data_offsets": [b, e]},
                   ..., "__metadata__": {"format": "tinytorch", "tinytorch.structure": "<JSON>"}}
    rest           the tensors' raw little-endian bytes, back to back

Tensors are stored under names built from their path in the saved object
(``{"model": {"fc.weight": t}}`` -> ``"model.fc.weight"``). The nested structure of dicts, lists,
tuples and plain values (int, float, str, bool, None) is kept as JSON in ``__metadata__``, where
tensors appear as references to their names. Numpy arrays are stored the same way, with their
numpy dtype (also complex64, which tensors don't have), and
load back as numpy arrays, as with ``torch.save``. Loading parses JSON only: it never unpickles or runs
code, so ``weights_only`` is always effectively ``True``.

Notes:
    * Non-contiguous tensors are saved as contiguous copies.
    * Tensors that share storage (views of one another) are saved separately, each with its own
      bytes; after loading they no longer share memory.
    * A file without ``tinytorch.structure`` (any plain safetensors file) loads as a flat
      ``{name: tensor}`` dict.
"""
from __future__ import annotations

import collections
import io
import json
import math
import os
import struct
from typing import IO, Any, BinaryIO, Dict, Optional, Union

import numpy as np


from tinytorch.serialization._map_location import MAP_LOCATION, place
from tinytorch.serialization._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals


def get_unsafe_globals_in_checkpoint(f: "FILE_LIKE") -> list:
    """Returns a list of strings of functions/classes in a ``torch.save`` object that are not safe
    for ``weights_only``: every ``module.name`` the checkpoint's pickle names that neither the
    built-in allow-list nor :func:`add_safe_globals` admits. The pickle is scanned, never run.

    Args:
        f: a file path or a binary file object holding a checkpoint in ``torch.save``'s zip format.

    Returns:
        A sorted list of strings.
    """
    from tinytorch.serialization import _torch_zip
    return _torch_zip.unsafe_globals(f)
from tinytorch._tensor.raw_bits import to_bits
from tinytorch.serialization._errors import unsaveable
from tinytorch.serialization._safetensors import (
    _NP_TO_ST, _TT_TO_ST, _check_depth, _little_endian, _parse_header, _parse_tensors,
)
from tinytorch._tensor.tensor import Tensor

FILE_LIKE = Union[str, os.PathLike, BinaryIO, IO[bytes]]

_STRUCTURE_KEY = "tinytorch.structure"
# save(..., digest=True): SHA-256 of everything that defines the values (_file_digest). Files from
# older tinytorch carry _DATA_DIGEST_KEY instead, a SHA-256 of the data section alone.
_DIGEST_KEY = "tinytorch.sha256.header+data"
_DATA_DIGEST_KEY = "tinytorch.sha256"
_DIGEST_DOMAIN = b"tinytorch checkpoint digest v2\n"


def _file_digest(header: Dict[str, Any], data: Any) -> Any:   # a hashlib sha256 object
    """SHA-256 over the parsed header (tensor names in file order, dtypes, shapes, data offsets and
    every ``__metadata__`` entry, the structure included; the digest entry itself left out) and the
    whole data section. Hashing the parsed header, not its bytes, covers exactly what the loader
    interprets; the JSON is length-prefixed so header and data can't trade bytes."""
    canon = dict(header)
    if isinstance(canon.get("__metadata__"), dict):
        canon["__metadata__"] = {k: v for k, v in canon["__metadata__"].items() if k != _DIGEST_KEY}
    text = json.dumps(canon, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    import hashlib
    h = hashlib.sha256(_DIGEST_DOMAIN)
    h.update(struct.pack("<Q", len(text)))
    h.update(text)
    h.update(data)
    return h


# ----------------------------------------------------------------------------- save
def _file_name(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    return str(getattr(f, "name", f"<{type(f).__name__}>"))


def _saved_array(obj: np.ndarray, where: str) -> np.ndarray:
    """The array ``save`` stores for a numpy array (C order; its bytes go to the file little-endian)."""
    a = np.asarray(obj)
    if a.dtype.name not in _NP_TO_ST or a.dtype.fields is not None:
        raise TypeError(f"tinytorch.save: can't save a numpy array of dtype {a.dtype} at {where!r}: supported "
                        f"dtypes are {', '.join(_NP_TO_ST)} (other dtypes would need pickle to rebuild)")
    return np.ascontiguousarray(a) if a.ndim else a  # ascontiguousarray makes a 0-d array 1-d


class _Encoder:
    """Turns a nested object into (JSON-able structure, {name: tensor or numpy array})."""

    def __init__(self) -> None:
        self.tensors: Dict[str, Union[Tensor, np.ndarray]] = {}

    def _name(self, path: list) -> str:
        base = ".".join(str(p) for p in path) or "tensor"
        name, i = base, 1
        while name in self.tensors or name == "__metadata__":
            name, i = f"{base}.{i}", i + 1  # two paths can join to the same string
        return name

    def encode(self, obj: Any, path: list) -> Any:
        if isinstance(obj, Tensor):
            name = self._name(path)
            self.tensors[name] = obj
            node: Dict[str, Any] = {"$t": name}
            if obj.requires_grad:
                node["rg"] = True
            if not obj.is_cpu:
                node["dev"] = str(obj.device)
            return node
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$float": repr(obj)}  # JSON has no nan/inf
        if isinstance(obj, np.generic):
            return self.encode(obj.item(), path)
        if isinstance(obj, np.ndarray):
            name = self._name(path)
            a = self.tensors[name] = _saved_array(obj, ".".join(str(p) for p in path) or "<root>")
            # "np": loads as an array; ">": the array was big-endian (its bytes are stored little-endian)
            return {"$t": name, "np": ">" if a.dtype.byteorder == ">" else True}
        if isinstance(obj, (dict, collections.OrderedDict)):
            if all(isinstance(k, str) for k in obj):
                node = {"$d": {k: self.encode(v, path + [k]) for k, v in obj.items()}}
            else:  # non-string keys (optimizer state is keyed by int) go as [key, value] pairs
                node = {"$dk": [[self.encode(k, path + ["key"]), self.encode(v, path + [k])]
                                for k, v in obj.items()]}
            if isinstance(obj, collections.OrderedDict):
                node["$o"] = True
            return node
        if isinstance(obj, list):
            return [self.encode(v, path + [i]) for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            return {"$tuple": [self.encode(v, path + [i]) for i, v in enumerate(obj)]}
        if isinstance(obj, (bytes, bytearray)):
            return {"$bytes": bytes(obj).hex()}
        if isinstance(obj, complex):
            return {"$complex": [self.encode(obj.real, path), self.encode(obj.imag, path)]}
        if isinstance(obj, (set, frozenset)):
            return {"$set": [self.encode(v, path + [i]) for i, v in enumerate(obj)],
                    "frozen": isinstance(obj, frozenset)}
        raise unsaveable(obj, ".".join(str(p) for p in path) or "<root>")


def save(obj: Any, f: FILE_LIKE, format: str = "safetensors", digest: bool = False, *, pickle_module: Any = None,
         pickle_protocol: Optional[int] = None, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Saves an object to a disk file.

    Args:
        obj: saved object: a tensor, or dicts/lists/tuples of tensors, numpy arrays and plain values
            (a state dict or a full ``{"model": ..., "optimizer": ..., "epoch": ...}`` checkpoint)
        f: a file-like object (has to implement write and flush) or a string or os.PathLike object
            containing a file name
        format: ``"safetensors"`` (default: tinytorch's layout, readable by any safetensors reader)
            or ``"torch"`` (PyTorch's zip checkpoint, which ``torch.load(f, weights_only=True)`` reads;
            shared storages stay shared)
        digest: store a SHA-256 in the file's metadata (safetensors format only) covering the
            header (tensor names, dtypes, shapes, data offsets, the structure and all other
            metadata) and the tensor data; :func:`tinytorch.load` then verifies it and refuses a
            file in which any of these changed

    Keyword args:
        pickle_module: PyTorch's; only the standard ``pickle`` (or None) is taken: tinytorch writes its
            files without pickle, or with its own writer for ``format="torch"``
        pickle_protocol: PyTorch's; accepted and unused (``format="torch"`` writes protocol 2, PyTorch's
            default)
        _use_new_zipfile_serialization: PyTorch's; ``False`` (the pre-1.6 format) is not written
        _disable_byteorder_record: PyTorch's; accepted and unused (files are little-endian)

    Numpy arrays load back as numpy arrays of the same dtype and shape (in ``format="torch"`` they
    are written as tensors, which ``torch.load(weights_only=True)`` reads). Modules and optimizers
    are refused (a ``TypeError``): save their ``state_dict()``."""
    if pickle_module is not None and getattr(pickle_module, "__name__", None) != "pickle":
        raise ValueError(f"tinytorch.save: pickle_module={pickle_module!r} is not taken: tinytorch writes its "
                         "checkpoints without pickle (or with its own writer for format='torch')")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("tinytorch.save: _use_new_zipfile_serialization=False (PyTorch's pre-1.6 "
                                  "format) is not written; the zip format (format='torch') is")
    if format == "torch":
        if digest:
            raise ValueError("tinytorch.save: digest=True needs format='safetensors'; PyTorch's zip format has "
                             "no place for it (its members carry only CRC-32s)")
        from tinytorch.serialization import _torch_save   # PyTorch's format, loaded on first use
        _torch_save.save_torch(obj, f, to_bits)
        return
    if format != "safetensors":
        raise ValueError(f"tinytorch.save: format must be 'safetensors' or 'torch', got {format!r}")
    enc = _Encoder()
    structure = enc.encode(obj, [])
    raws = {name: t if isinstance(t, np.ndarray) else to_bits(t) for name, t in enc.tensors.items()}
    # Largest items first keeps every tensor aligned to its item size with no holes in the buffer.
    order = sorted(raws, key=lambda n: -raws[n].dtype.itemsize)
    header: Dict[str, Any] = {"__metadata__": {"format": "tinytorch", _STRUCTURE_KEY: json.dumps(structure)}}
    offset = 0
    for name in order:
        a = raws[name]
        t = enc.tensors[name]
        if not isinstance(t, np.ndarray) and t.dtype.name not in _TT_TO_ST:
            raise TypeError(f"tinytorch.save: can't save a {t.dtype.name} tensor ({name}): safetensors has no such "
                            f"dtype (its C64 holds complex64); save view_as_real(t) or convert it first")
        st = _NP_TO_ST[a.dtype.name] if isinstance(t, np.ndarray) else _TT_TO_ST[t.dtype.name]
        header[name] = {"dtype": st, "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    if digest:
        h = _file_digest(header, b"")
        for name in order:
            h.update(_little_endian(raws[name]))
        header["__metadata__"][_DIGEST_KEY] = h.hexdigest()
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * (-len(hbytes) % 8)  # pad so the data starts 8-byte aligned, as safetensors does

    def write(fh) -> None:
        fh.write(struct.pack("<Q", len(hbytes)))
        fh.write(hbytes)
        for name in order:
            a = raws[name]
            fh.write(_little_endian(a))

    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            write(fh)
    else:
        write(f)
        if hasattr(f, "flush"):
            f.flush()


# ----------------------------------------------------------------------------- load
class _Decoder:
    def __init__(self, fname: str, tensors: Dict[str, Tensor], map_location: MAP_LOCATION) -> None:
        self.fname = fname
        self.tensors = tensors
        self.map_location = map_location

    def _fail(self, msg: str):
        raise RuntimeError(f"tinytorch.load: {self.fname}: corrupted structure metadata: {msg}")

    def _array(self, name: str, order: Any) -> np.ndarray:
        if order is not True and order != ">":
            self._fail(f"bad array byte order {order!r} for {name!r}")
        v = self.tensors[name]
        a = v if isinstance(v, np.ndarray) else v.numpy()
        return a.astype(a.dtype.newbyteorder(">")) if order == ">" and a.dtype.byteorder != ">" else a

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            self._fail(f"unexpected JSON value {node!r}")
        if "$t" in node:
            name = node["$t"]
            if not isinstance(name, str) or not isinstance(node.get("dev", "cpu"), str):
                self._fail(f"bad tensor reference {node!r}")
            if name not in self.tensors:
                self._fail(f"reference to tensor {name!r} which is not in the file")
            if "np" in node:
                return self._array(name, node["np"])
            if isinstance(self.tensors[name], np.ndarray):
                self._fail(f"tensor {name!r} has a dtype that only numpy arrays have, but is not saved as one")
            t = place(self.tensors[name], node.get("dev", "cpu"), self.map_location, self.fname)
            if node.get("rg"):
                t.requires_grad_(True)
            return t
        if "$float" in node:
            if node["$float"] not in ("nan", "inf", "-inf"):
                self._fail(f"bad float {node['$float']!r}")
            return float(node["$float"])
        if "$tuple" in node:
            if not isinstance(node["$tuple"], list):
                self._fail(f"bad tuple {node['$tuple']!r}")
            return tuple(self.decode(v) for v in node["$tuple"])
        if "$bytes" in node:
            try:
                return bytes.fromhex(node["$bytes"])
            except (TypeError, ValueError) as e:
                self._fail(f"bad bytes value ({e})")
        if "$complex" in node:
            try:
                return complex(*(self.decode(v) for v in node["$complex"]))
            except (TypeError, ValueError) as e:
                self._fail(f"bad complex value ({e})")
        if "$set" in node:
            try:
                return (frozenset if node.get("frozen") else set)(_hashable(self.decode(v)) for v in node["$set"])
            except TypeError as e:
                self._fail(f"bad set value ({e})")
        cls = collections.OrderedDict if node.get("$o") else dict
        if "$d" in node:
            if not isinstance(node["$d"], dict):
                self._fail(f"bad dict {node['$d']!r}")
            return cls((k, self.decode(v)) for k, v in node["$d"].items())
        if "$dk" in node:
            try:
                return cls((_hashable(self.decode(k)), self.decode(v)) for k, v in node["$dk"])
            except (TypeError, ValueError) as e:
                self._fail(f"bad dict entry ({e})")
        self._fail(f"unknown node with keys {sorted(node)}")


def _hashable(k: Any) -> Any:
    return tuple(_hashable(x) for x in k) if isinstance(k, (list, tuple)) else k


def _read_all(f: FILE_LIKE) -> bytes:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    data = f.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"tinytorch.load: {_file_name(f)}: file object must be opened in binary mode")
    return bytes(data)


_MAX_STRUCTURE_DEPTH = 400  # the saved object's nesting (2 JSON levels per container), below the recursion limit


def load(f: FILE_LIKE, map_location: MAP_LOCATION = None, weights_only: bool = True, *,
         digest: Optional[str] = None, **kwargs: Any) -> Any:
    """Loads an object saved with :func:`tinytorch.save` or ``torch.save`` from a file.

    Reads tinytorch's safetensors layout, any safetensors file, and PyTorch checkpoints (the zip
    format of ``torch.save`` and its legacy pickle format). Tensors are restored onto the device
    they were saved from, unless ``map_location`` says otherwise: a string or device (every tensor
    goes there), a dict mapping saved locations to new ones (``{"cuda:0": "cpu"}``), or a callable
    ``fn(tensor, saved_location) -> tensor`` (for PyTorch checkpoints it receives each storage as a
    1-D tensor).

    Nothing in the file is executed, whatever ``weights_only`` says (it is accepted for PyTorch
    compatibility): safetensors files are parsed as JSON and raw bytes, and PyTorch's pickles go
    through an allow-list unpickler that rebuilds only tensors, storages, dtypes, OrderedDicts and
    plain containers/scalars, plus the classes and functions the user allowed with
    :func:`add_safe_globals` / :class:`safe_globals` (``pickle.UnpicklingError`` naming anything
    else and how to allow it; see docs/interop.md and docs/reliability.md).

    Args:
        f: a file path (str or ``os.PathLike``) or a binary file object.
        map_location: where to put the tensors (a device, a string, a ``{saved: new}`` dict or a
            callable ``fn(storage_tensor, location)``).
        weights_only (bool): accepted for PyTorch compatibility; loading is always weights-only.
        digest: ``None`` (default): a digest stored by ``save(..., digest=True)`` is verified when
            the file has one, and a file without one loads unchecked; ``"require"``: a file
            without a digest over its header and data is refused too (PyTorch checkpoints,
            safetensors files from other writers, and older tinytorch files whose digest covers
            the data only).

    Returns:
        the saved object."""
    if kwargs:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(kwargs)}")
    if digest not in (None, "require"):
        raise ValueError(f"tinytorch.load: digest must be None or 'require', got {digest!r}")
    fname = _file_name(f)
    require = digest == "require"
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_stream(fh, fname, map_location, require)
    if not (hasattr(f, "seekable") and f.seekable()):
        return _load_stream(io.BytesIO(_read_all(f)), fname, map_location, require)
    return _load_stream(f, fname, map_location, require)


def _no_digest(fname: str, what: str):
    raise RuntimeError(f"tinytorch.load: {fname}: digest='require' but {what}; save it with "
                       "tinytorch.save(..., digest=True) or load it without digest='require'")


def _verify_digest(data: bytes, metadata: Dict[str, str], fname: str, require: bool) -> None:
    """Checks the stored digest(s) against the file; ``require``: refuses a file without a full one."""
    def stored(key: str) -> str:
        value = metadata[key]
        if len(value) != 64 or any(c not in "0123456789abcdefABCDEF" for c in value):
            raise RuntimeError(f"tinytorch.load: {fname}: metadata {key!r} is not a SHA-256 digest (64 hex digits): "
                               f"{value[:80]!r}; the file is corrupted or was modified")
        return value.lower()

    begin = 8 + struct.unpack("<Q", data[:8])[0]
    body = memoryview(data)[begin:]
    if _DIGEST_KEY in metadata:
        expect = stored(_DIGEST_KEY)
        header = _parse_header(data[8:begin], lambda msg: None)  # _parse_tensors has already accepted it
        if _file_digest(header, body).hexdigest() != expect:
            raise RuntimeError(f"tinytorch.load: {fname}: the file does not match the SHA-256 digest stored in its "
                               "metadata (it covers the tensor names, dtypes, shapes, data offsets, the metadata "
                               "and the data): the file is corrupted or was modified")
    elif require:
        _no_digest(fname, "the file has no digest over its header and data" +
                   (" (only an older data-only digest)" if _DATA_DIGEST_KEY in metadata else ""))
    if _DATA_DIGEST_KEY in metadata:
        import hashlib
        if hashlib.sha256(body).hexdigest() != stored(_DATA_DIGEST_KEY):
            raise RuntimeError(f"tinytorch.load: {fname}: the tensor data does not match the SHA-256 digest stored "
                               "in the file's metadata: the file is corrupted or was modified")


def _load_stream(fh: BinaryIO, fname: str, map_location: MAP_LOCATION, require_digest: bool = False) -> Any:
    start = fh.tell()
    head = fh.read(512)
    if not isinstance(head, (bytes, bytearray)):
        raise TypeError(f"tinytorch.load: {fname}: file object must be opened in binary mode")
    fh.seek(start)
    # PyTorch's formats (zip reader, allow-list unpickler) load on first use, off `import tinytorch`'s path
    from tinytorch.serialization import _torch_zip
    if require_digest and (_torch_zip.is_zip(head) or _torch_zip.is_legacy(head)):
        _no_digest(fname, "it is a PyTorch checkpoint, which carries no digest")
    if _torch_zip.is_zip(head):
        return _torch_zip.load_zip(fh, fname, map_location)
    if _torch_zip.is_legacy(head):
        return _torch_zip.load_legacy(fh.read(), fname, map_location)
    if _torch_zip.is_tar(head):
        raise RuntimeError(f"tinytorch.load: {fname} is in PyTorch's pre-1.0 tar format, which tinytorch does not "
                           "read; re-save it with a recent torch.save")
    if len(head) > 1 and head[0] == 0x80 and 2 <= head[1] <= 5 and head[8:9] != b"{":  # PROTO n, not a JSON header
        raise RuntimeError(f"tinytorch.load: {fname} is a plain pickle file, not a PyTorch checkpoint (torch.save's "
                           "zip or legacy format) or a safetensors file; tinytorch never unpickles arbitrary files")
    data = fh.read()
    tensors, metadata = _parse_tensors(data, fname)
    _verify_digest(data, metadata, fname, require_digest)
    if _STRUCTURE_KEY not in metadata:
        return {name: place(t, "cpu", map_location, fname) for name, t in tensors.items()}
    def bad(msg: str):
        raise RuntimeError(f"tinytorch.load: {fname}: {msg}")

    _check_depth(metadata[_STRUCTURE_KEY].encode("utf-8", "surrogatepass"), _MAX_STRUCTURE_DEPTH,
                 "structure metadata", bad)
    try:
        structure = json.loads(metadata[_STRUCTURE_KEY])
    except (ValueError, RecursionError) as e:
        raise RuntimeError(f"tinytorch.load: {fname}: structure metadata is not valid JSON ({e})") from None
    return _Decoder(fname, tensors, map_location).decode(structure)


__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals",
           "get_unsafe_globals_in_checkpoint"]
