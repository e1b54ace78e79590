"""Placements (PyTorch's ``torch.distributed.tensor`` names): how a tensor's values lie over the
ranks of a 1-D device mesh. tinytorch has no DTensor: tensor-parallel layers hold plain local
tensors, and the placements only describe the inputs and outputs of the parallel styles
(:mod:`tinytorch.distributed.tensor.parallel`)."""
from __future__ import annotations

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """The base class of the placements. Two placements are equal when they are of one kind and
    their ``_fields`` (the attributes that tell placements of that kind apart) are equal."""

    _fields: tuple = ()

    def _key(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other) -> bool:
        return isinstance(other, type(self)) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._key())

    def is_shard(self, dim=None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self) -> bool:
        return False


class Shard(Placement):
    """The tensor is split along ``dim`` into one equal chunk per rank (rank i holds chunk i).

    Args:
        dim (int): the split dimension (negative counts from the end)."""

    _fields = ("dim",)

    def __init__(self, dim: int = 0) -> None:
        self.dim = int(dim)

    def is_shard(self, dim=None) -> bool:
        return dim is None or dim == self.dim

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"


class Replicate(Placement):
    """Every rank holds the whole tensor."""

    def is_replicate(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "Replicate()"


class Partial(Placement):
    """Every rank holds a partial value; the tensor is their reduction (``reduce_op``: "sum")."""

    _fields = ("reduce_op",)

    def __init__(self, reduce_op: str = "sum") -> None:
        if reduce_op != "sum":
            raise NotImplementedError(f"Partial: only reduce_op='sum' is supported, got {reduce_op!r}")
        self.reduce_op = reduce_op

    def is_partial(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"
