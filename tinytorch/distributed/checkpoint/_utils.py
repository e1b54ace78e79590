"""Helpers shared by the state-dict and save/load halves of ``tinytorch.distributed.checkpoint``."""
from __future__ import annotations

from typing import Optional

from tinytorch.distributed import process_group as _pg
from tinytorch.distributed.object_collectives import all_gather_object

_ERRORS = {"ValueError": ValueError, "RuntimeError": RuntimeError, "KeyError": KeyError, "TypeError": TypeError,
           "FileNotFoundError": FileNotFoundError, "OSError": OSError}


def distributed(group=None) -> bool:
    return _pg.is_initialized() and _pg.get_world_size(group) > 1


def rank_and_world(group=None) -> tuple:
    if not _pg.is_initialized():
        return 0, 1
    return _pg.get_rank(group), _pg.get_world_size(group)


def agree(error: Optional[BaseException], group=None) -> None:
    """A collective decision: when any rank has an error, every rank raises it (the first failing
    rank's, of its type, naming the rank), so no rank goes on into a collective the others left."""
    mine = None if error is None else [type(error).__name__, str(error)]
    if not distributed(group):
        if error is not None:
            raise error
        return
    everyone: list = [None] * _pg.get_world_size(group)
    all_gather_object(everyone, mine, group=group)
    for r, e in enumerate(everyone):
        if e is not None:
            if error is not None and r == _pg.get_rank(group):
                raise error
            cls = _ERRORS.get(e[0], RuntimeError)
            raise cls(f"{e[1]} (raised on rank {r})")


def run_agreed(fn, group=None):
    """``fn()``, with its exception (if any rank's raises) raised on every rank."""
    try:
        out, err = fn(), None
    except (ValueError, RuntimeError, KeyError, TypeError, OSError) as e:
        out, err = None, e
    agree(err, group)
    return out
