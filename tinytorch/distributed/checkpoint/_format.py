"""The on-disk layout of a distributed checkpoint (a directory)::

    __<rank>_0.safetensors   one per rank: the rows it owns of every sharded tensor, and (rank 0)
                             the replicated tensors, named by their flattened key
                             (``{"model": {"fc.weight": t}}`` -> ``"model.fc.weight"``)
    metadata.json            written by rank 0 once every rank's file is complete:
        {"format": "tinytorch.dcp", "version": 1, "world_size": N,
         "tensors": {key: {"shape": [...], "dtype": "float32",
                           "chunks": [{"file": "__0_0.safetensors", "rows": [0, 4]}, ...]}},
         "values": {key: <JSON value>}}

A chunk's ``rows`` are global rows of dim 0 (``null`` for a 0-dim tensor); the file holds them as
a tensor of ``stop - start`` rows. Non-tensor values (learning rates, param groups' fqn lists)
are JSON. Nothing is pickled, on saving or loading."""
from __future__ import annotations

import json
import math
import os
import struct
from typing import Any

import numpy as np

from tinytorch._core.dtype import DTYPES
from tinytorch._tensor.raw_bits import NUMPY_BITS, from_bits
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor
from tinytorch.serialization._safetensors import _MAX_HEADER, _ST_DTYPES, _parse_header
from tinytorch._tensor.tensor import Tensor

INDEX = "metadata.json"
FORMAT = "tinytorch.dcp"
VERSION = 1
BY_NAME = {d.name: d for d in DTYPES}


def rank_file(rank: int) -> str:
    return f"__{rank}_0.safetensors"


def flatten(state_dict: dict, what: str) -> dict:
    """``{flat key: (path, leaf)}``: nested dicts (and lists holding tensors) opened up, keys
    joined with ``.``; leaves are tensors, ShardedTensors and JSON values."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"{what}: state_dict must be a dict (e.g. {{'model': ..., 'optim': ...}}), got "
                        f"{type(state_dict).__name__}")
    out: dict = {}

    def has_tensor(o) -> bool:
        if isinstance(o, (Tensor, ShardedTensor)):
            return True
        if isinstance(o, dict):
            return any(has_tensor(v) for v in o.values())
        if isinstance(o, (list, tuple)):
            return any(has_tensor(v) for v in o)
        return False

    def visit(o, path: tuple) -> None:
        if isinstance(o, dict) and (o or not path):
            for k, v in o.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"{what}: state_dict keys must be str or int, got {k!r} under "
                                    f"{'.'.join(map(str, path)) or '<root>'}")
                visit(v, path + (k,))
            return
        if isinstance(o, (list, tuple)) and has_tensor(o):
            for i, v in enumerate(o):
                visit(v, path + (i,))
            return
        key = ".".join(str(p) for p in path)
        if key in out:
            raise ValueError(f"{what}: two entries of state_dict flatten to the same key {key!r}")
        if not isinstance(o, (Tensor, ShardedTensor)):
            try:
                json.dumps(o, allow_nan=True)
            except (TypeError, ValueError):
                raise TypeError(f"{what}: state_dict[{key!r}] is a {type(o).__name__}, which a checkpoint cannot "
                                "hold: values must be tensors or JSON (numbers, strings, lists, dicts; nothing is "
                                "pickled)") from None
        out[key] = (path, o)
    visit(state_dict, ())
    return out


def _like(template: Any, value: Any) -> Any:
    """``value`` (from JSON) with the template's tuples where JSON made lists (AdamW's betas)."""
    if isinstance(value, list) and isinstance(template, (list, tuple)):
        items = [_like(template[i] if i < len(template) else None, v) for i, v in enumerate(value)]
        return tuple(items) if isinstance(template, tuple) else items
    if isinstance(value, dict) and isinstance(template, dict):
        return {k: _like(template.get(k), v) for k, v in value.items()}
    return value


def set_at(root: dict, path: tuple, value: Any) -> None:
    """Replaces the value at ``path``, shaped like the value it replaces."""
    node = root
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = _like(node[path[-1]], value)


class FileReader:
    """Reads row ranges of the tensors of one safetensors file without reading the rest."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh = open(path, "rb")
        head = self._fh.read(8)
        if len(head) < 8:
            self._bad(f"truncated ({len(head)} bytes)")
        (n,) = struct.unpack("<Q", head)
        if n > _MAX_HEADER:
            self._bad(f"header length {n} exceeds {_MAX_HEADER}")
        self.header = _parse_header(self._fh.read(n), self._bad)
        self.data_start = 8 + n
        self.size = os.path.getsize(path)

    def _bad(self, msg: str):
        raise RuntimeError(f"dcp.load: {self.path}: {msg}")

    def rows(self, name: str, start: int, stop: int, scalar: bool) -> Tensor:
        """Rows ``[start, stop)`` (file-relative) of tensor ``name``; the whole tensor when ``scalar``."""
        info = self.header.get(name)
        if not isinstance(info, dict) or info.get("dtype") not in _ST_DTYPES:
            self._bad(f"no tensor {name!r} of a supported dtype in the file (the checkpoint's index lists it here)")
        dtype = BY_NAME[_ST_DTYPES[info["dtype"]]]
        shape = [int(s) for s in info["shape"]]
        b0, b1 = (int(o) for o in info["data_offsets"])
        item = np.dtype(NUMPY_BITS[dtype.name]).itemsize
        if b1 - b0 != math.prod(shape) * item or self.data_start + b1 > self.size:
            self._bad(f"tensor {name!r}: data_offsets {[b0, b1]} do not match shape {shape} or the file size")
        if scalar:
            start, stop, out_shape = 0, 1, tuple(shape)
            row = b1 - b0
        else:
            if not shape or not 0 <= start <= stop <= shape[0]:
                self._bad(f"tensor {name!r}: rows [{start}, {stop}) outside its shape {shape}")
            row = math.prod(shape[1:]) * item
            out_shape = (stop - start,) + tuple(shape[1:])
        self._fh.seek(self.data_start + b0 + start * row)
        buf = self._fh.read((stop - start) * row)
        if len(buf) != (stop - start) * row:
            self._bad(f"tensor {name!r}: file ends inside its data")
        arr = np.frombuffer(buf, dtype=np.dtype(NUMPY_BITS[dtype.name]).newbyteorder("<"))
        arr = arr.astype(arr.dtype.newbyteorder("="), copy=True).reshape(out_shape)
        return from_bits(arr, dtype)

    def close(self) -> None:
        self._fh.close()
