"""Tensor collectives over process groups (torch.distributed's names and semantics): all_reduce,
broadcast, reduce, all_gather(_into_tensor), reduce_scatter_tensor, send/recv, barrier, with the
``Work`` handle of asynchronous ones and the checks every call makes (tensor device and layout,
cross-rank agreement on dtype and shape). The groups themselves are in ``process_group.py``.
"""
from __future__ import annotations

import enum
import os
from datetime import timedelta
from typing import Optional

from tinytorch._tensor.creation import empty
from tinytorch._core.dtype import DTYPES
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed.process_group import GroupMember, ProcessGroup, _pg
from tinytorch._tensor.tensor import Tensor


class ReduceOp(enum.IntEnum):
    """Reduction operations (values are NCCL's ncclRedOp_t)."""
    SUM = 0
    PRODUCT = 1
    MAX = 2
    MIN = 3
    AVG = 4


class Work:
    """Handle of an asynchronous collective (``async_op=True``): ``wait()``, ``is_completed()``."""

    def __init__(self, impl=None, result=None) -> None:
        self._impl = impl
        self._result = result
        self._done = impl is None
        self._exc: Optional[BaseException] = None

    def wait(self, timeout: Optional[timedelta] = None) -> bool:
        if not self._done:
            try:
                self._impl.wait(timeout)
            except BaseException as e:
                self._exc = e
                self._done = True
                raise
            self._done = True
        elif self._exc is not None:
            raise self._exc
        return True

    def is_completed(self) -> bool:
        if self._done:
            return True
        return bool(self._impl.is_completed())

    def is_success(self) -> bool:
        return self.is_completed() and self._exc is None

    def exception(self):
        return self._exc

    def result(self) -> list:
        return list(self._result or [])

    def synchronize(self) -> None:
        self.wait()


def _debug_level() -> str:
    return os.environ.get("TINYTORCH_DISTRIBUTED_DEBUG", os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF")).upper()


def _check_every_call(pg: ProcessGroup) -> bool:
    """MPI (CPU) checks every call: a metadata exchange costs little next to the collective. NCCL
    checks the first call of each op, and every call with TINYTORCH_DISTRIBUTED_DEBUG=INFO or DETAIL
    (as PyTorch's), since there the exchange is a host round trip per collective."""
    return pg.name() == "mpi" or _debug_level() in ("INFO", "DETAIL")


# ---------------------------------------------------------------------------- checks
def _check_tensor(pg: ProcessGroup, t, what: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a tinytorch.Tensor, got {type(t).__name__}")
    if pg.name() == "nccl" and not t.is_cuda:
        raise ValueError(f"{what}: the NCCL backend needs CUDA tensors, got a tensor on {t.device}; move it with "
                         ".cuda() or use the mpi backend for CPU tensors")
    if pg.name() == "mpi" and not t.is_cpu:
        raise ValueError(f"{what}: the MPI backend needs CPU tensors, got a tensor on {t.device}")
    if not t.is_contiguous():
        raise ValueError(f"{what}: tensors must be contiguous")


def _check_world_sized(pg: ProcessGroup, what: str, input, output, large: str) -> None:
    """Checks both tensors, and that the ``large`` one ("input" or "output") has world_size x the
    other's elements, in its dtype (all_gather_into_tensor, reduce_scatter_tensor)."""
    _check_tensor(pg, input, what)
    _check_tensor(pg, output, what)
    big, small = (output, input) if large == "output" else (input, output)
    if big.numel() != small.numel() * pg.size() or output.dtype != input.dtype:
        other = "input" if large == "output" else "output"
        raise ValueError(f"{what}: {large} must have world_size ({pg.size()}) x the {other}'s "
                         f"{small.numel()} elements and its dtype, got {big.numel()} {big.dtype}")


def _check_same(pg: ProcessGroup, op: str, t, extra: int = 0) -> None:
    """Cross-rank fingerprint check of (op, dtype, shape, root/op): on every call or once per
    (group, op), see _check_every_call. Raises on every rank, naming each rank's tensor."""
    key = (op,)
    if key in pg._checked and not _check_every_call(pg):
        return
    pg._checked.add(key)
    desc = [t._impl.dtype_code, t.dim(), extra] + list(t.shape)
    rows = pg._impl.exchange_meta(op, desc)
    if any(r != rows[0] for r in rows):
        def fmt(r):
            return f"{DTYPES[r[0]].name} {list(r[3:3 + r[1]])}" + (f" (root/op {r[2]})" if r[2] != rows[0][2] else "")
        detail = ", ".join(f"rank {pg._ranks[i]} has {fmt(r)}" for i, r in enumerate(rows))
        raise ValueError(f"{op}: tensors differ across ranks: {detail}")


def _group_rank(pg: ProcessGroup, global_rank: int, what: str) -> int:
    if global_rank not in pg._ranks:
        raise ValueError(f"{what}: rank {global_rank} is not in the group {pg._ranks}")
    return pg._ranks.index(global_rank)


def _finish(work, async_op: bool, result=None):
    w = Work(work, result)
    if async_op:
        return w
    w.wait()
    return None


# ---------------------------------------------------------------------------- collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces ``tensor`` across ranks in place; every rank gets the result."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    _check_tensor(pg, tensor, "all_reduce")
    op = ReduceOp(op)
    _check_same(pg, "all_reduce", tensor, int(op))
    return _finish(pg._impl.all_reduce(tensor, op), async_op, [tensor])


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False, group_src: Optional[int] = None):
    """Broadcasts ``tensor`` from global rank ``src`` to every rank of the group."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    _check_tensor(pg, tensor, "broadcast")
    root = group_src if group_src is not None else _group_rank(pg, src, "broadcast")
    _check_same(pg, "broadcast", tensor, root)
    return _finish(pg._impl.broadcast(tensor, root), async_op, [tensor])


def reduce(tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces ``tensor`` onto global rank ``dst`` (other ranks' tensors are left unchanged)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    _check_tensor(pg, tensor, "reduce")
    root = _group_rank(pg, dst, "reduce")
    op = ReduceOp(op)
    _check_same(pg, "reduce", tensor, root * 8 + int(op))
    return _finish(pg._impl.reduce(tensor, root, op), async_op, [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Gathers every rank's ``input_tensor`` into ``output_tensor`` (concatenated along dim 0, or
    stacked: ``output_tensor.numel() == world_size * input_tensor.numel()``)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    _check_world_sized(pg, "all_gather_into_tensor", input_tensor, output_tensor, "output")
    _check_same(pg, "all_gather", input_tensor)
    return _finish(pg._impl.all_gather(output_tensor, input_tensor), async_op, [output_tensor])


def all_gather(tensor_list: list, tensor, group=None, async_op: bool = False):
    """Gathers every rank's ``tensor`` into ``tensor_list`` (one tensor per rank)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    _check_tensor(pg, tensor, "all_gather")
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group has {pg.size()} ranks")
    for o in tensor_list:
        if tuple(o.shape) != tuple(tensor.shape) or o.dtype != tensor.dtype:
            raise ValueError(f"all_gather: every output tensor must be {tensor.dtype} {list(tensor.shape)} like the "
                             f"input, got {o.dtype} {list(o.shape)}")
    _check_same(pg, "all_gather", tensor)
    flat = empty((pg.size(),) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    inner = pg._impl.all_gather(flat, tensor)

    class _Copy:
        def wait(self, timeout=None):
            inner.wait(timeout)
            with no_grad():
                for i, o in enumerate(tensor_list):
                    o._impl.copy_(flat[i]._impl, False)

        def is_completed(self):
            return inner.is_completed()
    return _finish(_Copy(), async_op, tensor_list)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces ``input`` across ranks and scatters it: rank i gets the i-th chunk (dim 0) in ``output``."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    _check_world_sized(pg, "reduce_scatter_tensor", input, output, "input")
    op = ReduceOp(op)
    _check_same(pg, "reduce_scatter", input, int(op))
    return _finish(pg._impl.reduce_scatter(output, input, op), async_op, [output])


def send(tensor, dst: int, group=None, tag: int = 0, async_op: bool = False):
    """Sends ``tensor`` to global rank ``dst`` (blocking unless ``async_op``)."""
    pg = _pg(group)
    _check_tensor(pg, tensor, "send")
    peer = _group_rank(pg, dst, "send")
    if peer == pg.rank():
        raise ValueError("send: invalid destination rank: should not be the same as the rank of the current process")
    return _finish(pg._impl.send(tensor, peer, tag), async_op, [tensor])


def recv(tensor, src: Optional[int] = None, group=None, tag: int = 0, async_op: bool = False):
    """Receives into ``tensor`` from global rank ``src`` (any rank when None, MPI only). Returns the
    sender's rank (or a Work with ``async_op``)."""
    pg = _pg(group)
    _check_tensor(pg, tensor, "recv")
    peer = None if src is None else _group_rank(pg, src, "recv")
    impl = pg._impl.recv(tensor, peer, tag)
    if async_op:
        return Work(impl, [tensor])
    Work(impl).wait()
    sender = impl.source if getattr(impl, "source", None) is not None else peer
    return pg._ranks[sender]


def isend(tensor, dst: int, group=None, tag: int = 0) -> Work:
    return send(tensor, dst, group, tag, async_op=True)


def irecv(tensor, src: Optional[int] = None, group=None, tag: int = 0) -> Work:
    return recv(tensor, src, group, tag, async_op=True)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Synchronizes every rank of the group."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    pg = _pg(group)
    return _finish(pg._impl.barrier(), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False):
    barrier(group)


__all__ = ["ReduceOp", "Work", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter_tensor", "send", "recv", "isend", "irecv", "barrier", "monitored_barrier"]
