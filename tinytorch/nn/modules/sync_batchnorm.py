"""SyncBatchNorm: batch normalization whose training statistics are those of the whole global
batch, all-reduced across the ranks of a ``tinytorch.distributed`` process group.

Each rank all-reduces its (per-channel sum, element count), then its per-channel sum of squared
deviations from the global mean (two passes: steadier than E[x^2] - E[x]^2 in float32), so every
rank normalizes with the same mean and biased variance and updates its running statistics with
the global ones. The all-reduce is differentiable (its backward all-reduces the gradient), so the
input gradient of each rank is that of the sum of all ranks' losses, as PyTorch's
``sync_batch_norm`` backward. Without an initialized process group, with one rank, or in eval
mode it is ``BatchNorm``.

Difference from PyTorch: PyTorch raises ValueError for CPU input in training under an initialized
process group (its kernel is GPU-only); tinytorch synchronizes CPU tensors too (MPI backend)."""
from __future__ import annotations

from typing import Any, Optional

from tinytorch._tensor.creation import tensor
from tinytorch.autograd.function import Function
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.normalization import _BatchNorm
from tinytorch._tensor.tensor import Tensor

__all__ = ["SyncBatchNorm"]


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


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over (N, C, *) input with statistics synchronized across processes."""

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
        if isinstance(module, _BatchNorm) and not _is_instance_norm(module):
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


def _is_instance_norm(module: Module) -> bool:
    # tinytorch's InstanceNorm derives from _BatchNorm (PyTorch's from _NormBase): not converted
    from tinytorch.nn.modules.normalization import _InstanceNorm
    return isinstance(module, _InstanceNorm)
