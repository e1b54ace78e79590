"""``tinytorch.nn.parallel``: ``DistributedDataParallel`` and ``DataParallel`` (one device at most)."""
from tinytorch.nn.parallel.distributed import DistributedDataParallel  # noqa: F401
from tinytorch.nn.parallel.data_parallel import DataParallel  # noqa: F401

__all__ = ["DistributedDataParallel", "DataParallel"]
