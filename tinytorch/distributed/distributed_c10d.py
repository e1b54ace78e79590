"""torch.distributed.distributed_c10d's names, from the two modules that define them: process groups
and their initialization (``process_group.py``) and the tensor collectives (``collectives.py``)."""
from tinytorch.distributed.collectives import (ReduceOp, Work, all_gather, all_gather_into_tensor, all_reduce,
                                               barrier, broadcast, irecv, isend, monitored_barrier, recv, reduce,
                                               reduce_scatter_tensor, send)
from tinytorch.distributed.process_group import (Backend, GroupMember, ProcessGroup, destroy_process_group,
                                                 get_backend, get_global_rank, get_group_rank,
                                                 get_process_group_ranks, get_rank, get_world_size, group,
                                                 init_process_group, is_available, is_initialized,
                                                 is_mpi_available, is_nccl_available, is_torchelastic_launched,
                                                 new_group)
from tinytorch.distributed.store import DistBackendError, DistError, DistNetworkError, DistStoreError

__all__ = ["ReduceOp", "Backend", "Work", "ProcessGroup", "GroupMember", "group", "is_available",
           "is_mpi_available", "is_nccl_available", "is_initialized", "is_torchelastic_launched",
           "init_process_group", "destroy_process_group", "new_group", "get_rank", "get_world_size",
           "get_backend", "get_process_group_ranks", "get_global_rank", "get_group_rank", "all_reduce",
           "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "send",
           "recv", "isend", "irecv", "barrier", "monitored_barrier", "DistError", "DistStoreError",
           "DistNetworkError", "DistBackendError"]
