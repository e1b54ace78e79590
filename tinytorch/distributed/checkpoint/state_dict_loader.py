"""``dcp.load``: fills a state dict in place from a checkpoint directory, resharding on the way."""
from __future__ import annotations

import json
import os
from typing import Any, Dict

from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed.checkpoint import _format as fmt
from tinytorch.distributed.checkpoint._utils import agree, distributed
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor
from tinytorch._tensor.tensor import Tensor

__all__ = ["load"]


def _read_index(path: str) -> dict:
    name = os.path.join(path, fmt.INDEX)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"dcp.load: checkpoint_id {path!r} is not a directory")
    if not os.path.exists(name):
        raise FileNotFoundError(f"dcp.load: checkpoint_id {path!r} has no {fmt.INDEX} (not a finished "
                                "tinytorch distributed checkpoint)")
    with open(name, encoding="utf-8") as f:
        try:
            index = json.load(f)
        except ValueError as e:
            raise ValueError(f"dcp.load: {name} is not valid JSON ({e})") from None
    if not isinstance(index, dict) or index.get("format") != fmt.FORMAT or not isinstance(index.get("tensors"), dict):
        raise ValueError(f"dcp.load: {name} is not a {fmt.FORMAT} index")
    if index.get("version") != fmt.VERSION:
        raise ValueError(f"dcp.load: {name} has version {index.get('version')}; this tinytorch reads version "
                         f"{fmt.VERSION}")
    return index


def _mismatch(flat: dict, index: dict, path: str) -> str:
    """Missing and unexpected names and shape mismatches, or "" when the checkpoint fits."""
    tensors, values = index["tensors"], index.get("values", {})
    missing, wrong, problems = [], [], []
    for key, (_, v) in flat.items():
        if isinstance(v, (Tensor, ShardedTensor)):
            if key not in tensors:
                (wrong if key in values else missing).append(key)
                continue
            got, want = list(v.shape), tensors[key]["shape"]
            if got != want:
                problems.append(f"size mismatch for {key}: the checkpoint has shape {want}, the state_dict {got}")
        elif key not in values:
            (wrong if key in tensors else missing).append(key)
    # names the checkpoint has under a top-level entry of state_dict that state_dict lacks: another
    # model's checkpoint (top-level entries state_dict leaves out, e.g. "optim", are not loaded)
    tops = {str(p[0]) for p, _ in flat.values() if len(p) > 1}
    unexpected = [k for k in list(tensors) + list(values)
                  if k not in flat and k.split(".", 1)[0] in tops]
    out = []
    if missing:
        out.append(f"missing keys (in state_dict, not in the checkpoint): {missing}")
    if unexpected:
        out.append(f"unexpected keys (in the checkpoint, not in state_dict): {unexpected}")
    if wrong:
        out.append(f"keys that are tensors on one side and values on the other: {wrong}")
    out += problems
    if not out:
        return ""
    return f"dcp.load: the checkpoint at {path} does not match state_dict:\n\t" + "\n\t".join(out)


def load(state_dict: Dict[str, Any], *, checkpoint_id, storage_reader=None, planner=None, process_group=None,
         no_dist: bool = False) -> None:
    """Loads the checkpoint in ``checkpoint_id`` into ``state_dict`` in place, on any world size:
    each :class:`ShardedTensor` reads the rows its local shard needs from whichever ranks' files
    hold them (only those bytes), plain tensors read the whole tensor, and non-tensor values are
    replaced. Names, kinds and global shapes are checked first (missing names; names of the
    checkpoint under a top-level entry of ``state_dict`` that it lacks; shape mismatches), and
    an error on any rank raises on every rank. Then apply the loaded state with
    ``set_model_state_dict`` / ``set_optimizer_state_dict``.

    Args:
        state_dict (dict): the template, e.g. ``{"model": get_model_state_dict(m), "optim": ...}``.
        checkpoint_id (str or PathLike): the directory ``dcp.save`` wrote.
        storage_reader, planner: not implemented; must be None.
        process_group: the group loading (default: the world).
        no_dist (bool): load in this process alone (no collectives)."""
    if storage_reader is not None or planner is not None:
        raise NotImplementedError("dcp.load: storage_reader= and planner= are not implemented")
    if checkpoint_id is None:
        raise ValueError("dcp.load: checkpoint_id (a directory) is required")
    path = os.fspath(checkpoint_id)
    use_dist = distributed(process_group) and not no_dist
    group = process_group if use_dist else None

    def check():
        flat = fmt.flatten(state_dict, "dcp.load")
        index = _read_index(path)
        problem = _mismatch(flat, index, path)
        if problem:
            raise RuntimeError(problem)
        return flat, index
    err, flat, index = None, None, None
    try:
        flat, index = check()
    except (OSError, ValueError, RuntimeError, TypeError) as e:
        err = e
    if use_dist:
        agree(err, group)
    elif err is not None:
        raise err

    readers: dict = {}

    def reader(name: str) -> fmt.FileReader:
        if name not in readers:
            if os.path.basename(name) != name:
                raise ValueError(f"dcp.load: the index names a file outside the checkpoint: {name!r}")
            readers[name] = fmt.FileReader(os.path.join(path, name))
        return readers[name]

    err = None
    try:
        with no_grad():
            for key, (p, v) in flat.items():
                if isinstance(v, (Tensor, ShardedTensor)):
                    _fill(key, v, index["tensors"][key], reader)
                else:
                    fmt.set_at(state_dict, p, index["values"][key])
    except (OSError, ValueError, RuntimeError) as e:
        err = e
    finally:
        for r in readers.values():
            r.close()
    if use_dist:
        agree(err, group)
    elif err is not None:
        raise err


def _fill(key: str, target, entry: dict, reader) -> None:
    """Copies the checkpoint rows that ``target`` (this rank's part) covers into it."""
    if isinstance(target, ShardedTensor):
        local, start, stop = target.to_local(), target.start, target.stop
    else:
        local = target
        start, stop = (0, int(target.shape[0])) if target.dim() else (0, 0)
    if not target.dim():
        chunk = entry["chunks"][0]
        local.copy_(reader(chunk["file"]).rows(key, 0, 0, True).to(local.device))
        return
    for chunk in entry["chunks"]:
        a, b = chunk["rows"]
        lo, hi = max(a, start), min(b, stop)
        if lo >= hi:
            continue
        rows = reader(chunk["file"]).rows(key, lo - a, hi - a, False)
        local.narrow(0, lo - start, hi - lo).copy_(rows.to(local.device))
