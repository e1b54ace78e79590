"""Batch normalization: BatchNorm1d/2d/3d, LazyBatchNorm1d/2d/3d (``num_features`` read from the
first input; see lazy.py for the mechanism) and SyncBatchNorm. As PyTorch's, the lazy layers
default to ``affine=True`` and ``track_running_stats=True``."""
from __future__ import annotations

from typing import Any, Optional

from tinytorch._core.dtype import int64
from tinytorch._tensor.creation import ones, tensor, zeros
from tinytorch._tensor.tensor import Tensor
from tinytorch.autograd.function import Function
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules._doc_notes import common_notes, fill_doc, norm_notes
from tinytorch.nn.modules.lazy import LazyModuleMixin, lazy_class, placeholders
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.normalization import _init_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class _NormBase(Module):
    """The affine parameters and running statistics of BatchNorm and InstanceNorm."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: _device_t = None, dtype: _dtype_t = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _init_affine(self, affine, num_features, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _ranks: tuple = ()

    def forward(self, x: Tensor) -> Tensor:
        check_input(self, x, self._ranks, 1, self.num_features, "features" if x.dim() == 2 else "channels",
                    rank_error=ValueError)
        use_batch = self.training or self.running_mean is None
        momentum = self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        return F.batch_norm(x, self.running_mean if self.track_running_stats else None,
                            self.running_var if self.track_running_stats else None, self.weight, self.bias,
                            use_batch, momentum if momentum is not None else 0.0, self.eps)


@fill_doc(norm_notes)
class BatchNorm1d(_BatchNorm):
    """Applies Batch Normalization over a 2D or 3D input.

    Batch normalization over (N, C) or (N, C, L) input.

    Args:
        {batch_norm_args}"""
    _ranks = (2, 3)


@fill_doc(norm_notes)
class BatchNorm2d(_BatchNorm):
    """Applies Batch Normalization over a 4D input (a mini-batch of 2D inputs with additional channel
    dimension).

    Batch normalization over (N, C, H, W) input.

    Args:
        {batch_norm_args}"""
    _ranks = (4,)


@fill_doc(norm_notes)
class BatchNorm3d(_BatchNorm):
    """Applies Batch Normalization over a 5D input (a mini-batch of 3D inputs with additional channel
    dimension).

    Batch normalization over (N, C, D, H, W) input.

    Args:
        {batch_norm_args}"""
    _ranks = (5,)


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: _device_t = None, dtype: _dtype_t = None, *,
                 bias: bool = True) -> None:
        # the base builds no parameters or statistics (0 features, affine and statistics off) ...
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        UninitializedParameter, UninitializedBuffer = placeholders()
        # ... then the placeholders take their places
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def _channels(self, input: Tensor) -> int:
        return input.shape[1]

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = self._channels(input)
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None:
                        t.materialize((self.num_features,))
                self.reset_parameters()
        elif self.num_features == 0:
            # nothing to materialize (affine and statistics off): PyTorch leaves num_features at 0 and
            # skips its channel check; tinytorch's layers check it, so take it from the input
            self.num_features = self._channels(input)


def _lazy_norm_class(eager: type, mixin: type, summary: str) -> type:
    """``Lazy<eager>`` of the lazy BatchNorm or InstanceNorm base: ``summary``, then PyTorch's Args."""
    return lazy_class(eager, mixin, eager.__module__, f"""{summary}

    ``{eager.__name__}`` whose ``num_features`` is read from the first input.

    Args:
        {norm_notes["lazy_norm_args"]}""")


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_norm_class(c, _LazyNormBase, f"A :class:`torch.nn.{c.__name__}` module with lazy initialization.")
    for c in (BatchNorm1d, BatchNorm2d, BatchNorm3d))


# SyncBatchNorm: the training statistics are those of the whole global batch, all-reduced across
# the ranks of a ``tinytorch.distributed`` process group. Each rank all-reduces its (per-channel
# sum, element count), then its per-channel sum of squared deviations from the global mean (two
# passes: steadier than E[x^2] - E[x]^2 in float32), so every rank normalizes with the same mean
# and biased variance and updates its running statistics with the global ones. The all-reduce is
# differentiable (its backward all-reduces the gradient), so the input gradient of each rank is
# that of the sum of all ranks' losses, as PyTorch's ``sync_batch_norm`` backward. Without an
# initialized process group, with one rank, or in eval mode it is ``BatchNorm``.
#
# Difference from PyTorch: PyTorch raises ValueError for CPU input in training under an
# initialized process group (its kernel is GPU-only); tinytorch synchronizes CPU tensors too
# (MPI backend).
class _AllReduceSum(Function):
    """Sum over the ranks of ``group``; the gradient of every rank's input is the sum of the
    ranks' output gradients (each rank's loss depends on every rank's input)."""

    @staticmethod
    def forward(ctx: Any, t: Tensor, group: Any) -> Tensor:
        from tinytorch import distributed as dist
        ctx.group = group
        out = t.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor):
        from tinytorch import distributed as dist
        g = grad.contiguous().clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


@fill_doc(norm_notes, common_notes)
class SyncBatchNorm(_BatchNorm):
    """Applies Batch Normalization over a N-Dimensional input.

    Batch normalization over (N, C, *) input with statistics synchronized across processes.

    Args:
        {num_features}
        {batch_norm_stats_args}
        process_group (ProcessGroup, optional): synchronization of stats happen within each process
            group individually. Default behavior is synchronization across the whole world.
        {device}
        {dtype}
        {bias}"""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Optional[Any] = None, device: _device_t = None,
                 dtype: _dtype_t = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def _world(self):
        """(process group, world size) to synchronize over, or (None, 1)."""
        from tinytorch import distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            return None, 1
        return self.process_group, dist.get_world_size(self.process_group)   # None: the whole world

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None
        group, world = self._world() if bn_training and self.training else (None, 1)
        if world <= 1:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                                self.eps)
        return self._synchronized(input, running_mean, running_var, factor, group)

    def _synchronized(self, x: Tensor, running_mean, running_var, momentum: float, group: Any) -> Tensor:
        c = x.shape[1]
        dims = [0] + list(range(2, x.dim()))
        shape = [1, c] + [1] * (x.dim() - 2)
        xs = x if x.dtype.itemsize >= 4 else x.float()           # statistics in at least float32
        count = _AllReduceSum.apply(tensor([float(x.numel() // c)], dtype=xs.dtype, device=x.device), group)
        n = float(count.item())
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(x.shape)} on this rank and {int(n)} values per channel in all")
        mean = _AllReduceSum.apply(xs.sum(dims), group) / n                     # (C,)
        centered = xs - mean.reshape(shape)
        var = _AllReduceSum.apply((centered * centered).sum(dims), group) / n    # (C,), biased
        y = centered * (var.reshape(shape) + self.eps).rsqrt()
        if self.weight is not None:
            y = y * self.weight.reshape(shape)
        if self.bias is not None:
            y = y + self.bias.reshape(shape)
        if running_mean is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype), alpha=momentum)
                running_var.mul_(1 - momentum).add_(var.detach().to(running_var.dtype) * (n / (n - 1)),
                                                    alpha=momentum)
        return y.to(x.dtype)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Optional[Any] = None) -> Module:
        """Converts all :attr:`BatchNorm*D` layers in the model to :class:`torch.nn.SyncBatchNorm` layers
        (sharing their parameters and buffers); a BatchNorm module itself gives a new SyncBatchNorm."""
        out = module
        if isinstance(module, _BatchNorm):   # not InstanceNorm: it derives from _NormBase
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
