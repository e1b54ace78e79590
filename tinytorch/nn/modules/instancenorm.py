"""``nn.modules.instancenorm``: PyTorch's module path of the instance normalization layers (defined
in normalization.py and lazy_norm.py)."""
from tinytorch.nn.modules.normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from tinytorch.nn.modules.lazy_norm import (  # noqa: F401
    LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]
