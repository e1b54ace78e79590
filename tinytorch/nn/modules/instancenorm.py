"""Instance normalization: InstanceNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d (``num_features``
read from the first input; see lazy.py for the mechanism)."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules._doc_notes import fill_doc, norm_notes
from tinytorch.nn.modules.batchnorm import _LazyNormBase, _NormBase, _lazy_norm_class

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Per-sample, per-channel normalization over the spatial dims (affine and running statistics
    off by default, as PyTorch's)."""
    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        n = self._spatial
        check_input(self, x, (n + 1, n + 2), -(n + 1), self.num_features, rank_error=ValueError)
        unbatched = x.dim() == n + 1
        out = F.instance_norm(x.unsqueeze(0) if unbatched else x, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats, self.momentum or 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


@fill_doc(norm_notes)
class InstanceNorm1d(_InstanceNorm):
    """Applies Instance Normalization over a 2D (unbatched) or 3D (batched) input.

    Instance normalization over (N, C, L) or (C, L) input.

    Args:
        {instance_norm_args}"""
    _spatial = 1


@fill_doc(norm_notes)
class InstanceNorm2d(_InstanceNorm):
    """Applies Instance Normalization over a 4D input (a mini-batch of 2D inputs with additional channel
    dimension).

    Instance normalization over (N, C, H, W) or (C, H, W) input.

    Args:
        {instance_norm_args}"""
    _spatial = 2


@fill_doc(norm_notes)
class InstanceNorm3d(_InstanceNorm):
    """Applies Instance Normalization over a 5D input (a mini-batch of 3D inputs with additional channel
    dimension).

    Instance normalization over (N, C, D, H, W) or (C, D, H, W) input.

    Args:
        {instance_norm_args}"""
    _spatial = 3


class _LazyInstanceNormBase(_LazyNormBase):
    def _channels(self, input: Tensor) -> int:
        return input.shape[input.dim() - self._spatial - 1]   # (N, C, *spatial) or unbatched (C, *spatial)


LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_norm_class(c, _LazyInstanceNormBase,
                     f"A :class:`torch.nn.{c.__name__}` module with lazy initialization of the ``num_features`` "
                     "argument.")
    for c in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))
