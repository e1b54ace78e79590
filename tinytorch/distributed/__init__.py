"""``tinytorch.distributed``: process groups, collectives, stores and the launcher (PyTorch's names).

Backends: ``mpi`` (CPU tensors, mpi4py) and ``nccl`` (CUDA tensors). See docs/distributed.md."""
from tinytorch.distributed.distributed_c10d import *  # noqa: F401,F403
from tinytorch.distributed.distributed_c10d import __all__ as _c10d_all
from tinytorch.distributed.object_collectives import all_gather_object, broadcast_object_list  # noqa: F401
from tinytorch.distributed.store import FileStore, HashStore, PrefixStore, Store, TCPStore  # noqa: F401
from tinytorch.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: F401

__all__ = list(_c10d_all) + ["all_gather_object", "broadcast_object_list", "Store", "TCPStore", "FileStore", "PrefixStore", "HashStore",
                               "DeviceMesh", "init_device_mesh"]
