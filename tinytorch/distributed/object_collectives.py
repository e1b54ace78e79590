"""Object collectives: small JSON values across ranks (``all_gather_object``,
``broadcast_object_list``, PyTorch's names). JSON, never pickle: nothing received from the network
is ever run. Built on the tensor collectives: sizes first, then the padded UTF-8 bytes."""
from __future__ import annotations

import json

import numpy as np

from tinytorch._tensor.creation import tensor, zeros
from tinytorch._core.dtype import device as _device, int64, uint8
from tinytorch.distributed.collectives import all_gather_into_tensor, broadcast
from tinytorch.distributed.process_group import GroupMember, ProcessGroup, _pg, get_rank

__all__ = ["all_gather_object", "broadcast_object_list"]


def _object_device(pg: ProcessGroup):
    return _device("cpu") if pg.name() == "mpi" else pg._impl.device


def _encode(obj) -> bytes:
    try:
        return json.dumps(obj, separators=(",", ":")).encode()
    except TypeError as e:
        raise TypeError(f"tinytorch.distributed object collectives send JSON (never pickle): {e}") from None


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Gathers JSON-serializable ``obj`` from every rank into ``object_list`` (tuples come back as lists)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    dev = _object_device(pg)
    data = _encode(obj)
    n = pg.size()
    sizes = zeros(n, dtype=int64, device=dev)
    mine = tensor([len(data)], dtype=int64, device=dev)
    all_gather_into_tensor(sizes, mine, group)
    lens = [int(v) for v in sizes.cpu().tolist()]
    m = max(max(lens), 1)
    buf = np.zeros(m, dtype=np.uint8)
    buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    inp = tensor(buf, dtype=uint8, device=dev)
    out = zeros(n * m, dtype=uint8, device=dev)
    all_gather_into_tensor(out, inp, group)
    raw = out.cpu().numpy().tobytes()
    if len(object_list) != n:
        raise ValueError(f"all_gather_object: object_list must have {n} entries, got {len(object_list)}")
    for i in range(n):
        object_list[i] = json.loads(raw[i * m:i * m + lens[i]].decode())


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    """Broadcasts the JSON-serializable entries of ``object_list`` from ``src``, in place."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    dev = _object_device(pg) if device is None else _device(device)
    me = get_rank()
    data = _encode(list(object_list)) if me == src else b""
    size = tensor([len(data)], dtype=int64, device=dev)
    broadcast(size, src, group)
    n = int(size.cpu().tolist()[0])
    buf = tensor(np.frombuffer(data, dtype=np.uint8).copy() if me == src else np.zeros(n, np.uint8),
                 dtype=uint8, device=dev)
    if n:
        broadcast(buf, src, group)
    if me != src:
        vals = json.loads(buf.cpu().numpy().tobytes().decode())
        if len(vals) != len(object_list):
            raise ValueError(f"broadcast_object_list: src sent {len(vals)} objects, this rank's list has "
                             f"{len(object_list)}")
        object_list[:] = vals
