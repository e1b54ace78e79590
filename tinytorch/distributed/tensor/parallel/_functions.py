"""The collectives of tensor parallelism along one tensor dimension, and the differentiable ops that
move activations between layouts (Megatron-LM's conjugate operators), as autograd Functions:

=========================  ==========================  =============================
op                         forward                     backward
=========================  ==========================  =============================
``copy_to_parallel``       identity ("f")              all-reduce
``reduce_from_parallel``   all-reduce ("g")            identity
``gather_from_parallel``   all-gather along dim        this rank's chunk
``scatter_to_parallel``    this rank's chunk           all-gather along dim
``gather_for_parallel``    all-gather along dim        reduce-scatter along dim
``reduce_scatter``         reduce-scatter along dim    all-gather along dim
=========================  ==========================  =============================

Every local tensor's gradient is exact for its layout: a replicated activation's gradient is the
whole gradient on every rank, a shard's that of the shard. A layer whose input gradient is only
a partial sum (a column-parallel Linear: each rank's weight rows give part of it) receives its
replicated input through ``copy_to_parallel`` (or ``gather_for_parallel`` from a sequence shard),
whose backward sums the parts. With no gradient needed (inference) the ops are the bare
collectives, reducing in place where the tensor is the layer's own fresh output.

The collectives are ``tinytorch.distributed``'s (MPI on CPU tensors, NCCL on CUDA tensors), over
the process group of a 1-D :class:`~tinytorch.distributed.DeviceMesh`."""
from __future__ import annotations

from typing import Any

from tinytorch._core.graph import is_grad_enabled
from tinytorch._tensor.creation import empty
from tinytorch._tensor.tensor import Tensor
from tinytorch.autograd.function import Function
from tinytorch.distributed import collectives as C


class MeshGroup:
    """The process group of a 1-D mesh with its size and this rank's place in it."""

    __slots__ = ("group", "size", "rank")

    def __init__(self, device_mesh) -> None:
        self.group = device_mesh.get_group()
        self.size = device_mesh.size()
        self.rank = device_mesh.get_local_rank()


def _dim(x: Tensor, dim: int) -> int:
    n = x.dim()
    if not -n <= dim < n:
        raise IndexError(f"tensor parallel: dimension {dim} is out of range for a tensor of shape {list(x.shape)}")
    return dim % n


def _shard_dim(x: Tensor, dim: int, mg: MeshGroup, op: str) -> tuple[int, int]:
    """``dim`` made non-negative and the size of one rank's shard along it, for ``op`` (named in the
    error when the dimension does not split evenly over the ranks)."""
    dim = _dim(x, dim)
    size = x.shape[dim]
    if size % mg.size:
        raise ValueError(f"tensor parallel: {op} of a tensor of shape {list(x.shape)}: dimension {dim} "
                         f"does not split into {mg.size} equal shards")
    return dim, size // mg.size


def _shares(a: Tensor, b: Tensor) -> bool:
    """Whether a's bytes lie inside b's (a view of it)."""
    lo, hi = b.data_ptr(), b.data_ptr() + b.numel() * b.element_size()
    return a.numel() > 0 and lo <= a.data_ptr() < max(hi, lo + 1)


# ---------------------------------------------------------------------------------- collectives
def all_reduce(x: Tensor, mg: MeshGroup, inplace: bool = False) -> Tensor:
    """The sum of x over the mesh's ranks (a new tensor unless ``inplace`` and x is contiguous)."""
    if inplace and x.is_contiguous():
        out = x
    else:
        out = x.contiguous()
        if out.data_ptr() == x.data_ptr():
            out = out.clone()
    C.all_reduce(out, group=mg.group)
    return out


def all_gather(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """Every rank's x concatenated along ``dim`` in rank order."""
    dim = _dim(x, dim)
    x = x.contiguous()
    flat = empty((mg.size,) + tuple(x.shape), dtype=x.dtype, device=x.device)
    C.all_gather_into_tensor(flat, x, group=mg.group)
    shape = list(x.shape)
    shape[dim] *= mg.size
    if dim == 0:
        return flat.view(shape)
    return flat.movedim(0, dim).reshape(shape)      # (..., N, s, ...) -> (..., N s, ...)


def chunk(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """This rank's chunk of x along ``dim`` (a contiguous copy)."""
    dim, s = _shard_dim(x, dim, mg, "chunk")
    part = x.narrow(dim, mg.rank * s, s).contiguous()
    return part.clone() if _shares(part, x) else part


def reduce_scatter(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """This rank's chunk along ``dim`` of the sum of x over the ranks."""
    dim, s = _shard_dim(x, dim, mg, "reduce-scatter")
    chunks = x.unflatten(dim, (mg.size, s)).movedim(dim, 0).contiguous()     # (N, ..., s, ...)
    out = empty(tuple(chunks.shape[1:]), dtype=x.dtype, device=x.device)
    C.reduce_scatter_tensor(out, chunks, group=mg.group)
    return out


# -------------------------------------------------------------------------- differentiable ops
def _differentiable(x: Tensor) -> bool:
    return is_grad_enabled() and x.requires_grad


class _CopyToParallel(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, mg: MeshGroup) -> Tensor:
        ctx.mg = mg
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor):
        return all_reduce(grad, ctx.mg), None


class _ReduceFromParallel(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, mg: MeshGroup) -> Tensor:
        return all_reduce(x, mg)

    @staticmethod
    def backward(ctx: Any, grad: Tensor):
        return grad, None


def _along_dim(name: str, forward_op, backward_op) -> type:
    """A Function over a shard dim: ``forward_op(x, dim, mg)`` forward, ``backward_op`` on the gradient
    (each of the four below is the other's adjoint)."""
    def forward(ctx: Any, x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
        ctx.dim, ctx.mg = dim, mg
        return forward_op(x, dim, mg)

    def backward(ctx: Any, grad: Tensor):
        return backward_op(grad, ctx.dim, ctx.mg), None, None
    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


_GatherFromParallel = _along_dim("_GatherFromParallel", all_gather, chunk)     # replicated gradient
_ScatterToParallel = _along_dim("_ScatterToParallel", chunk, all_gather)
_GatherForParallel = _along_dim("_GatherForParallel", all_gather, reduce_scatter)   # partial gradients
_ReduceScatter = _along_dim("_ReduceScatter", reduce_scatter, all_gather)


def copy_to_parallel(x: Tensor, mg: MeshGroup) -> Tensor:
    """Identity; the backward sums the ranks' partial gradients (Megatron's "f")."""
    return _CopyToParallel.apply(x, mg) if _differentiable(x) else x


def reduce_from_parallel(x: Tensor, mg: MeshGroup, inplace: bool = False) -> Tensor:
    """The sum of the ranks' partial values; the backward passes the gradient on (Megatron's "g").
    ``inplace``: x is a fresh output that may be overwritten (used when no gradient is recorded)."""
    return _ReduceFromParallel.apply(x, mg) if _differentiable(x) else all_reduce(x, mg, inplace)


def gather_from_parallel(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """The shards along ``dim`` gathered (to a replicated tensor whose gradient is replicated)."""
    return _GatherFromParallel.apply(x, dim, mg) if _differentiable(x) else all_gather(x, dim, mg)


def scatter_to_parallel(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """This rank's chunk along ``dim`` of a replicated tensor."""
    return _ScatterToParallel.apply(x, dim, mg) if _differentiable(x) else chunk(x, dim, mg)


def gather_for_parallel(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """The shards along ``dim`` gathered for a layer whose input gradient is partial (a
    column-parallel Linear after sequence parallelism): the backward reduce-scatters."""
    return _GatherForParallel.apply(x, dim, mg) if _differentiable(x) else all_gather(x, dim, mg)


def reduce_scatter_to_parallel(x: Tensor, dim: int, mg: MeshGroup) -> Tensor:
    """This rank's chunk along ``dim`` of the sum of the ranks' partial values."""
    return _ReduceScatter.apply(x, dim, mg) if _differentiable(x) else reduce_scatter(x, dim, mg)
