"""``ShardedTensor``: a tensor split on dim 0 across the ranks of a process group, in FSDP's layout.

With ``n`` rows over ``world`` ranks, every rank stores ``c = ceil(n / world)`` rows (the all-gather
and reduce-scatter need equal chunks) and owns the first ``min(c, n - rank * c)`` of them (possibly
none): rank ``r`` holds global rows ``[r * c, min((r + 1) * c, n))``. ``to_local()`` is that owned
part (what ``module.parameters()`` of a sharded module return, and what optimizers step), a view of
the padded storage. This is what PyTorch represents with a ``DTensor`` placed ``Shard(0)``; tinytorch
keeps the local tensors plain and uses this small class to describe them in state dicts."""
from __future__ import annotations

import math
from typing import Optional

from tinytorch._tensor.creation import empty, zeros
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed import collectives as _coll
from tinytorch.distributed import process_group as _pg
from tinytorch._tensor.tensor import Tensor

__all__ = ["ShardedTensor", "shard_rows"]


def shard_rows(n: int, world: int, rank: int) -> tuple:
    """``(chunk, start, stop)``: the rows each rank stores (``chunk = ceil(n / world)``) and the
    global rows ``[start, stop)`` that ``rank`` owns."""
    chunk = math.ceil(n / world) if n else 0
    start = min(rank * chunk, n)
    return chunk, start, min(start + chunk, n)


class ShardedTensor:
    """A tensor of ``global_shape`` sharded on dim 0 over ``process_group`` (FSDP's layout, see the
    module docstring); ``local`` is this rank's rows.

    Args:
        local (Tensor): this rank's rows, ``stop - start`` of them.
        global_shape (tuple of int): the shape of the whole tensor.
        process_group (ProcessGroup, optional): the group it is sharded over (default: the world).
    """

    def __init__(self, local: Tensor, global_shape, process_group=None) -> None:
        self._local = local
        self._global_shape = tuple(int(s) for s in global_shape)
        self.process_group = process_group if process_group is not None else _pg.group.WORLD
        world, rank = _pg.get_world_size(self.process_group), _pg.get_rank(self.process_group)
        if not self._global_shape:
            raise ValueError("ShardedTensor: a 0-dim tensor cannot be sharded on dim 0")
        self.chunk, self.start, self.stop = shard_rows(self._global_shape[0], world, rank)
        want = (self.stop - self.start,) + self._global_shape[1:]
        if tuple(local.shape) != want:
            raise ValueError(f"ShardedTensor: rank {rank} of {world} owns rows [{self.start}, {self.stop}) of "
                             f"{list(self._global_shape)}, so its local tensor must be {list(want)}, got "
                             f"{list(local.shape)}")

    # ---- what a tensor would answer
    @property
    def shape(self) -> tuple:
        """The global shape."""
        return self._global_shape

    def size(self, dim: Optional[int] = None):
        return self._global_shape if dim is None else self._global_shape[dim]

    def dim(self) -> int:
        return len(self._global_shape)

    @property
    def ndim(self) -> int:
        return len(self._global_shape)

    @property
    def dtype(self):
        return self._local.dtype

    @property
    def device(self):
        return self._local.device

    def numel(self) -> int:
        return math.prod(self._global_shape)

    def to_local(self) -> Tensor:
        """This rank's rows (shares storage with the sharded parameter or optimizer state)."""
        return self._local

    def full_tensor(self) -> Tensor:
        """The whole tensor on every rank (a collective: every rank of the group calls it)."""
        world = _pg.get_world_size(self.process_group)
        n, inner = self._global_shape[0], self._global_shape[1:]
        with no_grad():
            padded = zeros((self.chunk,) + inner, dtype=self.dtype, device=self.device)
            if self.stop > self.start:
                padded.narrow(0, 0, self.stop - self.start).copy_(self._local.detach())
            out = empty((world * self.chunk,) + inner, dtype=self.dtype, device=self.device)
            _coll.all_gather_into_tensor(out, padded, group=self.process_group)
            return out.narrow(0, 0, n).contiguous()

    def cpu(self) -> "ShardedTensor":
        return ShardedTensor(self._local.cpu(), self._global_shape, self.process_group)

    def __repr__(self) -> str:
        return (f"ShardedTensor(global_shape={list(self._global_shape)}, rows=[{self.start}, {self.stop}), "
                f"dtype={self.dtype}, device={self.device})")
