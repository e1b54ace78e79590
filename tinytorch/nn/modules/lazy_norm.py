"""LazyBatchNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d: ``num_features`` read from the first input
(see lazy.py for the mechanism). As PyTorch's, both default to ``affine=True`` and
``track_running_stats=True``."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.creation import tensor
from tinytorch._core.dtype import int64
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules.lazy import LazyModuleMixin, placeholders
from tinytorch.nn.modules.normalization import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
)
from tinytorch._tensor.tensor import Tensor

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


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


class _LazyInstanceNormBase(_LazyNormBase):
    def _channels(self, input: Tensor) -> int:
        return input.shape[input.dim() - self._spatial - 1]   # (N, C, *spatial) or unbatched (C, *spatial)


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """``BatchNorm1d`` whose ``num_features`` is read from the first input."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """``BatchNorm2d`` whose ``num_features`` is read from the first input."""
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """``BatchNorm3d`` whose ``num_features`` is read from the first input."""
    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyInstanceNormBase, InstanceNorm1d):
    """``InstanceNorm1d`` whose ``num_features`` is read from the first input."""
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNormBase, InstanceNorm2d):
    """``InstanceNorm2d`` whose ``num_features`` is read from the first input."""
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNormBase, InstanceNorm3d):
    """``InstanceNorm3d`` whose ``num_features`` is read from the first input."""
    cls_to_become = InstanceNorm3d
