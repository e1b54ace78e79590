"""``dcp.save``: every rank writes its shards; rank 0 writes the index (see ``_format.py``)."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

from tinytorch.distributed.checkpoint import _format as fmt
from tinytorch.distributed.checkpoint._utils import agree, distributed, rank_and_world
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor
from tinytorch.distributed.object_collectives import all_gather_object
from tinytorch.serialization import save as _save_file
from tinytorch._tensor.tensor import Tensor

__all__ = ["save"]


def _check_plan(everyone: list, what: str) -> Optional[str]:
    """Every rank must hold the same keys, kinds, global shapes and dtypes, and the sharded rows
    must tile each tensor; returns the first problem (the same verdict on every rank)."""
    base = {e[0]: e for e in everyone[0]}
    for r, entries in enumerate(everyone):
        keys = [e[0] for e in entries]
        if set(keys) != set(base):
            extra, lack = sorted(set(keys) - set(base)), sorted(set(base) - set(keys))
            return (f"{what}: rank {r}'s state_dict has other keys than rank 0's (only on rank {r}: {extra[:8]}, "
                    f"only on rank 0: {lack[:8]}); every rank must save the same state_dict")
        for e in entries:
            b = base[e[0]]
            if e[1:4] != b[1:4]:
                return (f"{what}: {e[0]!r} is {e[1]} {e[2]} {e[3]} on rank {r} but {b[1]} {b[2]} {b[3]} on rank 0")
    maps = [{e[0]: e for e in entries} for entries in everyone]
    for key, e in base.items():
        if e[1] != "sharded":
            continue
        spans = sorted(tuple(m[key][4]) for m in maps if m[key][4][1] > m[key][4][0])
        pos = 0
        for a, b in spans:
            if a != pos:
                return (f"{what}: the shards of {key!r} do not tile its {e[2][0]} rows (rows {pos}..{a} missing "
                        "or overlapping)")
            pos = b
        if pos != e[2][0]:
            return f"{what}: the shards of {key!r} cover rows [0, {pos}) of {e[2][0]}"
    return None


def save(state_dict: Dict[str, Any], *, checkpoint_id, storage_writer=None, planner=None, process_group=None,
         no_dist: bool = False) -> dict:
    """Saves a (sharded) state dict into the directory ``checkpoint_id``: each rank writes the
    rows it owns of every :class:`ShardedTensor` to ``__<rank>_0.safetensors`` (rank 0 also the
    plain, replicated tensors), then rank 0 writes ``metadata.json`` (names, global shapes, dtypes,
    each rank's row ranges, and the non-tensor values as JSON). Every rank calls it with the same
    keys; a problem on any rank (different keys, a failed write) raises on all of them.

    Args:
        state_dict (dict): e.g. ``{"model": get_model_state_dict(m), "optim": get_optimizer_state_dict(m, opt)}``.
        checkpoint_id (str or PathLike): the directory (created if missing).
        storage_writer, planner: not implemented; must be None.
        process_group: the group saving (default: the world).
        no_dist (bool): save from this process alone (no collectives).

    Returns:
        the index (the content of ``metadata.json``)."""
    if storage_writer is not None or planner is not None:
        raise NotImplementedError("dcp.save: storage_writer= and planner= are not implemented (files go to "
                                  "checkpoint_id)")
    if checkpoint_id is None:
        raise ValueError("dcp.save: checkpoint_id (a directory) is required")
    path = os.fspath(checkpoint_id)
    use_dist = distributed(process_group) and not no_dist
    rank, world = rank_and_world(process_group) if use_dist else (0, 1)
    group = process_group if use_dist else None

    err, flat = None, {}
    try:
        flat = fmt.flatten(state_dict, "dcp.save")
    except (TypeError, ValueError) as e:
        err = e
    if use_dist:
        agree(err, group)
    elif err is not None:
        raise err
    mine, tensors, values = [], {}, {}
    for key, (_, v) in flat.items():
        if isinstance(v, ShardedTensor):
            mine.append([key, "sharded", list(v.shape), v.dtype.name, [v.start, v.stop]])
            if v.stop > v.start:
                tensors[key] = v.to_local()
        elif isinstance(v, Tensor):
            rows = [0, int(v.shape[0])] if v.dim() else None
            mine.append([key, "replicated", list(v.shape), v.dtype.name, rows])
            if rank == 0:
                tensors[key] = v
        else:
            values[key] = v
    everyone = [mine]
    if use_dist:
        everyone = [None] * world
        all_gather_object(everyone, mine, group=group)
    problem = _check_plan(everyone, "dcp.save")
    if problem is not None:
        raise ValueError(problem)          # every rank reached the same verdict from the same data

    err = None
    try:
        os.makedirs(path, exist_ok=True)
        fname = os.path.join(path, fmt.rank_file(rank))
        _save_file({k: t.detach().cpu().contiguous() for k, t in tensors.items()}, fname + ".tmp")
        os.replace(fname + ".tmp", fname)
    except OSError as e:
        err = OSError(f"dcp.save: rank {rank} could not write its shard file in {path}: {e}")
    if use_dist:
        agree(err, group)
    elif err is not None:
        raise err

    index = {"format": fmt.FORMAT, "version": fmt.VERSION, "world_size": world, "tensors": {}, "values": values}
    for key, kind, shape, dtype, rows in everyone[0]:
        chunks = []
        if kind == "replicated":
            chunks.append({"file": fmt.rank_file(0), "rows": rows})
        else:
            for r, entries in enumerate(everyone):
                e = next(x for x in entries if x[0] == key)
                if e[4][1] > e[4][0]:
                    chunks.append({"file": fmt.rank_file(r), "rows": e[4]})
        index["tensors"][key] = {"shape": shape, "dtype": dtype, "chunks": chunks}
    err = None
    if rank == 0:
        try:
            tmp = os.path.join(path, fmt.INDEX + ".tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(index, f, indent=1)
            os.replace(tmp, os.path.join(path, fmt.INDEX))
        except OSError as e:
            err = OSError(f"dcp.save: rank 0 could not write {fmt.INDEX} in {path}: {e}")
    if use_dist:
        agree(err, group)                  # also: nobody returns before the index exists
    elif err is not None:
        raise err
    return index
