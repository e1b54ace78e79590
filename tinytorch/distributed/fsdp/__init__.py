"""``tinytorch.distributed.fsdp``: fully sharded data parallelism (PyTorch's FSDP2 API).

``fully_shard(module)`` shards a module's parameters on dim 0 across the ranks, all-gathers them
around its forward and backward, and reduce-scatters its gradients; see ``_fully_shard.py`` and
docs/distributed.md."""
from tinytorch.distributed.fsdp._api import MixedPrecisionPolicy, OffloadPolicy
from tinytorch.distributed.fsdp._fully_shard import FSDPModule, UnshardHandle, fully_shard
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor

__all__ = ["fully_shard", "FSDPModule", "UnshardHandle", "MixedPrecisionPolicy", "OffloadPolicy", "ShardedTensor"]
