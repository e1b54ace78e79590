"""``FSDPParam``: one parameter managed by ``fully_shard`` — its global shape, the rows this rank
owns, its padded local storage, and the places in the module tree that refer to it."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.creation import zeros
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor, shard_rows
from tinytorch.nn.parameter import Parameter
from tinytorch._tensor.tensor import Tensor


class FSDPParam:
    """Shards ``param`` on dim 0 (see ``_sharded_tensor.py`` for the layout) and registers the
    local shard, an ``nn.Parameter``, wherever the module tree referred to ``param``.

    ``padded`` holds ``chunk`` rows (this rank's rows, then zeros); ``sharded_param`` is a view of
    its first ``stop - start`` rows, so the optimizer's in-place steps land in ``padded``, which is
    the all-gather's input."""

    def __init__(self, param: Parameter, locations: list, process_group, world: int, rank: int) -> None:
        self.locations = locations                 # [(module, attribute name)]
        self.fqn = ""                              # set by the group: its name under the module sharded
        self.process_group = process_group
        self.world = world
        self.global_shape = tuple(param.shape)
        self.orig_dtype = param.dtype
        self.device = param.device
        self.requires_grad = param.requires_grad
        n = self.global_shape[0]
        self.inner = self.global_shape[1:]
        self.inner_numel = 1
        for s in self.inner:
            self.inner_numel *= s
        self.chunk, self.start, self.stop = shard_rows(n, world, rank)
        self.local_rows = self.stop - self.start
        self.padded_numel = self.chunk * self.inner_numel   # this parameter's part of the flat all-gather input
        with no_grad():
            padded = zeros((self.chunk,) + self.inner, dtype=self.orig_dtype, device=self.device)
            if self.local_rows:
                padded.narrow(0, 0, self.local_rows).copy_(param.detach().narrow(0, self.start, self.local_rows))
        self.padded = padded
        self.sharded_param = Parameter(padded.narrow(0, 0, self.local_rows), requires_grad=param.requires_grad)
        # what clip_grad_norm_ (and anything else that reduces over shards) needs to know
        self.sharded_param._shard_process_group = process_group
        self.sharded_param._fsdp_param = self
        for module, name in locations:
            module._parameters[name] = self.sharded_param

    def padded_local(self) -> Tensor:
        """This rank's ``chunk`` rows for the all-gather: ``padded`` itself, unless the parameter's
        data was replaced (``p.data = ...``), in which case the new data is copied in."""
        p = self.sharded_param
        if p._impl.storage_ptr != self.padded._impl.storage_ptr or p._impl.storage_offset != 0:
            with no_grad():
                padded = zeros((self.chunk,) + self.inner, dtype=p.dtype, device=p.device)
                if self.local_rows:
                    padded.narrow(0, 0, self.local_rows).copy_(p.detach())
            self.padded = padded
            p.data = padded.narrow(0, 0, self.local_rows)
        return self.padded

    def unsharded_from(self, gathered_2d: Tensor, offset: int) -> Tensor:
        """This parameter's full tensor out of the all-gather output viewed as ``[world, S]``
        (each rank's flat chunk is a row; this parameter is columns ``[offset, offset + padded_numel)``)."""
        seg = gathered_2d.narrow(1, offset, self.padded_numel).contiguous()
        return seg.view((self.world * self.chunk,) + self.inner).narrow(0, 0, self.global_shape[0])

    def padded_grad_2d(self, grad: Optional[Tensor], dtype) -> Tensor:
        """The unsharded gradient zero-padded to ``world * chunk`` rows, as ``[world, padded_numel]``
        (row r: what rank r's shard receives), in ``dtype``."""
        out = zeros((self.world * self.chunk,) + self.inner, dtype=dtype, device=self.device)
        if grad is not None and self.global_shape[0]:
            out.narrow(0, 0, self.global_shape[0]).copy_(grad)
        return out.view(self.world, self.padded_numel)

    def sharded_state(self, local: Tensor) -> ShardedTensor:
        """``local`` (this rank's rows of a tensor shaped like the parameter) described globally."""
        return ShardedTensor(local, self.global_shape, self.process_group)
