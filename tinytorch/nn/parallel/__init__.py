"""``tinytorch.nn.parallel``: ``DistributedDataParallel``."""
from tinytorch.nn.parallel.distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
