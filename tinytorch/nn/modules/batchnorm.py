"""``nn.modules.batchnorm``: PyTorch's module path of the batch normalization layers (defined in
normalization.py, lazy_norm.py and sync_batchnorm.py)."""
from tinytorch.nn.modules.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm  # noqa: F401
from tinytorch.nn.modules.lazy_norm import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401
from tinytorch.nn.modules.sync_batchnorm import SyncBatchNorm  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]
