"""Placements (PyTorch's ``torch.distributed.tensor`` names): how a tensor's values lie over the
ranks of a 1-D device mesh. tinytorch has no DTensor: tensor-parallel layers hold plain local
tensors, and the placements only describe the inputs and outputs of the parallel styles
(:mod:`tinytorch.distributed.tensor.parallel`)."""
from __future__ import annotations

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """The base class of the placements."""

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

    def __init__(self, dim: int = 0) -> None:
        self.dim = int(dim)

    def is_shard(self, dim=None) -> bool:
        return dim is None or dim == self.dim

    def __eq__(self, other) -> bool:
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"


class Replicate(Placement):
    """Every rank holds the whole tensor."""

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"


class Partial(Placement):
    """Every rank holds a partial value; the tensor is their reduction (``reduce_op``: "sum")."""

    def __init__(self, reduce_op: str = "sum") -> None:
        if reduce_op != "sum":
            raise NotImplementedError(f"Partial: only reduce_op='sum' is supported, got {reduce_op!r}")
        self.reduce_op = reduce_op

    def is_partial(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return hash(("Partial", self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"
