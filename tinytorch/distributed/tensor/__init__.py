"""``tinytorch.distributed.tensor``: the placements (``Shard``, ``Replicate``, ``Partial``) and the
device mesh of PyTorch's ``torch.distributed.tensor``, for tensor parallelism
(:mod:`tinytorch.distributed.tensor.parallel`). There is no ``DTensor``: parallelized modules
hold their local shards as plain tensors. See docs/distributed.md."""
from tinytorch.distributed.device_mesh import DeviceMesh, init_device_mesh
from tinytorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DeviceMesh", "init_device_mesh", "Placement", "Shard", "Replicate", "Partial"]
